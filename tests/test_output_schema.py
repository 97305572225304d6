"""``output-schema`` findings: a live tool result checked against the outputSchema the live
server declared in the same session (``output_schema.py``), on a real FastMCP server (the
official ``mcp`` SDK, 1.x) recorded through the proxy and replayed through the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, command, record_through_proxy, replay
from mcp_replay_action.compare.output_schema import OutputSchemas, new_violations

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"  # FastMCP lives in the 1.x SDK
TYPED = SERVERS / "typed_server.py"


def typed(*flags: str) -> str:
    return command(SDK1_PYTHON, TYPED, *flags)


async def session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    result = await client.call_tool("stats", {"values": [1, 2, 4]})
    assert result.structured_content is not None, result
    await client.call_tool("echo", {"text": "hi"})
    await client.call_tool("event", {"title": "launch"})
    return {}


@pytest.fixture
def cassette(typed_cassette: Path) -> Path:
    return typed_cassette


def schema_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [f for f in findings if f["kind"] == "output-schema"]


def test_a_conforming_server_replays_clean(cassette: Path, tmp_path: Path) -> None:
    run = replay(typed(), cassette, report=tmp_path / "r.json")
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()


def test_a_result_that_breaks_its_declared_schema_is_breaking(cassette: Path, tmp_path: Path) -> None:
    run = replay(typed("--regressed"), cassette, report=tmp_path / "r.json")
    assert run.code == 1, run.describe()
    found = schema_findings(run.findings())
    assert {(f["name"], f["class"]) for f in found} == {("stats", "breaking")}, run.describe()
    by_path = {f["path"]: f for f in found}
    # The count is a string; the validator's best account names it (the $ref'd range too breaks).
    schema_error = next(f for f in found if f["path"].startswith("$.result.structuredContent"))
    assert schema_error["path"] in ("$.result.structuredContent.count", "$.result.structuredContent.range.low")
    assert "does not match the outputSchema of tool stats" in schema_error["message"], schema_error
    # The text copy still holds the old numbers: it is not the JSON of structuredContent.
    text = by_path["$.result.content[0].text"]
    assert "other than structuredContent" in text["message"] and "count" in text["message"], text
    assert "does not match the outputSchema of tool stats" in run.stdout, run.describe()


def test_an_unchanged_answer_is_checked_against_the_live_schema(cassette: Path, tmp_path: Path) -> None:
    """The answer equals its recording; only the live declaration moved (``count`` a string)."""
    run = replay(typed("--same-answer"), cassette, report=tmp_path / "r.json")
    assert run.code == 1, run.describe()
    found = schema_findings(run.findings())
    assert [(f["name"], f["path"]) for f in found] == [("stats", "$.result.structuredContent.count")], run.describe()
    assert "is not of type 'string'" in found[0]["message"], found[0]
    stats = next(i for i in run.interactions() if i["method"] == "tools/call" and i["name"] == "stats")
    assert [f["kind"] for f in stats["findings"]] == ["output-schema"], stats


def listing(schema: Any) -> dict[str, Any]:
    return {"result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}, "outputSchema": schema}]}}


def call(structured: Any, text: str | None = None, is_error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [] if text is None else [{"type": "text", "text": text}]}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return {"result": result}


SENT = {"method": "tools/call", "params": {"name": "t", "arguments": {}}}


def test_the_check_itself() -> None:
    outputs = OutputSchemas()
    outputs.learn(
        listing({"type": "object", "properties": {"n": {"$ref": "#/$defs/N"}}, "$defs": {"N": {"type": "integer"}}})
    )
    assert outputs.check(SENT, call({"n": 1}, '{"n": 1}')) == ()
    assert [f.path for f in outputs.check(SENT, call({"n": "1"}))] == ["$.result.structuredContent.n"]
    assert [f.message for f in outputs.check(SENT, call(None, "1"))] == [
        "tool t declares an outputSchema and its result has no structuredContent"
    ]
    assert outputs.check(SENT, call(None, "boom", is_error=True)) == ()  # an error result needs none
    # Prose, or a JSON text that is not an object, claims nothing.
    assert outputs.check(SENT, call({"n": 1}, "n is 1")) == ()
    assert outputs.check(SENT, call({"n": 1}, "[1]")) == ()
    # The SDKs wrap a str return (here JSON text) under "result": the text is that value.
    wrapped = '{"id": "e-1"}'
    assert outputs.check(SENT, call({"result": wrapped}, wrapped)) == ()
    assert outputs.check(SENT, call({"result": {"id": "e-1"}}, wrapped)) == ()
    assert [f.rule for f in outputs.check(SENT, call({"result": "other"}, wrapped))] == ["output-text-disagrees"]
    # A $ref that leads nowhere is said, not raised; nothing is fetched.
    outputs.learn(listing({"$ref": "https://example.invalid/schema.json"}))
    (unresolved,) = outputs.check(SENT, call({"n": 1}))
    assert "does not resolve" in unresolved.message
    outputs.learn(listing({"type": 12}))
    (invalid,) = outputs.check(SENT, call({"n": 1}))
    assert "not a valid JSON Schema" in invalid.message


def test_a_violation_the_recording_already_showed_is_not_a_finding(tmp_path: Path) -> None:
    # The server broke its own schema when it was recorded: replaying it unchanged is clean (a
    # gate that fails a server against its own recording cries wolf); the healthy build replayed
    # against that recording changed values, not its schema conformance.
    if not SDK1_PYTHON.exists():
        pytest.skip("tests/run.sh builds tests/servers/.venv-sdk1 (the 1.x SDK)")
    # The SDK client refuses a result that breaks its schema, so the recording is made the way a
    # user accepts a change: the healthy recording rewritten with the regressed build's answers.
    path = tmp_path / "regressed.jsonl"
    record_through_proxy(typed(), path, session)
    accepted = replay(typed("--regressed"), path, "--update", report=tmp_path / "update.json", gate=False)
    assert schema_findings(accepted.findings()), accepted.describe()  # the first time, it is new
    run = replay(typed("--regressed"), path, report=tmp_path / "again.json")
    assert schema_findings(run.findings()) == [], run.describe()
    assert run.code == 0, run.describe()


def test_a_first_leg_asking_for_input_is_not_the_tools_output() -> None:
    outputs = OutputSchemas()
    outputs.learn(listing({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
    first_leg = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s1"}}
    assert outputs.check(SENT, first_leg) == ()
    complete = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": []}}
    assert [f.rule for f in outputs.check(SENT, complete)] == ["output-schema"]


def test_only_new_violations_are_kept() -> None:
    outputs = OutputSchemas()
    outputs.learn(listing({"type": "object", "properties": {"n": {"type": "integer"}, "m": {"type": "integer"}}}))
    was = outputs.check(SENT, call({"n": "1", "m": 2}))
    now = outputs.check(SENT, call({"n": "1", "m": "2"}))
    assert [f.path for f in new_violations(now, was)] == [f.path for f in now if f.path != was[0].path]
    assert new_violations(now, ()) == now
