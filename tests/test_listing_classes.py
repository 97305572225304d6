"""Listing changes take the class table's rows (``compare/listing.py``): a prompt's argument that
becomes required, or a required one added, is ``required-added`` like a tool's; one that no
longer is, ``required-dropped``; a listed item's description reworded is ``description-changed``
(cosmetic), removed or blank ``description-dropped`` (additive). The listing diff mcp-server-diff
gives is the floor: every change of a listing is a finding with a class (docs/baseline.md)."""

from __future__ import annotations

import copy
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
            "cosmetic",
        ),
    ],
)
def test_a_listing_change_takes_its_row(before: dict[str, Any], after: dict[str, Any], rule: str, cls: str) -> None:
    findings = compare(before, after, NO_OPTIONS)
    assert [(f.rule, f.cls) for f in findings] == [(rule, cls)], findings


def listed(kind: str, item: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {kind: [item]}}


ITEMS = {
    "tools": {"name": "add", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}}},
    "prompts": {"name": "greet", "arguments": [{"name": "who"}]},
    "resources": {"uri": "memo://readme", "name": "readme"},
    "resourceTemplates": {"uriTemplate": "memo://{name}", "name": "memo"},
}
# Where a description sits in each kind of item: the item's own, and one of its parts'.
PLACES = {
    "tools": (("description",), ("inputSchema", "properties", "a", "description")),
    "prompts": (("description",), ("arguments", 0, "description")),
    "resources": (("description",),),
    "resourceTemplates": (("description",),),
}
CASES = [(kind, place) for kind, places in PLACES.items() for place in places]


def described(kind: str, place: tuple[Any, ...], text: Any) -> dict[str, Any]:
    """The item of ``kind`` with ``text`` as the description at ``place`` (none when ``...``)."""
    item = copy.deepcopy(ITEMS[kind])
    node = item
    for step in place[:-1]:
        node = node[step]
    if text is not ...:
        node[place[-1]] = text
    return listed(kind, item)


@pytest.mark.parametrize(("kind", "place"), CASES, ids=[f"{k}:{'.'.join(map(str, p))}" for k, p in CASES])
@pytest.mark.parametrize(
    ("before", "after", "rule", "cls"),
    [
        ("Look it up.", "Look a word up.", "description-changed", "cosmetic"),  # reworded
        (..., "Look it up.", "description-changed", "cosmetic"),  # written where there was none
        ("", "Look it up.", "description-changed", "cosmetic"),
        ("Look it up.", ..., "description-dropped", "additive"),  # removed
        ("Look it up.", "", "description-dropped", "additive"),  # left blank
        ("Look it up.", " \n", "description-dropped", "additive"),
        ("Look it up.", None, "type-changed", "breaking"),  # a client reading a string may refuse it
    ],
)
def test_a_listed_description_is_prose_and_one_dropped_is_told(
    kind: str, place: tuple[Any, ...], before: Any, after: Any, rule: str, cls: str
) -> None:
    findings = compare(described(kind, place, before), described(kind, place, after), NO_OPTIONS)
    assert [(f.rule, f.cls) for f in findings] == [(rule, cls)], findings
    assert findings[0].path.endswith(".description"), findings


def test_a_description_outside_a_listing_is_metadata_text() -> None:
    # A prompts/get answer's description and the server's: text for people, however it changes.
    got = {"jsonrpc": "2.0", "id": 1, "result": {"description": "Greet.", "messages": []}}
    for after in ("Greet someone.", ""):
        changed = copy.deepcopy(got)
        changed["result"]["description"] = after
        assert [(f.rule, f.cls) for f in compare(got, changed, NO_OPTIONS)] == [("metadata-text", "cosmetic")]
    gone = copy.deepcopy(got)
    del gone["result"]["description"]
    assert [(f.rule, f.cls) for f in compare(got, gone, NO_OPTIONS)] == [("metadata-text", "cosmetic")]


def test_a_property_named_description_is_a_property() -> None:
    # An outputSchema property called ``description`` is a field a client reads, not prose.
    schema = {"type": "object", "properties": {"description": {"type": "string"}}}
    before = tools({"name": "a", "outputSchema": schema})
    after = tools({"name": "a", "outputSchema": {"type": "object", "properties": {}}})
    assert [(f.rule, f.cls) for f in compare(before, after, NO_OPTIONS)] == [("key-removed", "breaking")]
