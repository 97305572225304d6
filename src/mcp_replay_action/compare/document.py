"""A changed document (an MCP App's page, any text/html of a megabyte or more:
``normalize.is_document``) told as one finding: both sizes, both digests of the masked text, where
the texts first differ, and a word diff of the region that changed, never a diff of megabytes.

Where they first differ is the first character nothing volatile explains. The masks act before a
document gets here: both sides are masked alike, so the time a page was rendered is
``<timestamp>`` on each and never the first difference. Noise the confirmation pass learned in a
long text is a window (``longtext.py``) that a real change elsewhere keeps from explaining the
finding; ``past_noise`` then moves the finding's first difference over every such window both
texts fit, so a page whose PID varies near its top and whose last word changed points at the word.

Linear in the texts' length, as everything over server text must be: prefixes and suffixes are
slice comparisons (``narrow.common_prefix``/``common_suffix``), and each window's pattern (which
never backtracks, ``tokens.py``) is matched once per text.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import replace

from mcp_replay_action.compare.classes import finding as _classed
from mcp_replay_action.compare.render import RENDER_CAP, window, word_diff
from mcp_replay_action.model.results import Finding
from mcp_replay_action.values.narrow import common_prefix, common_suffix

CHANGED = "document changed: "  # how every document finding's message starts
_CONTEXT = 40  # characters of the diffed region kept before the first difference and after the last


def document_changed(path: str, rule: str, t1: str, t2: str) -> Finding:
    """The finding for a document that changed from ``t1`` (recorded) to ``t2`` (live), both masked."""
    at = common_prefix(t1, t2)
    message, before, after, diff = _told(t1, t2, at, at)
    return _classed(rule, "value-change", path, message, before=before, after=after, diff=diff)


def is_document_finding(finding: Finding) -> bool:
    return finding.message.startswith(CHANGED)


def past_noise(finding: Finding, recorded: str, live: str, windows: Iterable[tuple[int, str]]) -> Finding:
    """``finding`` (a document's, on the masked ``recorded`` and ``live`` texts) told at the first
    difference no learned window (``(head, pattern)``) explains; the same finding when that is the
    first difference already."""
    at = first_unexplained(recorded, live, windows)
    if at[0] == at[1] == common_prefix(recorded, live):
        return finding
    message, before, after, diff = _told(recorded, live, *at)
    return replace(finding, message=message, before=before, after=after, diff=diff)


def first_unexplained(a: str, b: str, windows: Iterable[tuple[int, str]]) -> tuple[int, int]:
    """Where ``a`` and ``b`` first differ outside every window (``(head, pattern)``: a pattern
    learned for the text from its ``head``th character on) both texts fit there, as a position in
    each (a window may be longer in one text). Windows are taken in order of their place; one
    that does not fit either text, or that the difference comes before, explains nothing, and
    the difference found so far stands."""
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


def _told(t1: str, t2: str, at1: int, at2: int) -> tuple[str, str, str, str]:
    """The message, both renderings and the word diff of a document changed at ``at1`` in ``t1``
    and ``at2`` in ``t2``: the region between there and where the texts' ends start to agree."""
    tail = common_suffix(t1, t2, min(len(t1) - at1, len(t2) - at2))
    digests = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()[:16] for t in (t1, t2)]
    message = (
        f"{CHANGED}{len(t1):,} -> {len(t2):,} characters, sha256 {digests[0]} -> {digests[1]}, "
        f"first difference at character {at1}"
    )
    regions = [
        t[max(0, at - _CONTEXT) : min(len(t) - tail + _CONTEXT, at + RENDER_CAP)] for t, at in ((t1, at1), (t2, at2))
    ]
    return message, window(t1, at1), window(t2, at2), word_diff(*regions)
