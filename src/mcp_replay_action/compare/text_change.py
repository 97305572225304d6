"""A long text that changed, told as one finding at the first difference nothing volatile explains.

Three shapes, each with where the texts first differ: a document (an MCP App's page, any
text/html of a megabyte or more: ``normalize.is_document``) with both sizes, both digests of the
masked text and a word diff of the region that changed, never a diff of megabytes; text of several
lines with a unified diff; one long line with a window around the difference on each side and, for
prose, a word diff of those windows.

Where they first differ is the first character nothing volatile explains. The masks act before a
text gets here: both sides are masked alike, so the time a page was rendered is ``<timestamp>`` on
each and never the first difference. Noise the confirmation pass learned in a long text is a
window (``longtext.py``) that a real change elsewhere keeps from explaining the finding;
``past_noise`` then tells the finding again at the first difference outside every window both
texts fit (``longtext.first_unexplained``), so a page whose PID varies near its top and whose last
word changed points at the word; a shorter text's learned pattern is read the same way
(``tokens.first_unfit``). Linear in a long text's length.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import replace
from typing import Literal

from mcp_replay_action.compare.classes import finding as _classed
from mcp_replay_action.compare.longtext import first_unexplained
from mcp_replay_action.compare.render import BRIEF_CAP, RENDER_CAP, brief, text_diff, window, word_diff
from mcp_replay_action.compare.tokens import first_unfit
from mcp_replay_action.model.results import Finding
from mcp_replay_action.values.narrow import common_prefix, common_suffix

Shape = Literal["document", "lines", "line"]
# How each shape's message starts (``past_noise`` reads the shape back from it).
_STARTS: dict[Shape, str] = {
    "document": "document changed: ",
    "lines": "text changed (",
    "line": "value changed at character ",
}
_CONTEXT = 40  # characters of a document's diffed region kept before its first difference and after its last


def shape_of(t1: str, t2: str, document: bool) -> Shape:
    return "document" if document else "lines" if "\n" in t1 or "\n" in t2 else "line"


def text_changed(path: str, rule: str, t1: str, t2: str, document: bool = False) -> Finding:
    """The finding for a long text (or a ``document``) changed from ``t1`` (recorded) to ``t2``
    (live), both masked."""
    at = common_prefix(t1, t2)
    message, before, after, diff = _told(shape_of(t1, t2, document), t1, t2, at, at)
    return _classed(rule, "value-change", path, message, before=before, after=after, diff=diff)


def past_noise(
    finding: Finding,
    recorded: str,
    live: str,
    windows: Iterable[tuple[int, str]] = (),
    patterns: Iterable[str] = (),
) -> Finding:
    """``finding`` (a long text's, on the masked ``recorded`` and ``live`` texts) told at the first
    difference no learned noise explains: no window of a long text (``(head, pattern)``) and no
    pattern of a whole text (``tokens.first_unfit``); the same finding when that is the first
    difference already, or when ``finding`` is not a long text's."""
    shape = next((s for s, start in _STARTS.items() if finding.message.startswith(start)), None)
    if shape is None:
        return finding
    first = common_prefix(recorded, live)
    at = first_unexplained(recorded, live, windows)
    for pattern in patterns if at == (first, first) else ():
        at = first_unfit(recorded, live, pattern) or at
    if at == (first, first):
        return finding
    message, before, after, diff = _told(shape, recorded, live, *at, past=True)
    return replace(finding, message=message, before=before, after=after, diff=diff)


def _told(shape: Shape, t1: str, t2: str, at1: int, at2: int, *, past: bool = False) -> tuple[str, str, str, str]:
    """The message, both renderings and the diff of a text changed at ``at1`` in ``t1`` and
    ``at2`` in ``t2`` (``past``: past the first difference, which learned noise explains)."""
    before, after = window(t1, at1), window(t2, at2)
    if shape == "lines":
        lines = t1.count("\n") + 1, t2.count("\n") + 1
        message = f"{_STARTS['lines']}{lines[0]} -> {lines[1]} lines, first difference at character {at1})"
        return message, before, after, text_diff(t1, t2, (at1, at2) if past else None)
    if shape == "line":
        # A window around the first difference on both sides (never the same cut prefix twice)
        # as the changed line of a unified diff, and for prose a word-level diff of those
        # windows under it (``?``, as pytest marks a line).
        diff = f"-{before}\n+{after}"
        if " " in t1 or " " in t2:
            diff += "\n? " + word_diff(before, after)
        shown = BRIEF_CAP - 8
        message = f"{_STARTS['line']}{at1}: {brief(window(t1, at1, shown))} -> {brief(window(t2, at2, shown))}"
        return message, before, after, diff
    # A document: the region between the first difference and where the texts' ends agree.
    tail = common_suffix(t1, t2, min(len(t1) - at1, len(t2) - at2))
    digests = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest()[:16] for t in (t1, t2)]
    message = (
        f"{_STARTS['document']}{len(t1):,} -> {len(t2):,} characters, sha256 {digests[0]} -> {digests[1]}, "
        f"first difference at character {at1}"
    )
    regions = [
        t[max(0, at - _CONTEXT) : min(len(t) - tail + _CONTEXT, at + RENDER_CAP)] for t, at in ((t1, at1), (t2, at2))
    ]
    return message, before, after, word_diff(*regions)
