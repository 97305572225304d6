"""Listing changes take the class table's rows (``compare/listing.py``): a prompt's argument that
becomes required, or a required one added, is ``required-added`` like a tool's; one that no
longer is, ``required-dropped``. The listing diff mcp-server-diff gives is the floor: every change
of a listing is a finding with a class (docs/baseline.md)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_replay_action.compare.engine import CompareOptions, compare

pytestmark = pytest.mark.unit

NO_OPTIONS = CompareOptions()


def prompts(*arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"prompts": [{"name": "greet", "arguments": list(arguments)}]}}


def tools(*listed: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"tools": list(listed)}}


WHO = {"name": "who", "required": True}
TONE = {"name": "tone"}


@pytest.mark.parametrize(
    ("before", "after", "rule", "cls"),
    [
        (prompts(WHO), prompts(WHO, {"name": "lang", "required": True}), "required-added", "breaking"),
        (prompts(WHO), prompts(WHO, {"name": "lang", "required": False}), "tool-added", "additive"),
        (prompts(WHO, TONE), prompts(WHO, {**TONE, "required": True}), "required-added", "breaking"),
        (
            prompts(WHO, {**TONE, "required": False}),
            prompts(WHO, {**TONE, "required": True}),
            "required-added",
            "breaking",
        ),
        (prompts(WHO, TONE), prompts({**WHO, "required": False}, TONE), "required-dropped", "additive"),
        (prompts(WHO, TONE), prompts({"name": "who"}, TONE), "required-dropped", "additive"),
        (prompts(WHO, TONE), prompts(WHO), "tool-removed", "breaking"),
        (
            tools({"name": "a", "inputSchema": {"type": "object"}}),
            tools({"name": "a", "inputSchema": {"type": "object"}}, {"name": "b", "inputSchema": {"type": "object"}}),
            "tool-added",
            "additive",
        ),
        (
            tools({"name": "a"}, {"name": "b"}),
            tools({"name": "a"}),
            "tool-removed",
            "breaking",
        ),
        (
            tools({"name": "a", "description": "Add."}),
            tools({"name": "a", "description": "Add two numbers."}),
            "description-changed",
            "additive",
        ),
    ],
)
def test_a_listing_change_takes_its_row(before: dict[str, Any], after: dict[str, Any], rule: str, cls: str) -> None:
    findings = compare(before, after, NO_OPTIONS)
    assert [(f.rule, f.cls) for f in findings] == [(rule, cls)], findings
