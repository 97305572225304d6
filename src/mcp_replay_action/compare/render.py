"""How a difference is shown: short renderings of the values on each side (boxes opened, named
and aligned lists turned back into lists, capped), quoted names, and bounded diffs of text (a
unified diff of lines, or a word diff of one long line), never megabytes in a finding.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from mcp_replay_action.compare.normalize import BOX_TYPES, Aligned, Keyed, PartKeyed, Same

RENDER_CAP = 200  # before/after renderings
BRIEF_CAP = 60  # values quoted inside a message
DIFF_MAX_LINES = 40
DIFF_MAX_BYTES = 4096
DIFF_LINE_CAP = 240
DIFFLIB_MAX_LINES = 2000  # beyond this, the unified diff starts at the first changed line


# -- rendering --------------------------------------------------------------------------------


def cap(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def unbox(value: Any, depth: int = 0) -> Any:
    """Plain JSON for display: boxes opened, named and aligned lists turned back into lists."""
    if depth > 64:
        return "…"
    if type(value) is Same:
        return unbox(value.value(), depth)
    if type(value) is PartKeyed:  # a named list rendered whole, its shared stretches too
        return unbox(value.whole(), depth)
    if isinstance(value, BOX_TYPES):
        return unbox(next(iter(value.values()), None), depth + 1)
    if isinstance(value, (Keyed, Aligned)):
        return [unbox(v, depth + 1) for v in value.values()]
    if isinstance(value, dict):
        return {k: unbox(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [unbox(v, depth + 1) for v in value]
    return value


def json_text(value: Any, limit: int) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        text = repr(value)
    return cap(text, limit)


def render(value: Any, limit: int = RENDER_CAP) -> Any:
    """A short rendering: small scalars as they are, anything else as capped JSON text."""
    value = unbox(value)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return cap(value, limit)
    return json_text(value, limit)


def brief(value: Any, limit: int = BRIEF_CAP) -> str:
    return json_text(unbox(value), limit)


def quoted(value: Any) -> str:
    """A key, tool or argument name quoted for a message: 'add'."""
    return "'" + cap(str(value), BRIEF_CAP) + "'"


def text_diff(before: str, after: str, at: tuple[int, int] | None = None) -> str:
    """A unified diff of two texts, capped in lines, bytes and line width. ``at``: where the
    difference to show is in each text (characters), when it is not the first one (the lines
    above it differ by learned noise): the diff starts two lines above it."""
    a, b = before.splitlines(), after.splitlines()
    start = 0  # the index of the first line shown: both texts are cut there
    if at is not None:
        start = max(0, min(_line_of(before, at[0]), _line_of(after, at[1])) - 2)
    if len(a) + len(b) - 2 * start > DIFFLIB_MAX_LINES:
        # difflib can be quadratic: start at the first changed line and bound the window.
        pairs = zip(a[start:], b[start:], strict=False)
        first = start + next((i for i, (x, y) in enumerate(pairs) if x != y), min(len(a), len(b)) - start)
        start = max(start, first - 2)
        a, b = a[start : start + DIFFLIB_MAX_LINES // 2], b[start : start + DIFFLIB_MAX_LINES // 2]
    elif start:
        a, b = a[start:], b[start:]
    note = f"(from line {start + 1})" if start else ""
    out: list[str] = [note] if note else []
    size = len(note)
    for line in difflib.unified_diff(a, b, "recorded", "live", lineterm="", n=2):
        line = cap(line, DIFF_LINE_CAP)
        if len(out) >= DIFF_MAX_LINES or size + len(line) + 1 > DIFF_MAX_BYTES:
            out.append("… (diff truncated)")
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def _line_of(text: str, at: int) -> int:
    """The index of the line (as ``splitlines`` cuts them) that holds character ``at``."""
    head = text[:at].splitlines(keepends=True)
    return len(head) - (1 if head and head[-1].splitlines()[0] == head[-1] else 0)


WORDS = re.compile(r"\s+|\w+|[^\w\s]")


def word_diff(before: str, after: str) -> str:
    """A word-level diff of one line of prose: ``[-removed-]{+added+}`` around the words that
    changed, the rest as it is (git's ``--word-diff=plain``)."""
    a, b = WORDS.findall(before), WORDS.findall(after)
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append("".join(a[i1:i2]))
            continue
        if i2 > i1:
            out.append("[-" + "".join(a[i1:i2]) + "-]")
        if j2 > j1:
            out.append("{+" + "".join(b[j1:j2]) + "+}")
    return cap("".join(out), DIFF_MAX_BYTES)


def window(text: str, at: int, limit: int = RENDER_CAP) -> str:
    """Up to ``limit`` characters of ``text`` around position ``at``, with ellipses where cut."""
    if len(text) <= limit:
        return text
    start = max(0, min(at - limit // 4, len(text) - limit))
    piece = text[start : start + limit]
    return ("…" if start else "") + piece + ("…" if start + limit < len(text) else "")
