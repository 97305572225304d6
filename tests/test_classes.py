"""The class table (classes.py): docs/classes.md is the table, every row is met by a real
difference and gives its class, and the cases real third-party releases got wrong are classed
as a client feels them. Schema equivalence is checked against jsonschema's own validator."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_replay_action.compare.classes import RULE, RULES, markdown_table
from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.compare.schema_equal import validation_form, validation_keys
from mcp_replay_action.grade.verdict import missing_finding
from mcp_replay_action.replay import deep
from mcp_replay_action.replay.measures import growth, slowdown
from mcp_replay_action.values.size import answer_bytes
from profiles import examples

pytestmark = pytest.mark.unit

DOC = Path(__file__).resolve().parents[1] / "docs" / "classes.md"
NO_OPTIONS = CompareOptions()


def ok(result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


def err(code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": 1, "error": error}


def text(value: str, *, is_error: bool = False) -> dict[str, Any]:
    return ok({"content": [{"type": "text", "text": value}], "isError": is_error})


def init(capabilities: dict[str, Any], version: str = "1.0", instructions: str = "Use it.") -> dict[str, Any]:
    return ok(
        {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities,
            "serverInfo": {"name": "s", "version": version},
            "instructions": instructions,
        }
    )


def tool(name: str = "add", **over: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": name,
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    }
    out.update(over)
    return out


def tools(*items: dict[str, Any]) -> dict[str, Any]:
    return ok({"tools": list(items)})


def schema_of(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return schema


def with_schema(schema: dict[str, Any], **over: Any) -> dict[str, Any]:
    return tools(tool(inputSchema=schema, **over))


# One real difference per row of the table that compare decides: (rule, recorded, live).
CASES: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("result-became-error", text("5"), err(-32603, "boom")),
    ("error-became-result", err(-32603, "boom"), text("5")),
    ("tool-became-error", text("5"), text("no such note", is_error=True)),
    ("tool-no-longer-error", text("no such note", is_error=True), text("5")),
    ("error-code-changed", err(-32602, "bad a"), err(-32603, "bad a")),
    (
        "required-added",
        with_schema(schema_of({"a": {"type": "integer"}}, ["a"])),
        with_schema(schema_of({"a": {"type": "integer"}, "c": {"type": "integer"}}, ["a", "c"])),
    ),
    ("tool-removed", tools(tool("add"), tool("sub")), tools(tool("add"))),
    ("capability-removed", init({"tools": {}, "logging": {}}), init({"tools": {}})),
    ("key-removed", ok({"structuredContent": {"sum": 5, "unit": "m"}}), ok({"structuredContent": {"sum": 5}})),
    ("item-removed", ok({"structuredContent": {"xs": [1, 2, 3]}}), ok({"structuredContent": {"xs": [1, 3]}})),
    ("type-changed", ok({"structuredContent": {"n": 2}}), ok({"structuredContent": {"n": "2"}})),
    ("value-changed", text("5"), text("6")),
    ("list-reordered", ok({"structuredContent": {"xs": [1, 2, 3]}}), ok({"structuredContent": {"xs": [3, 2, 1]}})),
    (
        "hint-widened",
        tools(tool(annotations={"readOnlyHint": True})),
        tools(tool(annotations={"readOnlyHint": False})),
    ),
    ("key-added", ok({"structuredContent": {"sum": 5}}), ok({"structuredContent": {"sum": 5, "unit": "m"}})),
    ("item-added", ok({"structuredContent": {"xs": [1, 2]}}), ok({"structuredContent": {"xs": [1, 2, 3]}})),
    ("tool-added", tools(tool("add")), tools(tool("add"), tool("sub"))),
    ("capability-added", init({"tools": {}}), init({"tools": {}, "logging": {}})),
    ("empty-object-removed", init({"tools": {}, "experimental": {}}), init({"tools": {}})),
    (
        "required-dropped",
        with_schema(schema_of({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a", "b"])),
        with_schema(schema_of({"a": {"type": "integer"}, "b": {"type": "integer"}}, ["a"])),
    ),
    ("description-changed", tools(tool()), tools(tool(description="Add two whole numbers."))),
    ("description-dropped", tools(tool()), tools(tool(description=" "))),
    ("error-text-changed", err(-32602, "bad a"), err(-32602, "bad a; hint: a is an integer")),
    (
        "hint-narrowed",
        tools(tool(annotations={"readOnlyHint": False})),
        tools(tool(annotations={"readOnlyHint": True})),
    ),
    (
        "schema-equivalent",
        with_schema(schema_of({"n": {"type": "integer", "exclusiveMaximum": 1000000}})),
        with_schema(schema_of({"n": {"type": "integer", "maximum": 999999}})),
    ),
    ("metadata-text", tools(tool(title="Add")), tools(tool(title="Addition"))),
    ("server-version", init({"tools": {}}, version="1.0"), init({"tools": {}}, version="1.1")),
    ("named-reordered", tools(tool("add"), tool("sub")), tools(tool("sub"), tool("add"))),
    # In a tool's schema a reordered ``required`` is one of the equivalent spellings; elsewhere
    # (a schema a result carries) it has its own row.
    (
        "required-reordered",
        ok({"requestedSchema": {"required": ["a", "b"]}}),
        ok({"requestedSchema": {"required": ["b", "a"]}}),
    ),
]


# Rows met outside compare: each built by the one function that builds it.
def _output_checked(structured: Any, text: str | None = None) -> tuple[Any, ...]:
    from mcp_replay_action.compare.output_schema import OutputSchemas

    outputs = OutputSchemas()
    tool = {"name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"properties": {"n": {"type": "integer"}}}}
    outputs.learn({"result": {"tools": [tool]}})
    content = [] if text is None else [{"type": "text", "text": text}]
    return outputs.check({"params": {"name": "t"}}, {"result": {"content": content, "structuredContent": structured}})


def _note(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def _progress(n: int, total: int = 3, message: str = "step") -> list[dict[str, Any]]:
    return [
        _note("notifications/progress", progressToken=1, progress=i + 1, total=total, message=message) for i in range(n)
    ]


def _log(level: str, data: str) -> dict[str, Any]:
    return _note("notifications/message", level=level, data=data)


def _asks(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 0, "method": method, "params": params}


# (recorded, live) of what a server sent while answering, one per notification row.
HEARD_CASES: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {
    "progress-dropped": (_progress(3), []),
    "progress-added": ([], _progress(2)),
    "progress-changed": (_progress(3), _progress(2, total=2)),
    "progress-unfinished": (  # as many, the last one short of the total
        _progress(3),
        [_note("notifications/progress", progressToken=1, progress=p, total=3, message="step") for p in (1, 1.5, 2)],
    ),
    "progress-text-changed": (_progress(3), _progress(3, message="working")),
    "log-level-raised": ([_log("info", "placing order")], [_log("warning", "order REJECTED by fraud check")]),
    "log-changed": ([_log("info", "placing order")], [_log("info", "placing the order")]),
    "notification-dropped": ([_note("notifications/tools/list_changed")], []),
    "notification-added": ([], [_note("notifications/resources/updated", uri="file:///a")]),
    "server-request-dropped": ([_asks("elicitation/create", message="Sure?")], []),
    "server-request-added": ([], [_asks("sampling/createMessage", maxTokens=5)]),
    "server-request-changed": (
        [_asks("elicitation/create", message="Sure?")],
        [_asks("elicitation/create", message="OK?")],
    ),
}


def _heard_finding(rule: str) -> Any:
    from mcp_replay_action.compare.notifications import compare_heard

    recorded, live = HEARD_CASES[rule]
    findings = compare_heard(recorded, live)
    assert len({f.rule for f in findings}) == 1, findings
    return findings[0]


OUTSIDE = {
    "missing-response": lambda: missing_finding("no response within 5.0s"),
    "latency": lambda: slowdown(10.0, 900.0, 3.0),
    "size": lambda: growth(answer_bytes(text("5")), answer_bytes(text("5" * 4000)), 3.0),
    "response-appeared": lambda: compare(None, text("5"), NO_OPTIONS)[0],
    # A live result against its live outputSchema (on a real server: tests/test_output_schema.py).
    "output-schema": lambda: _output_checked({"n": "1"})[0],
    "output-text-disagrees": lambda: _output_checked({"n": 1}, '{"n": 2}')[0],
    # What the server sends while it answers (on real servers: tests/test_notifications.py).
    **{rule: (lambda rule=rule: _heard_finding(rule)) for rule in HEARD_CASES},
    "era-refused": None,  # replay's one finding for an era the server refuses: tests/test_era_mismatch.py
    "too-deep": lambda: deep.finding(903),  # through a real server: tests/test_deep_answers.py
}


def test_the_doc_page_is_the_table() -> None:
    page = DOC.read_text("utf-8")
    inside = re.search(r"<!-- classes:begin -->\n(.*)<!-- classes:end -->", page, re.S)
    assert inside is not None, "docs/classes.md lost its markers"
    assert inside.group(1) == markdown_table(), "docs/classes.md differs from classes.RULES: regenerate it"


def test_every_row_is_met_by_a_case_and_ids_are_unique() -> None:
    assert len(RULE) == len(RULES)
    assert {rule for rule, _, _ in CASES} | OUTSIDE.keys() == RULE.keys()


@pytest.mark.parametrize(("rule", "recorded", "live"), CASES, ids=[c[0] for c in CASES])
def test_each_row_gives_its_class(rule: str, recorded: dict[str, Any], live: dict[str, Any]) -> None:
    findings = compare(recorded, live, NO_OPTIONS)
    assert [f.rule for f in findings] == [rule], findings
    assert findings[0].cls == RULE[rule].cls


@pytest.mark.parametrize("rule", sorted(k for k, v in OUTSIDE.items() if v is not None))
def test_rows_met_outside_compare(rule: str) -> None:
    make = OUTSIDE[rule]
    assert make is not None
    finding = make()
    assert finding is not None and (finding.rule, finding.cls) == (rule, RULE[rule].cls)


# -- what real releases of third-party servers got wrong ----------------------------------------


def test_an_empty_experimental_removed_and_a_capability_gained_do_not_gate() -> None:
    findings = compare(init({"tools": {}, "experimental": {}}), init({"tools": {}, "logging": {}}), NO_OPTIONS)
    assert sorted((f.path, f.cls) for f in findings) == [
        ("$.result.capabilities.experimental", "additive"),
        ("$.result.capabilities.logging", "additive"),
    ]
    # But a capability that declared something is a loss, and so is an experimental one in use.
    lost = compare(init({"tools": {}, "experimental": {"x": {}}}), init({"tools": {}}), NO_OPTIONS)
    assert [(f.rule, f.cls) for f in lost] == [("capability-removed", "breaking")]
    gone = compare(init({"tools": {}}), init({}), NO_OPTIONS)
    assert [(f.rule, f.cls) for f in gone] == [("capability-removed", "breaking")]


def test_an_integer_bound_rewritten_is_cosmetic_and_a_real_one_is_not() -> None:
    before = with_schema(schema_of({"n": {"type": "integer", "exclusiveMaximum": 1000000, "description": "n"}}))
    same = with_schema(schema_of({"n": {"type": "integer", "maximum": 999999, "description": "n"}}))
    [finding] = compare(before, same, NO_OPTIONS)
    assert (finding.cls, finding.path) == ("cosmetic", "$.result.tools[name=add].inputSchema.properties.n")
    assert (
        finding.message == 'the same schema spelled another way: {"exclusiveMaximum": 1000000} -> {"maximum": 999999}'
    )
    narrower = with_schema(schema_of({"n": {"type": "integer", "maximum": 999998, "description": "n"}}))
    assert "breaking" in {f.cls for f in compare(before, narrower, NO_OPTIONS)}
    # An equivalent rewrite beside a real change: the rewrite is cosmetic, the change still found.
    both = with_schema(schema_of({"n": {"type": "integer", "maximum": 999999, "description": "the count"}}))
    assert sorted((f.rule, f.cls) for f in compare(before, both, NO_OPTIONS)) == [
        ("description-changed", "cosmetic"),
        ("schema-equivalent", "cosmetic"),
    ]


def test_an_error_that_gained_a_hint_is_additive_while_the_code_stays() -> None:
    [finding] = compare(err(-32602, "Unknown tool: ad"), err(-32602, "Unknown tool: ad. Did you mean add?"), NO_OPTIONS)
    assert (finding.rule, finding.cls) == ("error-text-changed", "additive")
    moved = compare(err(-32602, "Unknown tool: ad"), err(-32601, "Unknown tool: ad. Did you mean add?"), NO_OPTIONS)
    assert sorted((f.rule, f.cls) for f in moved) == [
        ("error-code-changed", "breaking"),
        ("error-text-changed", "additive"),
    ]
    # A tool result that is an error on both sides: its text is an error text.
    [tool_error] = compare(text("note not found", is_error=True), text("note x not found", is_error=True), NO_OPTIONS)
    assert (tool_error.rule, tool_error.cls) == ("error-text-changed", "additive")
    # The same text change in a success is a value change, breaking.
    [success] = compare(text("note not found"), text("note x not found"), NO_OPTIONS)
    assert success.cls == "breaking"


def test_what_breaks_a_client_stays_breaking() -> None:
    base = schema_of({"a": {"type": ["integer", "string"]}}, ["a"])
    narrowed = schema_of({"a": {"type": "integer"}}, ["a"])
    assert {f.cls for f in compare(with_schema(base), with_schema(narrowed), NO_OPTIONS)} == {"breaking"}
    assert {f.cls for f in compare(text("5"), text("boom", is_error=True), NO_OPTIONS)} == {"breaking"}


@pytest.mark.parametrize("name", ["title", "description", "default", "examples"])
def test_a_schema_property_is_a_property_whatever_its_name(name: str) -> None:
    # An outputSchema property named like a JSON Schema annotation keyword is a field a client reads.
    props = {"id": {"type": "string"}, name: {"type": "string"}}
    before = tools(tool(outputSchema=schema_of(props)))
    after = tools(tool(outputSchema=schema_of({"id": {"type": "string"}})))
    [removed] = compare(before, after, NO_OPTIONS)
    assert (removed.rule, removed.cls) == ("key-removed", "breaking"), removed
    assert removed.path == f"$.result.tools[name=add].outputSchema.properties.{name}"
    # The keyword of that name inside a property stays text for people; a property named
    # ``properties`` holding the keyword is read as the keyword.
    worded = schema_of({name: {"type": "string", "title": "The name"}})
    reworded = schema_of({name: {"type": "string", "title": "Its name"}})
    [title] = compare(tools(tool(outputSchema=worded)), tools(tool(outputSchema=reworded)), NO_OPTIONS)
    assert (title.rule, title.cls) == ("metadata-text", "cosmetic")
    nested = schema_of({"properties": {"type": "object", "title": "A"}})
    renamed = schema_of({"properties": {"type": "object", "title": "B"}})
    [keyword] = compare(tools(tool(outputSchema=nested)), tools(tool(outputSchema=renamed)), NO_OPTIONS)
    assert (keyword.rule, keyword.cls) == ("metadata-text", "cosmetic")


@pytest.mark.parametrize(
    ("recorded", "live"),
    [
        ({"readOnlyHint": False}, None),  # go-sdk 1.7's omitempty: the whole object gone
        ({"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}, None),
        ({"destructiveHint": True}, {"destructiveHint": True, "readOnlyHint": False}),
        (None, {"openWorldHint": True}),
        ({"title": "Add", "readOnlyHint": False}, {"title": "Add"}),
    ],
)
def test_a_hint_equal_to_its_default_and_the_hint_absent_are_equal(
    recorded: dict[str, Any] | None, live: dict[str, Any] | None
) -> None:
    def listed(annotations: dict[str, Any] | None) -> dict[str, Any]:
        return tools(tool()) if annotations is None else tools(tool(annotations=annotations))

    assert compare(listed(recorded), listed(live), NO_OPTIONS) == ()
    # A hint that really changed is still found, spelled or left to its default.
    [widened] = compare(listed({"readOnlyHint": True}), listed(None), NO_OPTIONS)
    assert (widened.rule, widened.cls) == ("hint-widened", "breaking")
    [narrowed] = compare(listed(None), listed({"destructiveHint": False}), NO_OPTIONS)
    assert (narrowed.rule, narrowed.cls) == ("hint-narrowed", "additive")


# -- equivalent schema spellings ----------------------------------------------------------------

EQUIVALENT = [
    ({"type": ["string"]}, {"type": "string"}),
    ({"enum": ["a"]}, {"const": "a"}),
    ({"type": "string", "enum": ["b", "a"]}, {"type": "string", "enum": ["a", "b"]}),
    ({"type": "integer", "exclusiveMinimum": 0}, {"type": "integer", "minimum": 1}),
    ({"type": "integer", "maximum": 9.5}, {"type": "integer", "maximum": 9}),
    ({"type": "integer", "minimum": 0, "multipleOf": 1}, {"type": "integer", "minimum": 0}),
    ({"type": "number", "maximum": 5, "exclusiveMaximum": 3}, {"type": "number", "exclusiveMaximum": 3}),
    ({"type": "integer", "minLength": 2}, {"type": "integer"}),
    ({"type": "string", "minLength": 0}, {"type": "string"}),
    ({"type": "object", "additionalProperties": True}, {"type": "object"}),
    ({"type": "object", "required": []}, {"type": "object"}),
    ({"type": ["integer", "number"]}, {"type": "number"}),
]
DIFFERENT = [
    ({"type": "integer", "exclusiveMaximum": 10}, {"type": "integer", "maximum": 10}),
    ({"type": "number", "exclusiveMaximum": 10}, {"type": "number", "maximum": 9}),
    ({"type": ["string", "null"]}, {"type": "string"}),
    ({"enum": ["a", "b"]}, {"const": "a"}),
    ({"type": "string", "minLength": 1}, {"type": "string"}),
    ({"type": "object", "additionalProperties": False}, {"type": "object"}),
]


def _forms(a: dict[str, Any], b: dict[str, Any]) -> tuple[str, str]:
    return (
        validation_form({k: a[k] for k in validation_keys(a, b)}),
        validation_form({k: b[k] for k in validation_keys(b, a)}),
    )


@pytest.mark.parametrize(("a", "b"), EQUIVALENT)
def test_equivalent_spellings_have_one_form_and_compare_cosmetic(a: dict[str, Any], b: dict[str, Any]) -> None:
    fa, fb = _forms(a, b)
    assert fa == fb
    findings = compare(with_schema(schema_of({"x": a})), with_schema(schema_of({"x": b})), NO_OPTIONS)
    assert [(f.rule, f.cls) for f in findings] == [("schema-equivalent", "cosmetic")]


@pytest.mark.parametrize(("a", "b"), DIFFERENT)
def test_different_schemas_are_not_settled(a: dict[str, Any], b: dict[str, Any]) -> None:
    fa, fb = _forms(a, b)
    assert fa != fb
    findings = compare(with_schema(schema_of({"x": a})), with_schema(schema_of({"x": b})), NO_OPTIONS)
    assert findings and all(f.rule != "schema-equivalent" for f in findings)


_BOUND = st.one_of(st.integers(-20, 20), st.floats(-20, 20, allow_nan=False).map(lambda x: round(x, 1)))
_INTEGER_SCHEMA = st.fixed_dictionaries(
    {"type": st.sampled_from(["integer", ["integer"]])},
    optional={
        "maximum": _BOUND,
        "minimum": _BOUND,
        "exclusiveMaximum": _BOUND,
        "exclusiveMinimum": _BOUND,
        "minLength": st.integers(0, 3),
    },
)


@settings(max_examples=examples(300), deadline=None)
@given(_INTEGER_SCHEMA, _INTEGER_SCHEMA)
def test_one_form_means_jsonschema_accepts_the_same_integers(a: dict[str, Any], b: dict[str, Any]) -> None:
    fa, fb = _forms(a, b)
    accepts = [[jsonschema.Draft202012Validator(s).is_valid(n) for n in range(-25, 26)] for s in (copy.deepcopy(a), b)]
    if fa == fb:  # settled as cosmetic only when no integer is told apart
        assert accepts[0] == accepts[1], (a, b)
    # and a schema always has the form of its own rewrite as inclusive integer bounds
    tight = {"type": "integer"}
    accepted = [n for n, yes in zip(range(-25, 26), accepts[0], strict=True) if yes]
    if accepted and accepted[0] > -25 and accepted[-1] < 25 and accepted == list(range(accepted[0], accepted[-1] + 1)):
        tight.update(minimum=accepted[0], maximum=accepted[-1])
        assert _forms(a, tight)[0] == _forms(tight, a)[0], (a, tight)
