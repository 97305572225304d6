"""Tool annotation hints read as the MCP spec reads them: an absent hint is its default.

The spec gives each behaviour hint of a tool's ``annotations`` a default (``readOnlyHint`` false,
``destructiveHint`` true, ``idempotentHint`` false, ``openWorldHint`` true), so a hint spelled out
with its default and the same hint left out say the same thing. SDKs differ on which they write
(go-sdk 1.7 started omitting defaults with ``omitempty``), so before the differ runs, a hint equal
to its default is dropped on both sides of a ``tools/list`` answer, and an ``annotations`` object
left empty by that goes too: ``annotations: {"readOnlyHint": false}`` removed is no change at all.
A hint that really changed is classed by ``compare.engine`` (``hint-widened``, ``hint-narrowed``).
"""

from __future__ import annotations

from typing import Any

# The MCP spec's defaults (schema.ts, ToolAnnotations): what a client assumes when a hint is absent.
HINT_DEFAULTS: dict[str, bool] = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}

# A flip towards the right-hand value widens what a tool may do (writes, destroys, reaches the
# outside world) and is breaking; the other way narrows it and is additive.
_WIDENING = {"readOnlyHint": (True, False), "destructiveHint": (False, True), "openWorldHint": (False, True)}


def hint_rule(hint: str, before: Any, after: Any) -> str | None:
    """The class table's row for a hint that went from ``before`` to ``after`` (None: absent, read
    as its default): ``hint-widened``, ``hint-narrowed``, or None when they mean the same."""
    old = HINT_DEFAULTS[hint] if before is None else before
    new = HINT_DEFAULTS[hint] if after is None else after
    if old == new:
        return None
    return "hint-widened" if _WIDENING.get(hint) == (old, new) else "hint-narrowed"


def settle_hints(before: Any, after: Any) -> None:
    """Drop default-valued hints from the tools of two normalised answers, in place; where one
    side of a tool has ``annotations`` and the other none, the other gets an empty object, so what
    is left is compared hint by hint (``{"readOnlyHint": true}`` removed is a widening, not a
    removed key), and an object left empty on both sides goes. Only plain dicts are touched: a
    shared subtree is equal on both sides already."""
    for tool_a, tool_b in _tool_pairs(before, after):
        had_a, had_b = _drop_defaults(tool_a), _drop_defaults(tool_b)
        if had_a and "annotations" not in tool_b:
            tool_b["annotations"] = {}
        if had_b and "annotations" not in tool_a:
            tool_a["annotations"] = {}
        if tool_a.get("annotations") == {} and tool_b.get("annotations") == {}:
            del tool_a["annotations"], tool_b["annotations"]


def _tools(body: Any) -> Any:
    result = body.get("result") if isinstance(body, dict) else None
    return result.get("tools") if isinstance(result, dict) else None


def _tool_pairs(before: Any, after: Any) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The tools of two ``tools/list`` answers side by side: by name (a normalised named list is a
    dict), else by position."""
    a, b = _tools(before), _tools(after)
    if isinstance(a, dict) and isinstance(b, dict):
        pairs = [(a[k], b[k]) for k in a.keys() & b.keys()]
    elif isinstance(a, list) and isinstance(b, list):
        pairs = list(zip(a, b, strict=False))
    else:
        return []
    return [(x, y) for x, y in pairs if type(x) is dict and type(y) is dict]


def _drop_defaults(tool: dict[str, Any]) -> bool:
    """Drop ``tool``'s hints equal to their defaults; whether it has an ``annotations`` object."""
    annotations = tool.get("annotations")
    if type(annotations) is not dict:
        return False
    for hint, default in HINT_DEFAULTS.items():
        if annotations.get(hint) is default:
            del annotations[hint]
    return True
