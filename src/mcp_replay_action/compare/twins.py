"""One change carried twice is one finding.

The official Python SDK sends a tool's answer twice: a returned dict as ``structuredContent`` and
again as JSON text in ``content[i].text``, a returned string or number as
``structuredContent: {"result": N}`` and as the text ``"N"``. A changed value then differs at
both places; the user changed one thing, and the report says so once: the finding in the text
is dropped when ``structuredContent`` has its twin (the same place under it, the same kind and
rule, the same values as the text spells them), and the twin names it in ``also``.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from mcp_replay_action.model.results import Finding

STRUCTURED = "$.result.structuredContent"
_TEXT_TWIN = re.compile(r"\$\.result\.content\[\d+\]\.text\{json\}")  # anchored: linear
_PLAIN_TEXT_TWIN = re.compile(r"\$\.result\.content\[\d+\]\.text")

_Key = tuple[str, str, str, str, str]


def merge_twins(findings: list[Finding]) -> list[Finding]:
    """``findings`` with every finding in a tool result's text that has a twin in its
    ``structuredContent`` merged into that twin (see the module docstring)."""
    twins: dict[_Key, int] = {}
    for i, f in enumerate(findings):
        if f.path.startswith(STRUCTURED):
            twins.setdefault(_key(f, f.path[len(STRUCTURED) :]), i)
    if not twins:
        return findings
    out: list[Finding | None] = list(findings)
    for i, f in enumerate(findings):
        match = _TEXT_TWIN.match(f.path)
        if match:
            rest: str | None = f.path[match.end() :]
        else:  # a returned string or number: the SDK sends it as the text and as structuredContent.result
            rest = ".result" if _PLAIN_TEXT_TWIN.fullmatch(f.path) else None
        j = twins.get(_key(f, rest)) if rest is not None else None
        twin = out[j] if j is not None else None
        if twin is not None:
            out[j] = replace(twin, also=(*twin.also, f.path))  # type: ignore[index]
            out[i] = None
    return [f for f in out if f is not None]


def _key(f: Finding, rest: str) -> _Key:
    return rest, f.kind, f.rule, _spelled(f.before), _spelled(f.after)


def _spelled(value: Any) -> str:
    """A value as a text spells it: a string as it is, anything else as JSON (``2``, ``true``)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        return repr(value)
