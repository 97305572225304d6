"""Noise at the token in a long text (a document, a long page of prose): the live texts are narrowed
to the window where they differ before any token is lined up.

A token diff of megabytes is quadratic, so a text longer than ``noise.LEARN_MAX_CHARS`` is first
cut, at C speed, to what lies between the prefix and the suffix every live text shares
(``narrow.common_prefix``/``common_suffix``), widened to whole words. When that window is short
(``WINDOW_MAX_CHARS``: one place varies, a PID or a render id in a page), its tokens are learned as
any text's are (``tokens.text_pattern``); a window as long as the text (two far-apart places) is
not learned, and what differs there still gates.

A rule so learned holds the window's place (``head``: characters before it, ``tail``: after it) and
explains a finding only beside the live text: the recorded and the live text share those
``head`` and ``tail`` characters exactly (a changed byte anywhere else still fails), and the
window of each fits the pattern. A finding such a window does not explain (a real change
elsewhere) is told at the first difference outside it (``first_unexplained``), not at what varied.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mcp_replay_action.compare.tokens import Learned, text_pattern
from mcp_replay_action.values.narrow import common_prefix, common_suffix

WINDOW_MAX_CHARS = 1 << 14
_WIDEN = 256  # at most this many characters given back to reach a word's edge


@dataclass(frozen=True)
class Window:
    """Where long live texts differ (``head`` and ``tail`` characters around it), and what varied."""

    head: int
    tail: int
    learned: Learned


def learn_window(texts: Sequence[str]) -> Window | None:
    """The window of ``texts`` (two or more) where they differ, learned; None when it is long."""
    first = texts[0]
    head = min(common_prefix(first, t) for t in texts[1:])
    tail = min(common_suffix(first, t, min(len(first), len(t)) - head) for t in texts[1:])
    for _ in range(_WIDEN):
        if head == 0 or not first[head - 1].isalnum():
            break
        head -= 1
    for _ in range(_WIDEN):
        if tail == 0 or not first[len(first) - tail].isalnum():
            break
        tail -= 1
    middles = [t[head : len(t) - tail] for t in texts]
    if max(map(len, middles)) > WINDOW_MAX_CHARS:
        return None
    return Window(head, tail, text_pattern(middles))


def window_fits(recorded: str, live: str, head: int, tail: int, pattern: str) -> bool:
    """Whether ``recorded`` and ``live`` share their first ``head`` and last ``tail`` characters
    and the window between fits ``pattern`` in each (linear: slice comparisons and a pattern
    that never backtracks)."""
    for text in (recorded, live):
        if len(text) < head + tail:
            return False
    if recorded[:head] != live[:head] or recorded[len(recorded) - tail :] != live[len(live) - tail :]:
        return False
    return all(
        re.fullmatch(pattern, t[head : len(t) - tail], re.DOTALL) is not None
        and len(t) - head - tail <= WINDOW_MAX_CHARS
        for t in (recorded, live)
    )


def first_unexplained(a: str, b: str, windows: Iterable[tuple[int, str]]) -> tuple[int, int]:
    """Where ``a`` and ``b`` first differ outside every window (``(head, pattern)``: a pattern
    learned for the text from its ``head``th character on) both texts fit there, as a position in
    each (a window may be longer in one text). Windows are taken in order of their place; one
    that does not fit either text, or that the difference comes before, explains nothing, and
    the difference found so far stands. Linear: slice comparisons, and each window's pattern
    (which never backtracks) matched once per text."""
    i = j = common_prefix(a, b)
    for head, pattern in sorted(windows):
        start = head + (j - i)  # where the window starts in ``b``: past what earlier windows shifted
        if head > i or start < 0:
            break  # the texts differ before this window: nothing it holds explains that
        compiled = re.compile(pattern, re.DOTALL)
        in_a, in_b = compiled.match(a, head), compiled.match(b, start)
        if in_a is None or in_b is None:
            break
        end_a, end_b = in_a.end(), in_b.end()
        if end_a < i or end_b < j:
            continue  # the window closed before the difference: it is further on
        same = common_prefix(a[end_a:], b[end_b:])
        if end_a + same == len(a) and end_b + same == len(b):
            break  # nothing differs past the window: what differs is inside it, shown as found
        i, j = end_a + same, end_b + same
    return i, j
