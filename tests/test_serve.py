"""The mock server: matching strategies on hand-made cassettes, stdio and HTTP framing, and the
official SDK client completing a recorded session against ``mcp-replay serve`` (stdio and HTTP)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from http_helpers import PYTHON, REPO, cli_process, fast_http, free_port, sdk_session
from mcp_replay_action.cassette import load, with_lines
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.record.http_proxy import RecordingProxy
from mcp_replay_action.serve import METHOD_NOT_FOUND, NO_MATCH, MockHttpServer, Responder, serve_stdio
from mcp_replay_action.transport.http_client import HttpTransport

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def req(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def ok(id_: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


def add(a: int, b: int, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "add", "arguments": {"a": a, "b": b}}
    if meta:
        params["_meta"] = meta
    return params


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}]}


def make_cassette(*entries: tuple[str, dict[str, Any], dict[str, Any] | None], **stamps: Any) -> Cassette:
    inters = []
    for seq, (kind, message, response) in enumerate(entries, start=1):
        ts, latency = stamps.get(f"t{seq}", (float(seq), None))
        inters.append(
            Interaction(seq=seq, kind=kind, message=message, response=response, ts=ts, latency_ms=latency)  # type: ignore[arg-type]
        )
    return with_lines(Cassette(meta={}, interactions=tuple(inters), path="c.jsonl"))


INIT_RESULT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "s", "version": "1"},
}
BASIC = make_cassette(
    (
        "request",
        req(1, "initialize", {"protocolVersion": "2025-06-18", "clientInfo": {"name": "rec"}}),
        ok(1, INIT_RESULT),
    ),
    ("notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
    ("request", req(2, "tools/call", add(1, 2)), ok(2, text("3"))),
    ("request", req(3, "tools/call", add(1, 2)), ok(3, text("three"))),
    ("request", req(4, "tools/call", add(5, 5)), ok(4, text("10"))),
)


# -- matching --------------------------------------------------------------------------------------


def test_method_params_answers_repeats_in_recorded_order_then_repeats_the_last() -> None:
    r = Responder(BASIC)
    answers = [r.answer(req(i, "tools/call", add(1, 2, progressToken=i))) for i in (10, 11, 12)]
    assert [a.response["result"]["content"][0]["text"] for a in answers if a] == ["3", "three", "three"]
    assert [a.response["id"] for a in answers if a] == [10, 11, 12]  # the live ids, not the recorded ones
    assert r.answer(req(13, "tools/call", add(5, 5))).response["result"] == text("10")  # type: ignore[union-attr]


def test_handshake_matches_any_client_version() -> None:
    r = Responder(BASIC)
    answer = r.answer(req("a", "initialize", {"protocolVersion": "2024-11-05", "clientInfo": {"name": "other"}}))
    assert answer is not None and answer.response == {"jsonrpc": "2.0", "id": "a", "result": INIT_RESULT}
    assert r.answer({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None


def test_unmatched_request_names_the_closest_recording_and_is_logged(capsys: pytest.CaptureFixture[str]) -> None:
    r = Responder(BASIC)
    answer = r.answer(req(7, "tools/call", add(1, 3)))
    assert answer is not None and "result" not in answer.response
    error = answer.response["error"]
    assert error["code"] == NO_MATCH
    assert "no recorded answer for tools/call" in error["message"]
    assert 'closest recorded request: line 4 tools/call {"arguments":{"a":1,"b":2},"name":"add"}' in error["message"]
    assert error["data"]["closest"]["line"] == 4
    # The client reads where the error came from; the log line says it once.
    assert error["message"].startswith("mcp-replay serve: no recorded answer for tools/call")
    logged = capsys.readouterr().err
    assert logged.startswith("mcp-replay: serve: no recorded answer for tools/call"), logged
    assert "mcp-replay: mcp-replay" not in logged
    unknown = r.answer(req(8, "prompts/list"))
    assert unknown is not None and unknown.response["error"]["code"] == METHOD_NOT_FOUND
    assert r.stats.unmatched == 2


def test_sequential_ignores_params_but_not_the_method() -> None:
    r = Responder(BASIC, "sequential")
    assert r.answer(req(1, "initialize", {}))
    assert r.answer(req(2, "tools/call", add(9, 9))).response["result"] == text("3")  # type: ignore[union-attr]
    wrong = r.answer(req(3, "tools/list"))
    assert wrong is not None and "closest recorded request: line 5 tools/call" in wrong.response["error"]["message"]


def test_strict_needs_identical_params_including_meta_but_not_progress_tokens() -> None:
    rec = make_cassette(("request", req(1, "tools/call", add(1, 2, progressToken=1, trace="x")), ok(1, text("3"))))
    def answered(strategy: str, message: dict[str, Any]) -> bool:
        answer = Responder(rec, strategy).answer(message)
        assert answer is not None
        return "result" in answer.response  # the recording's answer, not the no-match error

    assert answered("strict", req(5, "tools/call", add(1, 2, progressToken=99, trace="x")))
    assert not answered("strict", req(5, "tools/call", add(1, 2, trace="y")))
    assert answered("method_params", req(5, "tools/call", add(1, 2, trace="y")))


def test_unknown_strategy_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown --match"):
        Responder(BASIC, "fuzzy")


def test_server_messages_recorded_during_a_request_come_first_with_live_progress_tokens() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 4, "progress": 1}}
    late = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    rec = make_cassette(
        ("request", req(4, "tools/call", {"name": "count", "_meta": {"progressToken": 4}}), ok(4, text("done"))),
        ("server-notification", note, None),
        ("server-notification", late, None),
        t1=(1.0, 500.0),
        t2=(1.2, None),
        t3=(2.0, None),
    )
    answer = Responder(rec).answer(req(9, "tools/call", {"name": "count", "_meta": {"progressToken": "live"}}))
    assert answer is not None
    assert answer.before == ({**note, "params": {"progressToken": "live", "progress": 1}},)
    assert answer.after == (late,)


def test_the_progress_of_a_long_call_written_before_it_is_sent_while_it_is_open() -> None:
    # A request open over 2 s is written where its answer arrives, after its own progress (as
    # recorded from jcodemunch-mcp indexing 278 files): it is the long call's, not the one before.
    listed = req(1, "tools/list")
    call = req(2, "tools/call", {"name": "index", "_meta": {"progressToken": 2}})
    step = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 2, "progress": 1}}
    rec = make_cassette(
        ("request", listed, ok(1, {"tools": []})),
        ("server-notification", step, None),
        ("request", call, ok(2, text("indexed"))),
        t1=(1.0, 5.0),
        t2=(2.5, None),
        t3=(1.1, 4000.0),
    )
    responder = Responder(rec, "sequential")
    first = responder.answer(req(7, "tools/list"))
    assert first is not None and first.before == () and first.after == ()
    second = responder.answer(req(8, "tools/call", {"name": "index", "_meta": {"progressToken": "live"}}))
    assert second is not None
    assert second.before == ({**step, "params": {"progressToken": "live", "progress": 1}},)


# -- framing ---------------------------------------------------------------------------------------


def test_serve_stdio_answers_line_by_line() -> None:
    lines = [
        json.dumps(req(1, "initialize", {"protocolVersion": "2025-03-26"})),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "this is not json",
        json.dumps(req(2, "tools/call", add(5, 5))),
    ]
    out = io.BytesIO()
    stats = serve_stdio(BASIC, stdin=io.BytesIO(("\n".join(lines) + "\n").encode()), stdout=out)
    answers = [json.loads(x) for x in out.getvalue().decode().splitlines()]
    assert [a.get("id") for a in answers] == [1, None, 2]
    assert answers[1]["error"]["code"] == -32700
    assert answers[2]["result"] == text("10")
    assert stats.answered == 2 and stats.notifications == 1


def test_mock_http_json_and_sse_answers_sessions_and_delete() -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    rec = make_cassette(
        ("request", req(1, "initialize", {}), ok(1, INIT_RESULT)),
        ("request", req(2, "tools/call", {"name": "talk"}), ok(2, text("said"))),
        ("server-notification", note, None),
    )
    with MockHttpServer(rec) as mock:
        t = HttpTransport(mock.url, listen=True)
        t.start()
        try:
            t.send(req(1, "initialize", {"protocolVersion": "2025-06-18"}))
            assert t.receive(5)["result"] == INIT_RESULT
            t.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            t.send(req(2, "tools/call", {"name": "talk"}))
            assert t.receive(5) == note
            assert t.receive(5)["result"] == text("said")
            assert t.transport_facts(1)["sse"] is False and t.transport_facts(2)["sse"] is True
            assert t._session_id is not None
        finally:
            t.close()
        assert mock.stats.answered == 2
        bad = httpx.post(mock.url, content=b"{nope", timeout=5)
        assert bad.status_code == 400 and bad.json()["error"]["code"] == -32700


# -- the official SDK client against `mcp-replay serve` --------------------------------------------


async def tasks_script(client: Client) -> dict[str, Any]:
    """A session touching plain results, progress before a result, and a minted id."""
    seen: dict[str, Any] = {"progress": []}

    async def progress(p: float, total: float | None, message: str | None) -> None:
        seen["progress"].append(p)

    seen["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
    seen["add"] = (await client.call_tool("add", {"a": 2, "b": 3})).content[0].text  # type: ignore[union-attr]
    seen["count"] = (await client.call_tool("count", {"n": 3}, progress_callback=progress)).content[0].text  # type: ignore[union-attr]
    created = await client.call_tool("create_task", {"title": "write tests"})
    seen["task"] = created.structured_content
    got = await client.call_tool("get_task", {"task_id": created.structured_content["id"]})  # type: ignore[index]
    seen["got"] = got.structured_content
    return seen


async def unrecorded_call(client: Client) -> dict[str, Any]:
    try:
        result = await client.call_tool("add", {"a": 40, "b": 2})
    except MCPError as exc:
        return {"error": str(exc)}
    return {"result": result}


@pytest.fixture(scope="module", params=["legacy", "auto"], ids=["handshake-era", "stateless-era"])
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A real session with the SDK task server over HTTP, recorded through the proxy."""
    path = tmp_path_factory.mktemp("serve") / f"{request.param}.jsonl"
    with fast_http() as upstream, RecordingProxy(upstream, cassette_path=str(path)) as proxy:
        seen = sdk_session(proxy.url, tasks_script, mode=request.param)
    proxy.save(force=True)
    return path, seen


def check_same_session(seen: dict[str, Any], live: dict[str, Any]) -> None:
    for key in ("tools", "add", "count", "task", "got", "protocol_version"):
        assert live[key] == seen[key], key
    assert live["progress"] == [1.0, 2.0, 3.0]


def test_sdk_client_against_serve_over_stdio(recorded: tuple[Path, dict[str, Any]]) -> None:
    path, seen = recorded
    params = StdioServerParameters(
        command=PYTHON, args=["-m", "mcp_replay_action", "serve", "--cassette", str(path)], cwd=str(REPO)
    )
    check_same_session(seen, sdk_session(params, tasks_script))
    refused = sdk_session(params, unrecorded_call)
    assert "no recorded answer for tools/call" in refused["error"]
    assert "closest recorded request: line" in refused["error"]


def test_sdk_client_against_serve_over_http(recorded: tuple[Path, dict[str, Any]]) -> None:
    path, seen = recorded
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with cli_process("serve", "--cassette", path, "--listen", f"127.0.0.1:{port}", url=url) as proc:
        check_same_session(seen, sdk_session(url, tasks_script))
        refused = sdk_session(url, unrecorded_call)
    assert "no recorded answer for tools/call" in refused["error"]
    assert "closest recorded request: line" in refused["error"]
    log = proc.stderr.read().decode() if proc.stderr else ""
    assert "no recorded answer for tools/call" in log  # the unmatched request is logged
    assert proc.returncode == 0


def test_recorded_http_cassette_is_loadable_and_transport_facts_are_kept(recorded: tuple[Path, dict[str, Any]]) -> None:
    path, _ = recorded
    cassette = load(path)
    calls = [i for i in cassette.interactions if i.kind == "request"]
    assert calls and all(i.transport and i.transport["http_status"] == 200 for i in calls)
    progress = [i for i in cassette.interactions if i.method == "notifications/progress"]
    assert len(progress) == 3
