"""Comparison: every kind and class of finding, paths, caps, and compare(x, x) == ()."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_replay_action.compare.engine import (
    MAX_FINDINGS,
    CompareOptions,
    compare,
    compare_normal,
    differences,
    status_for,
)
from mcp_replay_action.compare.matchers import same_json, unchanged
from mcp_replay_action.compare.normalize import canonical, normalize
from mcp_replay_action.compare.pairing import normalize_pair
from mcp_replay_action.compare.render import DIFF_MAX_BYTES, DIFF_MAX_LINES
from mcp_replay_action.model.results import CLASS_ORDER, Finding
from profiles import examples

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]

NO_OPTIONS = CompareOptions()


def ok(result: Any, msg_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def err(code: int, message: str, msg_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def text_result(*texts: str, **extra: Any) -> dict[str, Any]:
    return ok({"content": [{"type": "text", "text": t} for t in texts], **extra})


def one(findings: tuple[Finding, ...]) -> Finding:
    assert len(findings) == 1, findings
    return findings[0]


TOOLS = [
    {
        "name": "add",
        "description": "Add two numbers",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
    {"name": "echo", "description": "Echo", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "sleep", "description": "Sleep", "inputSchema": {"type": "object", "properties": {}}},
]


def tools_result(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return ok({"tools": tools})


# -- the seed's two regressions -----------------------------------------------------------------


def test_seed_added_key_is_structure_change() -> None:
    recorded = text_result("5")
    live = copy.deepcopy(recorded)
    live["result"]["echoed"] = {"a": 2, "b": 3}
    finding = one(compare(recorded, live, NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("structure-change", "additive", "$.result.echoed")
    assert finding.message == "key 'echoed' added"
    assert status_for((finding,)) == "fail"


def test_seed_changed_text_is_value_change() -> None:
    finding = one(compare(text_result("5"), text_result("6"), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("value-change", "breaking", "$.result.content[0].text")
    assert (finding.before, finding.after) == ("5", "6")
    assert '"5" -> "6"' in finding.message


# -- missing and error flips ------------------------------------------------------------------


def test_missing_response() -> None:
    finding = one(compare(text_result("5"), None, NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("missing-response", "breaking", "$")
    assert status_for((finding,)) == "missing"
    assert compare(None, None, NO_OPTIONS) == ()


def test_response_where_none_was_recorded() -> None:
    finding = one(compare(None, text_result("5"), NO_OPTIONS))
    assert (finding.kind, finding.cls) == ("structure-change", "additive")


def test_result_became_error_is_one_finding() -> None:
    finding = one(compare(text_result("5"), err(-32602, "Invalid params"), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("error-status-change", "breaking", "$")
    assert "-32602 Invalid params" in finding.message


def test_error_became_result() -> None:
    finding = one(compare(err(-32601, "Method not found"), ok({}), NO_OPTIONS))
    assert finding.kind == "error-status-change"
    assert "an error became a result" in finding.message


def test_error_code_change_is_value_change() -> None:
    finding = one(compare(err(-32602, "bad"), err(-32603, "bad"), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("value-change", "breaking", "$.error.code")


def test_same_error_matches() -> None:
    assert compare(err(-32602, "bad", 1), err(-32602, "bad", 7), NO_OPTIONS) == ()


def test_tool_is_error_flip() -> None:
    finding = one(compare(text_result("5"), text_result("boom", isError=True), NO_OPTIONS))
    assert (finding.kind, finding.path) == ("error-status-change", "$.result.isError")
    back = one(compare(text_result("boom", isError=True), text_result("5", isError=False), NO_OPTIONS))
    assert back.kind == "error-status-change"


def test_is_error_false_equals_absent() -> None:
    assert compare(text_result("5", isError=False), text_result("5"), NO_OPTIONS) == ()


# -- envelope and ids -------------------------------------------------------------------------


def test_envelope_id_and_jsonrpc_are_not_compared() -> None:
    assert compare(ok({"a": 1}, 1), {"jsonrpc": "2.0", "id": "other", "result": {"a": 1}}, NO_OPTIONS) == ()


def test_id_keys_inside_results_are_compared() -> None:
    finding = one(compare(ok({"items": [{"id": 1}]}), ok({"items": [{"id": 2}]}), NO_OPTIONS))
    assert (finding.kind, finding.path) == ("value-change", "$.result.items[0].id")
    json_text = text_result(json.dumps({"id": "a"}))
    finding = one(compare(json_text, text_result(json.dumps({"id": "b"})), NO_OPTIONS))
    assert finding.path == "$.result.content[0].text{json}.id"


# -- structure ----------------------------------------------------------------------------------


def test_removed_key_is_breaking() -> None:
    finding = one(compare(ok({"a": 1, "b": 2}), ok({"a": 1}), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("structure-change", "breaking", "$.result.b")
    assert finding.message == "key 'b' removed"


def test_type_change_is_breaking_structure_change() -> None:
    finding = one(compare(ok({"a": "1"}), ok({"a": 1}), NO_OPTIONS))
    assert (finding.kind, finding.cls) == ("structure-change", "breaking")
    assert finding.message == 'type changed from string to number: "1" -> 1'
    finding = one(compare(ok({"a": True}), ok({"a": 1}), NO_OPTIONS))
    assert finding.message == "type changed from boolean to number: true -> 1"


def test_json_text_becoming_plain_text_is_a_type_change() -> None:
    finding = one(compare(text_result('{"a": 1}'), text_result("a=1"), NO_OPTIONS))
    assert finding.kind == "structure-change"
    assert finding.message == 'type changed from JSON text to string: {"a": 1} -> "a=1"'


def test_numbers_compare_by_value() -> None:
    assert compare(ok({"a": 1, "b": [2.0]}), ok({"a": 1.0, "b": [2]}), NO_OPTIONS) == ()
    finding = one(compare(ok({"a": 1}), ok({"a": 1.5}), NO_OPTIONS))
    assert finding.kind == "value-change"


def test_key_order_never_matters() -> None:
    assert compare(ok({"a": 1, "b": {"c": 1, "d": 2}}), ok({"b": {"d": 2, "c": 1}, "a": 1}), NO_OPTIONS) == ()


def test_list_item_removed_in_the_middle_is_one_finding() -> None:
    recorded = text_result("one", "two", "three")
    live = text_result("one", "three")
    finding = one(compare(recorded, live, NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("structure-change", "breaking", "$.result.content[1]")
    assert finding.message == "list item removed"


def test_list_item_added_is_additive() -> None:
    finding = one(compare(text_result("one"), text_result("zero", "one"), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("structure-change", "additive", "$.result.content[0]")


def test_a_changed_item_among_equal_ones_is_changed_in_place() -> None:
    # The items equal at both ends line up with each other, as in a line diff; only those between
    # are lined up by content. [x, y, x] -> [x, x, x] is item 1 changed, not y removed and one
    # more x added after it (what difflib over the whole list says).
    x, y = {"v": "x", "n": 1}, {"v": "y", "n": 1}
    for options in (NO_OPTIONS, CompareOptions(allow_reorder=True)):
        finding = one(compare(ok({"rows": [x, y, x]}), ok({"rows": [x, x, x]}), options))
        assert (finding.kind, finding.path, finding.message) == (
            "value-change",
            "$.result.rows[1].v",
            'value changed: "y" -> "x"',
        )


def test_changes_far_apart_in_a_long_plain_list_are_found_where_they_are() -> None:
    rows = [{"seq": i, "tags": ["a", i % 3]} for i in range(600)]
    live = copy.deepcopy(rows)
    live[3]["tags"][1] = "changed"
    live.insert(400, {"seq": -1, "tags": []})
    del live[590]
    found = {(f.path, f.message) for f in compare(ok({"rows": rows}), ok({"rows": live}), NO_OPTIONS)}
    assert found == {
        ("$.result.rows[3].tags[1]", 'type changed from number to string: 0 -> "changed"'),
        ("$.result.rows[400]", "list item added"),
        ("$.result.rows[589]", "list item removed"),
    }


_DISTINCT_ROWS = st.lists(st.integers(0, 40), min_size=2, max_size=30, unique=True)


@settings(max_examples=examples(200), deadline=None)
@given(_DISTINCT_ROWS, st.data(), st.booleans())
def test_items_all_distinct_line_up_as_difflib_over_the_whole_list_does(
    keys: list[int], data: st.DataObject, reorder: bool
) -> None:
    # Where no item repeats, lining up the equal ends first changes nothing: the findings are
    # those of lining up the whole list by content (``_equal_ends`` made to find no equal end).
    from mcp_replay_action.compare import engine

    rows = [{"k": k, "v": [k, "x"]} for k in keys]
    live = copy.deepcopy(rows)
    for n in range(data.draw(st.integers(1, 3))):
        edit = data.draw(st.sampled_from(["change", "insert", "remove", "swap"]))
        at = data.draw(st.integers(0, len(live) - 1)) if live else 0
        if edit == "change" and live:
            live[at]["v"][1] = "y"
        elif edit == "insert":
            live.insert(at, {"k": 100 + n, "v": [n, "z"]})
        elif edit == "remove" and len(live) > 1:
            del live[at]
        elif edit == "swap" and len(live) > 1:
            live[0], live[-1] = live[-1], live[0]
    options = CompareOptions(allow_reorder=reorder)
    trimmed = compare(ok({"rows": rows}), ok({"rows": live}), options)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_equal_ends", lambda a, b: (0, 0))
        whole = compare(ok({"rows": rows}), ok({"rows": live}), options)
    assert trimmed == whole


# -- named lists ------------------------------------------------------------------------------


def test_removed_tool_is_one_finding_naming_it() -> None:
    finding = one(compare(tools_result(TOOLS), tools_result(TOOLS[1:]), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("structure-change", "breaking", "$.result.tools[name=add]")
    assert finding.message == "tool 'add' removed"


def test_new_tool_is_additive() -> None:
    extra = {"name": "mul", "inputSchema": {"type": "object"}}
    finding = one(compare(tools_result(TOOLS), tools_result([*TOOLS, extra]), NO_OPTIONS))
    assert (finding.cls, finding.path, finding.message) == ("additive", "$.result.tools[name=mul]", "tool 'mul' added")


def test_tool_change_path_uses_identity() -> None:
    live = copy.deepcopy(TOOLS)
    live[2]["inputSchema"]["properties"]["ms"] = {"type": "integer"}
    finding = one(compare(tools_result(TOOLS), tools_result(live), NO_OPTIONS))
    assert finding.path == "$.result.tools[name=sleep].inputSchema.properties.ms"
    assert (finding.kind, finding.cls) == ("structure-change", "additive")  # an optional argument


def test_new_required_argument_is_breaking_and_reported_once() -> None:
    live = copy.deepcopy(TOOLS)
    live[0]["inputSchema"]["properties"]["c"] = {"type": "number"}
    live[0]["inputSchema"]["required"].append("c")
    finding = one(compare(tools_result(TOOLS), tools_result(live), NO_OPTIONS))
    assert (finding.cls, finding.path) == ("breaking", "$.result.tools[name=add].inputSchema.properties.c")
    assert finding.message == "required argument 'c' added"


def test_existing_argument_becoming_required_is_breaking() -> None:
    recorded = copy.deepcopy(TOOLS)
    recorded[0]["inputSchema"]["required"] = ["a"]
    finding = one(compare(tools_result(recorded), tools_result(TOOLS), NO_OPTIONS))
    assert (finding.cls, finding.message) == ("breaking", "argument 'b' became required")
    back = one(compare(tools_result(TOOLS), tools_result(recorded), NO_OPTIONS))
    assert (back.cls, back.message) == ("additive", "argument 'b' is no longer required")


def test_removed_argument_is_breaking() -> None:
    live = copy.deepcopy(TOOLS)
    del live[0]["inputSchema"]["properties"]["b"]
    live[0]["inputSchema"]["required"] = ["a"]
    findings = compare(tools_result(TOOLS), tools_result(live), NO_OPTIONS)
    assert all(f.kind == "structure-change" for f in findings)
    assert any(f.cls == "breaking" and f.path.endswith("properties.b") for f in findings)


def test_title_and_tool_description_rewordings_are_cosmetic_and_a_dropped_description_additive() -> None:
    live = copy.deepcopy(TOOLS)
    live[0]["description"] = "Adds two numbers together"
    live[1]["title"] = "Echo tool"
    del live[2]["description"]
    findings = compare(tools_result(TOOLS), tools_result(live), NO_OPTIONS)
    assert {f.path: f.cls for f in findings} == {
        "$.result.tools[name=add].description": "cosmetic",
        "$.result.tools[name=echo].title": "cosmetic",
        "$.result.tools[name=sleep].description": "additive",
    }
    assert status_for([f for f in findings if f.cls == "cosmetic"]) == "pass"


def test_title_inside_tool_output_is_data_not_cosmetic() -> None:
    recorded = ok({"structuredContent": {"book": {"title": "Dune"}}})
    live = ok({"structuredContent": {"book": {"title": "Emma"}}})
    assert one(compare(recorded, live, NO_OPTIONS)).cls == "breaking"


def test_server_version_is_cosmetic() -> None:
    recorded = ok({"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1.0.0"}})
    live = ok({"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1.1.0"}})
    finding = one(compare(recorded, live, NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("value-change", "cosmetic", "$.result.serverInfo.version")
    assert status_for((finding,)) == "pass"


def test_server_version_in_meta_is_cosmetic() -> None:
    def call(version: str) -> dict[str, Any]:
        meta = {"io.modelcontextprotocol/serverInfo": {"name": "fast-tasks", "version": version}}
        return ok({"content": [{"type": "text", "text": "5"}], "_meta": meta})

    finding = one(compare(call("3.1.4"), call("3.2.0"), NO_OPTIONS))
    assert finding.path == "$.result._meta['io.modelcontextprotocol/serverInfo'].version"
    assert finding.cls == "cosmetic"


def test_instructions_change_is_cosmetic() -> None:
    finding = one(compare(ok({"instructions": "Use add."}), ok({"instructions": "Use add or sum."}), NO_OPTIONS))
    assert finding.cls == "cosmetic"


def test_resources_keyed_by_uri_and_templates_by_uri_template() -> None:
    resources = [{"uri": "file:///a", "name": "x"}, {"uri": "file:///b", "name": "x"}]
    finding = one(compare(ok({"resources": resources}), ok({"resources": resources[1:]}), NO_OPTIONS))
    assert (finding.path, finding.message) == ("$.result.resources[uri=file:///a]", "resource 'file:///a' removed")
    templates = [{"uriTemplate": "file:///{p}", "name": "f"}, {"uriTemplate": "db://{t}", "name": "d"}]
    finding = one(compare(ok({"resourceTemplates": templates}), ok({"resourceTemplates": templates[:1]}), NO_OPTIONS))
    assert finding.path == "$.result.resourceTemplates[uriTemplate=db://{t}]"
    assert finding.message == "resource template 'db://{t}' removed"


def test_identity_with_spaces_is_quoted_in_path() -> None:
    prompts = [{"name": "a b"}, {"name": "c"}]
    finding = one(compare(ok({"prompts": prompts}), ok({"prompts": prompts[1:]}), NO_OPTIONS))
    assert finding.path == "$.result.prompts[name='a b']"


# -- ordering ---------------------------------------------------------------------------------


def test_reordered_plain_list_is_ordering_change() -> None:
    finding = one(compare(text_result("a", "b", "c"), text_result("c", "a", "b"), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("ordering-change", "breaking", "$.result.content")
    assert status_for((finding,)) == "fail"


def test_reordered_plain_list_matches_with_allow_reorder() -> None:
    assert compare(text_result("a", "b", "c"), text_result("c", "a", "b"), CompareOptions(allow_reorder=True)) == ()


def test_allow_reorder_still_catches_membership_changes() -> None:
    finding = one(compare(text_result("a", "b", "c"), text_result("c", "x", "a"), CompareOptions(allow_reorder=True)))
    assert (finding.kind, finding.path) == ("value-change", "$.result.content[1].text")


def test_reordered_tools_are_cosmetic_ordering_change() -> None:
    live = list(reversed(TOOLS))
    finding = one(compare(tools_result(TOOLS), tools_result(live), NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("ordering-change", "cosmetic", "$.result.tools")
    assert compare(tools_result(TOOLS), tools_result(live), CompareOptions(allow_reorder=True)) == ()


def test_nested_reorder_is_found_inside_changed_items() -> None:
    recorded = ok({"rows": [{"tags": ["x", "y"], "n": 1}]})
    live = ok({"rows": [{"tags": ["y", "x"], "n": 2}]})
    findings = compare(recorded, live, NO_OPTIONS)
    assert [(f.kind, f.path) for f in findings] == [
        ("ordering-change", "$.result.rows[0].tags"),
        ("value-change", "$.result.rows[0].n"),
    ]


# -- masks in comparisons ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("2026-11-29T20:41:14Z", "2027-01-02T03:04:05.678Z"),
        ("Sun Nov 29 20:41:14 UTC 2026", "Mon Nov 30 08:00:01 UTC 2026"),
        ("11/29/2026, 8:41:14 PM", "12/1/2026, 9:00:00 AM"),
        ("Sun, 29 Nov 2026 20:41:14 +0000", "Tue, 01 Dec 2026 10:00:00 +0000"),
        ("Today is Sunday, November 29, 2026", "Today is Monday, November 30, 2026"),
        ("id 3f2b8c1e-9a7d-4e2b-8f1c-0a9b8c7d6e5f", "id 77aa0011-2233-4455-8899-aabbccddeeff"),
        ("sha 0123456789abcdef0123", "sha fedcba9876543210fedc"),
    ],
)
def test_masked_values_match(before: str, after: str) -> None:
    assert compare(text_result(before), text_result(after), NO_OPTIONS) == ()


def test_masks_do_not_hide_real_changes_next_to_them() -> None:
    finding = one(compare(text_result("At 2026-11-29 sum=5"), text_result("At 2026-11-30 sum=6"), NO_OPTIONS))
    assert finding.before == "At <timestamp> sum=5"


def test_opaque_tokens_match() -> None:
    recorded = ok({"nextCursor": "abc", "task": {"taskId": "t-1", "status": "working"}})
    live = ok({"nextCursor": "xyz", "task": {"taskId": "t-9", "status": "working"}})
    assert compare(recorded, live, NO_OPTIONS) == ()
    gone = one(compare(recorded, ok({"task": {"taskId": "t-9", "status": "working"}}), NO_OPTIONS))
    assert (gone.path, gone.cls) == ("$.result.nextCursor", "breaking")


# -- JSON in text -----------------------------------------------------------------------------


def test_json_in_text_compares_structurally() -> None:
    recorded = text_result(json.dumps({"a": 1, "b": [1, 2], "at": "2026-11-29T20:41:14Z"}))
    live = text_result(json.dumps({"at": "2026-12-01T00:00:00Z", "b": [1, 2], "a": 1.0}, indent=2))
    assert compare(recorded, live, NO_OPTIONS) == ()


def test_json_in_text_changes_point_inside() -> None:
    recorded = text_result(json.dumps({"user": {"name": "ann", "age": 3}}))
    live = text_result(json.dumps({"user": {"name": "ann", "age": 4, "email": "a@b"}}))
    findings = compare(recorded, live, NO_OPTIONS)
    assert [(f.kind, f.path) for f in findings] == [
        ("structure-change", "$.result.content[0].text{json}.user.email"),
        ("value-change", "$.result.content[0].text{json}.user.age"),
    ]


def test_ignore_path_inside_json_text() -> None:
    recorded = text_result(json.dumps({"requestId": "r1", "value": 5}))
    live = text_result(json.dumps({"requestId": "r2", "value": 5}))
    assert one(compare(recorded, live, NO_OPTIONS)).path == "$.result.content[0].text{json}.requestId"
    for pattern in ("result.content[].text.requestId", "$.result.content[0].text{json}.requestId"):
        assert compare(recorded, live, CompareOptions(ignore_paths=(pattern,))) == ()
    assert compare(recorded, live, CompareOptions(ignore_keys=("requestId",))) == ()


def test_ignore_path_whole_text() -> None:
    options = CompareOptions(ignore_paths=("result.content[].text",))
    assert compare(text_result("5"), text_result("6"), options) == ()
    assert compare(text_result("5"), text_result("6"), CompareOptions(ignore_paths=("$.result.content[0].text",))) == ()
    # the type of each item is still compared
    live = ok({"content": [{"type": "image", "text": "6"}]})
    assert one(compare(text_result("5"), live, options)).path == "$.result.content[0].type"


def test_ignored_key_may_be_missing_on_one_side() -> None:
    options = CompareOptions(ignore_keys=("elapsed",))
    assert compare(ok({"a": 1, "elapsed": 3}), ok({"a": 1}), options) == ()


# -- base64 -----------------------------------------------------------------------------------


def blob_result(data: bytes, key: str = "blob") -> dict[str, Any]:
    return ok({"contents": [{"uri": "file:///f", key: base64.b64encode(data).decode()}]})


def test_base64_text_blob_equal_after_masks() -> None:
    assert compare(blob_result(b"built 2026-11-29\n"), blob_result(b"built 2026-12-24\n"), NO_OPTIONS) == ()


def test_base64_text_blob_change_is_shown_as_text() -> None:
    finding = one(compare(blob_result(b"hello world"), blob_result(b"hello there"), NO_OPTIONS))
    assert finding.path == "$.result.contents[uri=file:///f].blob{base64}"
    assert (finding.before, finding.after) == ("hello world", "hello there")


def test_binary_image_change_is_caught() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(200))
    changed = png[:-1] + b"\x00"
    recorded = ok({"content": [{"type": "image", "mimeType": "image/png", "data": base64.b64encode(png).decode()}]})
    live = ok({"content": [{"type": "image", "mimeType": "image/png", "data": base64.b64encode(changed).decode()}]})
    finding = one(compare(recorded, live, NO_OPTIONS))
    assert (finding.kind, finding.cls, finding.path) == ("value-change", "breaking", "$.result.content[0].data")
    assert compare(recorded, copy.deepcopy(recorded), NO_OPTIONS) == ()


# -- caps ---------------------------------------------------------------------------------------


def test_long_multiline_text_change_carries_capped_diff() -> None:
    lines = [f"line {i}" for i in range(500)]
    changed = list(lines)
    for i in range(0, 500, 3):
        changed[i] = f"LINE {i} changed"
    finding = one(compare(text_result("\n".join(lines)), text_result("\n".join(changed)), NO_OPTIONS))
    assert finding.kind == "value-change"
    assert finding.diff.startswith("--- recorded\n+++ live\n@@")
    assert len(finding.diff.splitlines()) <= DIFF_MAX_LINES + 1
    assert len(finding.diff.encode()) <= DIFF_MAX_BYTES + 64
    assert finding.diff.endswith("(diff truncated)")
    assert "lines" in finding.message and len(finding.message) < 300


def test_short_multiline_change_has_full_diff() -> None:
    finding = one(compare(text_result("a\nb\nc"), text_result("a\nB\nc"), NO_OPTIONS))
    assert finding.diff.splitlines()[-3:] == ["-b", "+B", " c"]


def test_hostile_huge_values_are_capped_everywhere() -> None:
    huge = "x" * 5_000_000
    findings = compare(text_result(huge + "a"), text_result(huge + "b"), NO_OPTIONS)
    finding = one(findings)
    assert len(finding.message) < 300
    assert len(str(finding.before)) <= 210 and len(str(finding.after)) <= 210
    assert str(finding.before).endswith("a") and str(finding.after).endswith("b")  # the window shows the change
    assert len(finding.diff) <= DIFF_MAX_BYTES + 64
    # a huge added value and a huge key are capped too
    added = one(compare(ok({}), ok({"k" * 10_000: ["y" * 10_000] * 100}), NO_OPTIONS))
    assert len(added.message) < 300 and len(added.path) < 300 and len(str(added.after)) <= 210


def test_huge_multiline_text_diff_is_bounded() -> None:
    lines = [f"row {i}" for i in range(50_000)]
    live = list(lines)
    live[40_000] = "changed"
    finding = one(compare(text_result("\n".join(lines)), text_result("\n".join(live)), NO_OPTIONS))
    assert "-row 40000" in finding.diff and "+changed" in finding.diff


def test_number_of_findings_is_capped() -> None:
    recorded = ok({f"k{i}": i for i in range(500)})
    live = ok({f"k{i}": i + 1 for i in range(500)})
    findings = compare(recorded, live, NO_OPTIONS)
    assert len(findings) == MAX_FINDINGS
    assert findings[-1].message == f"{500 - MAX_FINDINGS + 1} more differences not shown"
    assert findings[-1].kind == "value-change"


# -- status_for -------------------------------------------------------------------------------


def test_status_for() -> None:
    cosmetic = Finding("value-change", "cosmetic", "$.result.serverInfo.version", "m")
    additive = Finding("structure-change", "additive", "$.result.x", "m")
    missing = Finding("missing-response", "breaking", "$", "m")
    assert status_for(()) == "pass"
    assert status_for((cosmetic,)) == "pass"
    assert status_for((cosmetic, additive)) == "fail"
    assert status_for((missing,)) == "missing"


def test_findings_are_sorted_worst_first() -> None:
    recorded = ok({"a": 1, "b": 2, "serverInfo": {"version": "1"}})
    live = ok({"a": 2, "c": 3, "serverInfo": {"version": "2"}})
    kinds = [(f.kind, f.cls) for f in compare(recorded, live, NO_OPTIONS)]
    assert kinds == [
        ("structure-change", "breaking"),
        ("structure-change", "additive"),
        ("value-change", "breaking"),
        ("value-change", "cosmetic"),
    ]


def test_options_accept_lists_and_reject_bad_paths() -> None:
    options = CompareOptions(ignore_paths=["result.a"], ignore_keys=["b"])  # type: ignore[arg-type]
    assert options.ignore_paths == ("result.a",) and options.ignore_keys == ("b",)
    assert hash(options)  # frozen and hashable: normalisers are cached per options


# -- property: anything compared with itself is empty -------------------------------------------

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False),
    st.text(max_size=40),
    st.sampled_from(
        [
            "2026-11-29T20:41:14Z",
            '{"a": [1, 2.0, "2026-11-29"]}',
            "[1, 2",
            base64.b64encode(b"text 2026-11-29").decode(),
            "3f2b8c1e-9a7d-4e2b-8f1c-0a9b8c7d6e5f",
        ]
    ),
)
KEYS = st.one_of(st.text(max_size=8), st.sampled_from(["name", "uri", "id", "blob", "data", "cursor", "text"]))
JSON = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(KEYS, children, max_size=5),
    max_leaves=30,
)


@settings(max_examples=examples(300), deadline=None)
@given(body=JSON, allow_reorder=st.booleans())
def test_compare_with_itself_is_empty(body: Any, allow_reorder: bool) -> None:
    options = CompareOptions(allow_reorder=allow_reorder)
    message = ok(body)
    assert compare(message, copy.deepcopy(message), options) == ()
    # also through a JSON round trip (what a cassette does to a recording)
    assert compare(message, json.loads(json.dumps(message)), options) == ()


@settings(max_examples=examples(200), deadline=None)
@given(body=JSON)
def test_compare_never_crashes_and_caps_messages(body: Any) -> None:
    other = ok({"wrapped": body, "extra": [body, body]})
    for finding in compare(ok(body), other, NO_OPTIONS):
        assert len(finding.message) < 400
        assert finding.kind and finding.cls and finding.path.startswith("$")


def _reverse_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _reverse_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reverse_keys(v) for v in value]
    return value


@settings(max_examples=examples(300), deadline=None)
@given(body=JSON)
def test_compare_with_itself_in_another_key_order_is_empty(body: Any) -> None:
    # Not byte-identical, so this goes through normalisation rather than the raw fast path.
    assert compare(ok(body), _reverse_keys(ok(body)), NO_OPTIONS) == ()


@settings(max_examples=examples(400), deadline=None)
@given(a=JSON, b=JSON)
def test_a_normalised_difference_is_always_reported(a: Any, b: Any) -> None:
    findings = compare(ok(a), ok(b), NO_OPTIONS)
    if canonical(normalize(a)) != canonical(normalize(b)):
        assert findings, "a difference after normalisation produced no finding"
    else:
        assert findings == ()


# -- a real clock-driven server ---------------------------------------------------------------


def _time_response(result: Any) -> dict[str, Any]:
    """A tools/call response shaped the way the SDK wraps a structured tool result."""
    return ok(
        {
            "content": [{"type": "text", "text": result.model_dump_json(indent=2)}],
            "structuredContent": result.model_dump(),
        }
    )


def test_mcp_server_time_recorded_days_ago_still_matches() -> None:
    from datetime import UTC, datetime, timedelta

    from mcp_server_time.server import TimeResult, TimeServer

    live = TimeServer().get_current_time("UTC")
    then = datetime.now(UTC) - timedelta(days=3, hours=5, seconds=17)
    recorded = TimeResult(
        timezone="UTC",
        datetime=then.isoformat(timespec="seconds"),
        day_of_week=then.strftime("%A"),
        is_dst=False,
    )
    assert recorded.datetime != live.datetime and recorded.day_of_week != live.day_of_week
    assert compare(_time_response(recorded), _time_response(live), NO_OPTIONS) == ()
    # a real change next to the masked values is still caught: one finding, naming its twin
    moved = TimeResult(timezone="Etc/UTC", datetime=live.datetime, day_of_week=live.day_of_week, is_dst=False)
    findings = compare(_time_response(recorded), _time_response(moved), NO_OPTIONS)
    assert [(f.path, f.also) for f in findings] == [
        ("$.result.structuredContent.timezone", ("$.result.content[0].text{json}.timezone",)),
    ]


@pytest.mark.parametrize(
    ("recorded", "live"),
    [
        (text_result("5"), text_result("6")),
        (text_result(json.dumps({"requestId": "a"})), text_result(json.dumps({"requestId": "b"}))),
        (tools_result(TOOLS), tools_result([{**TOOLS[0], "description": "x"}, *TOOLS[1:]])),
        (tools_result(TOOLS), tools_result(TOOLS[1:])),
        (ok({"_meta": {"io.x/y z": 1}}), ok({"_meta": {"io.x/y z": 2}})),
        (blob_result(b"hello world"), blob_result(b"hello there")),
    ],
)
def test_a_finding_path_works_as_an_ignore_path(recorded: dict[str, Any], live: dict[str, Any]) -> None:
    finding = one(compare(recorded, live, NO_OPTIONS))
    assert compare(recorded, live, CompareOptions(ignore_paths=(finding.path,))) == ()


def test_hostile_nesting_is_compared_without_crashing() -> None:
    depth = 900
    recorded = json.loads('{"jsonrpc": "2.0", "id": 1, "result": {"x": ' + "[" * depth + "1" + "]" * depth + "}}")
    live = json.loads('{"jsonrpc": "2.0", "id": 1, "result": {"x": ' + "[" * depth + "2" + "]" * depth + "}}")
    twin = json.loads(json.dumps(recorded))
    assert compare(recorded, twin, NO_OPTIONS) == ()
    finding = one(compare(recorded, live, NO_OPTIONS))
    assert finding.kind == "value-change" and len(finding.path) < 1000


@pytest.mark.parametrize(
    ("before", "after", "path"),
    [
        ([False, False], [False, 0], "$.result.v[1]"),
        ([1, True], [1, 1], "$.result.v[1]"),
        ({"a": [True]}, {"a": [1.0]}, "$.result.v.a[0]"),
    ],
)
def test_booleans_and_numbers_inside_lists_are_told_apart(before: Any, after: Any, path: str) -> None:
    # Python's == (and so DeepDiff inside lists) takes False for 0 and True for 1.
    recorded = {"jsonrpc": "2.0", "id": 1, "result": {"v": before}}
    live = {"jsonrpc": "2.0", "id": 1, "result": {"v": after}}
    (finding,) = compare(recorded, live, CompareOptions())
    assert (finding.kind, finding.path) == ("structure-change", path)
    assert "boolean" in finding.message


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (["a", True, "b"], ["z", 1, "b"], [("$.result.v[0]", "value-change"), ("$.result.v[1]", "structure-change")]),
        ([1, 2, 3], [True, 2, 4], [("$.result.v[0]", "structure-change"), ("$.result.v[2]", "value-change")]),
        ([0, 2, 3], [False, 9, 3], [("$.result.v[0]", "structure-change"), ("$.result.v[1]", "value-change")]),
    ],
)
def test_a_boolean_told_apart_from_a_number_beside_another_change_in_the_list(
    before: Any, after: Any, expected: list[tuple[str, str]]
) -> None:
    """DeepDiff lines a list of scalars up by ``==``, which takes True for 1: the difference it
    forgives is still reported when it finds another one in the same list, not only when it
    finds nothing."""
    recorded = {"jsonrpc": "2.0", "id": 1, "result": {"v": before}}
    live = {"jsonrpc": "2.0", "id": 1, "result": {"v": after}}
    found = compare(recorded, live, CompareOptions())
    assert sorted((f.path, f.kind) for f in found) == expected, found


def _annotated(**hints: Any) -> dict[str, Any]:
    tool = {**TOOLS[0], "annotations": hints} if hints else dict(TOOLS[0])
    return tools_result([tool, *TOOLS[1:]])


@pytest.mark.parametrize(
    ("before", "after", "cls"),
    [
        ({"readOnlyHint": True}, {"readOnlyHint": False}, "breaking"),
        ({"destructiveHint": False}, {"destructiveHint": True}, "breaking"),
        ({"openWorldHint": False}, {"openWorldHint": True}, "breaking"),
        ({"openWorldHint": False}, {}, "breaking"),  # absent reads as the default: true
        ({"readOnlyHint": False}, {"readOnlyHint": True}, "additive"),
        ({"destructiveHint": True}, {"destructiveHint": False}, "additive"),
        (
            {"destructiveHint": True},
            {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True},
            None,  # spelled out with the defaults: no change at all
        ),
        ({"readOnlyHint": False}, {}, None),
    ],
)
def test_tool_annotation_hint_flips_are_classed_by_what_they_allow(
    before: dict[str, Any], after: dict[str, Any], cls: str | None
) -> None:
    findings = compare(_annotated(**before), _annotated(**after), NO_OPTIONS)
    hints = [f for f in findings if ".annotations" in f.path]
    if cls is None:
        assert findings == (), findings
        return
    assert hints, findings
    assert min((f.cls for f in hints), key=CLASS_ORDER.index) == cls, findings


def test_tool_and_parameter_description_changes_are_cosmetic() -> None:
    live = copy.deepcopy(TOOLS)
    live[0]["description"] = "Adds two numbers together"
    live[0]["inputSchema"]["properties"]["a"]["description"] = "the left operand"
    findings = compare(tools_result(TOOLS), tools_result(live), NO_OPTIONS)
    assert findings and {(f.rule, f.cls) for f in findings} == {("description-changed", "cosmetic")}, findings
    assert status_for(findings) == "pass"


def test_a_long_line_shows_a_window_around_the_first_difference_on_both_sides() -> None:
    before = "The build ran " + "step by step, " * 8 + "and finished with 3 warnings."
    after = before.replace("3 warnings", "4 warnings")
    finding = one(compare(text_result(before), text_result(after), NO_OPTIONS))
    assert "3 warnings" in finding.message and "4 warnings" in finding.message, finding.message
    removed, added, words = finding.diff.splitlines()
    assert (removed, added) == ("-" + before, "+" + after), finding.diff  # the changed line, pytest's way
    assert words.startswith("? ") and words.endswith("finished with [-3-]{+4+} warnings."), finding.diff


# -- the fast exit ----------------------------------------------------------------------------


def _json_twin(value: Any) -> Any:
    """``value`` with every number of the other type where ``==`` cannot tell (1 <-> 1.0, True -> 1)."""
    if isinstance(value, dict):
        return {k: _json_twin(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_twin(v) for v in value]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, int):
        return float(value)
    return value


def _dumped(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=examples(400), deadline=None)
@given(a=JSON, b=JSON)
def test_same_json_is_equal_json_text(a: Any, b: Any) -> None:
    # same_json decides the fast exit: it must say what comparing the JSON texts would.
    for left, right in ((a, b), (a, copy.deepcopy(a)), (a, _json_twin(a)), (a, _reverse_keys(a))):
        assert same_json(left, right) == (left == right and _dumped(left) == _dumped(right))


@settings(max_examples=examples(300), deadline=None)
@given(body=JSON)
def test_the_fast_exit_gives_what_the_full_comparison_gives(body: Any) -> None:
    for live in (copy.deepcopy(body), _json_twin(body), _reverse_keys(body)):
        full = compare_normal(*normalize_pair({"result": body}, {"result": live}, NO_OPTIONS), NO_OPTIONS)
        assert compare(ok(body), ok(live), NO_OPTIONS) == full
        assert differences(ok(body), ok(live), NO_OPTIONS) == full  # the replay's, past unchanged
        # What replay checks before it imports the compare engine at all.
        if unchanged(ok(body), ok(live, msg_id=7)):
            assert full == ()


def test_unchanged_is_the_same_answer_envelope_aside() -> None:
    assert unchanged(ok([1, "a"]), {"id": 9, "result": [1, "a"], "jsonrpc": "2.0"})
    assert unchanged(ok([1, "a"]), {"id": 1, "result": [1, "a"], "jsonrpc": "2.0"})  # equal, keys reordered
    assert not unchanged(ok([1, "a"]), {"id": 1, "result": [1, "a"], "jsonrpc": "2.0", "x": 1})
    assert not unchanged(ok([1]), ok([True]))
    assert not unchanged(ok([1]), err(1, "x"))
    assert not unchanged(None, ok(1)) and not unchanged(ok(1), None)


def test_same_json_tells_apart_what_equality_forgives() -> None:
    assert same_json({"a": [1, "x", None]}, {"a": [1, "x", None]})
    assert not same_json({"a": True}, {"a": 1})
    assert not same_json([1], [1.0])
    assert not same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})  # the slow path decides key order
    deep: Any = []
    for _ in range(100_000):
        deep = [deep]
    assert not same_json(deep, deep)  # hostile nesting: never a RecursionError
    assert not same_json({"x": -0.0}, {"x": 0.0})
    # Long containers (told apart by repr) and short ones (walked) alike.
    for size in (3, 63, 64, 200):
        items = list(range(size))
        assert same_json({"r": items}, {"r": list(items)})
        assert not same_json({"r": [*items, True]}, {"r": [*items, 1]})
        assert not same_json([*items, {"a": 1.0}], [*items, {"a": 1}])
        keys = {f"k{i}": i for i in range(size)}
        assert same_json(keys, dict(keys))
        assert not same_json(keys, dict(reversed(keys.items())))


def test_same_json_copies_no_long_text() -> None:
    # repr would copy a long text on both sides: 2 x 20 MiB for a moment, on every equal answer.
    import tracemalloc

    text = "x" * (20 << 20)
    a = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}
    b = json.loads(json.dumps(a))
    tracemalloc.start()
    try:
        assert same_json(a, b) and unchanged(a, b)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def _envelope_variants(body: Any) -> list[dict[str, Any]]:
    """``body`` as an answer under the envelopes a live server may send back."""
    return [
        {"jsonrpc": "2.0", "id": 1, **body},
        {"jsonrpc": "2.0", "id": 2, **body},
        {"id": 1, "jsonrpc": "2.0", **body},
        {**body, "jsonrpc": "2.0", "id": 1.0},
        {"jsonrpc": "2.0", **body},
    ]


@settings(max_examples=examples(300), deadline=None)
@given(a=JSON, b=JSON)
def test_unchanged_is_same_json_of_the_bodies(a: Any, b: Any) -> None:
    for left in _envelope_variants({"result": a}):
        for right in _envelope_variants({"result": b}) + _envelope_variants({"result": _json_twin(a)}):
            assert unchanged(left, right) == same_json(_body_of(left), _body_of(right))


def _body_of(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in ("jsonrpc", "id")}


@pytest.mark.parametrize("one_leaf", [True, False])
def test_keys_starting_with_two_underscores_are_data_and_compared(one_leaf: bool) -> None:
    # DeepDiff skips "__" keys as private attributes by default: a GraphQL __typename that
    # changed beside another change, or vanished, was never reported.
    from mcp_replay_action.values.limits import Limits

    def answer(user: dict[str, Any]) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"user": user}}}

    before = answer({"__typename": "User", "name": "x", "age": 3})
    options = CompareOptions(limits=Limits(fast=one_leaf))  # the fast paths off: DeepDiff decides
    alone = compare(before, answer({"__typename": "Admin", "name": "x", "age": 3}), options)
    beside = compare(before, answer({"__typename": "Admin", "name": "x", "age": 4}), options)
    gone = compare(before, answer({"name": "x", "age": 3}), options)
    assert [(f.path, f.before, f.after) for f in alone] == [
        ("$.result.structuredContent.user.__typename", "User", "Admin")
    ]
    assert sorted(f.path for f in beside) == [
        "$.result.structuredContent.user.__typename",
        "$.result.structuredContent.user.age",
    ]
    assert [(f.path, f.kind) for f in gone] == [("$.result.structuredContent.user.__typename", "structure-change")]


def test_one_change_the_sdk_carries_twice_is_one_finding_naming_the_other_place() -> None:
    def sdk_dict(value: dict[str, Any]) -> dict[str, Any]:
        return ok({"content": [{"type": "text", "text": json.dumps(value, indent=2)}], "structuredContent": value})

    def sdk_text(value: str) -> dict[str, Any]:
        return ok({"content": [{"type": "text", "text": value}], "structuredContent": {"result": value}})

    [finding] = compare(sdk_dict({"id": "n1", "count": 2}), sdk_dict({"id": "n1", "count": 3}), NO_OPTIONS)
    assert (finding.path, finding.also) == (
        "$.result.structuredContent.count",
        ("$.result.content[0].text{json}.count",),
    )
    [text] = compare(sdk_text("5 notes"), sdk_text("6 notes"), NO_OPTIONS)
    assert (text.path, text.also) == ("$.result.structuredContent.result", ("$.result.content[0].text",))

    # A returned number: {"result": N} and the text "N" (the Python SDK's wrapping).
    def sdk_number(value: float) -> dict[str, Any]:
        return ok({"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": {"result": value}})

    [number] = compare(sdk_number(2), sdk_number(3), NO_OPTIONS)
    assert (number.path, number.also, number.before, number.after) == (
        "$.result.structuredContent.result",
        ("$.result.content[0].text",),
        2,
        3,
    )
    assert len(compare(sdk_number(2.5), sdk_number(3.5), NO_OPTIONS)) == 1
    # Two different changes in the two places stay two findings.
    apart = ok({"content": [{"type": "text", "text": json.dumps({"count": 4})}], "structuredContent": {"count": 3}})
    findings = compare(sdk_dict({"count": 2}), apart, NO_OPTIONS)
    assert sorted(f.path for f in findings) == [
        "$.result.content[0].text{json}.count",
        "$.result.structuredContent.count",
    ]
    assert all(f.also == () for f in findings)
