"""``subscriptions/listen`` (2026-07-28) recorded and replayed (``streams.py``): the stream's
notifications compared as what arrived within the recorded window.

The server is ``tests/servers/listen_server.py`` on the official ``mcp`` SDK 2.x, whose own
listen handler serves the stream; the client is the same SDK's ``Client.listen``, recording
through the real proxy (stdio, and Streamable HTTP with the HTTP proxy and ``--url``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from e2e_helpers import PYTHON, SERVERS, cassette_lines, command, record_through_proxy, replay, run_cli
from http_helpers import free_port, record_via_cli, running
from mcp_replay_action.cassette import load
from mcp_replay_action.errors import CassetteError
from mcp_replay_action.replay.streams import ACK, Window, compare_stream

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SERVER = SERVERS / "listen_server.py"


def server(*args: str) -> str:
    return command(PYTHON, SERVER, *args)


async def session(client: Client) -> dict[str, Any]:
    async with client.listen(
        resource_subscriptions=["notes://todo"], resources_list_changed=True, tools_list_changed=True
    ):
        await client.call_tool("write", {"name": "todo", "text": "eggs"})
        await client.call_tool("create", {"name": "later"})
        await client.call_tool("write", {"name": "todo", "text": "bread"})
        await anyio.sleep(0.5)  # the last events reach the client before it closes the stream
    await client.call_tool("create", {"name": "unheard"})  # after the stream: outside its window
    return {}


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("listen") / "listen.jsonl"
    record_through_proxy(server(), path, session)
    return path


def on_stream(lines: list[dict[str, Any]], sid: Any) -> list[str]:
    return [
        line["message"]["method"]
        for line in lines
        if line["kind"] == "server-notification"
        and (line["message"].get("params") or {}).get("_meta", {}).get("io.modelcontextprotocol/subscriptionId") == sid
    ]


def test_the_recording_keeps_the_listen_request_and_its_stream(cassette: Path) -> None:
    header, *lines = cassette_lines(cassette)
    assert header["meta"]["era"] == "stateless"
    assert not header["meta"].get("unanswered"), header["meta"]  # a stream is not an unanswered request
    (listen,) = [line for line in lines if line["message"].get("method") == "subscriptions/listen"]
    assert listen["kind"] == "request" and listen["response"] is None
    stream = on_stream(lines, listen["message"]["id"])
    assert stream[0] == ACK
    assert sorted(stream[1:3]) == ["notifications/resources/list_changed", "notifications/resources/updated"], stream


def test_the_same_build_replays_its_stream_clean(cassette: Path, tmp_path: Path) -> None:
    run = replay(server(), cassette, report=tmp_path / "r.json")
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()
    (listen,) = [i for i in run.interactions() if i["method"] == "subscriptions/listen"]
    assert listen["status"] == "pass"


def test_an_update_the_build_no_longer_sends_is_caught(cassette: Path, tmp_path: Path) -> None:
    run = replay(server("--quiet"), cassette, report=tmp_path / "r.json", gate=False)
    found = [(f["method"], f["rule"], f["class"], f["path"]) for f in run.findings()]
    assert found == [
        (
            "subscriptions/listen",
            "item-removed",
            "breaking",
            "$.stream[method=notifications/resources/updated]",
        )
    ], run.describe()
    (missing,) = run.findings()
    recorded = on_stream(cassette_lines(cassette)[1:], "listen-1").count("notifications/resources/updated")
    assert (missing["before"], missing["after"]) == (recorded, 0)
    assert run.code == 1


def test_an_event_the_recording_never_saw_is_additive(cassette: Path, tmp_path: Path) -> None:
    run = replay(server("--extra"), cassette, report=tmp_path / "r.json", gate=False)
    found = [(f["rule"], f["class"], f["path"]) for f in run.findings()]
    assert found == [("item-added", "additive", "$.stream[method=notifications/tools/list_changed]")], run.describe()
    assert run.code == 0  # additive: the default gate passes


def note(method: str, **params: Any) -> dict[str, Any]:
    meta = {"_meta": {"io.modelcontextprotocol/subscriptionId": "s"}}
    return {"jsonrpc": "2.0", "method": method, "params": {**meta, **params}}


def test_events_in_another_order_are_the_same_stream() -> None:
    ack = note(ACK, notifications={"toolsListChanged": True})
    a, b = note("notifications/resources/updated", uri="x://a"), note("notifications/tools/list_changed")
    assert compare_stream(Window([ack, a, b, a]), Window([ack, a, a, b])) == ()
    other = note(ACK, notifications={"toolsListChanged": True, "resourcesListChanged": True})
    (changed,) = compare_stream(Window([ack, a]), Window([other, a]))
    assert (changed.rule, changed.before, changed.after) == (
        "value-changed",
        {"toolsListChanged": True},
        {"toolsListChanged": True, "resourcesListChanged": True},
    )
    (late,) = compare_stream(Window([ack, a]), Window([a]))
    assert late.rule == "item-removed" and late.path == f"$.stream[method={ACK}]"


def test_the_cancellation_races_the_last_events_on_both_sides() -> None:
    ack, a = note(ACK), note("notifications/resources/updated", uri="x://a")
    # Recorded after the cancellation, heard live before it: not one more.
    assert compare_stream(Window([ack], late=[a]), Window([ack, a])) == ()
    # Recorded before it, heard live only after it: not missing.
    assert compare_stream(Window([ack, a]), Window([ack], late=[a])) == ()
    # Heard live only after it, never recorded: outside the window, not one more.
    assert compare_stream(Window([ack]), Window([ack], late=[a])) == ()
    (extra,) = compare_stream(Window([ack]), Window([ack, a]))
    assert (extra.rule, extra.cls, extra.before, extra.after) == ("item-added", "additive", 0, 1)
    (gone,) = compare_stream(Window([ack, a, a]), Window([ack, a]))
    assert (gone.rule, gone.cls, gone.before, gone.after) == ("item-removed", "breaking", 2, 1)


def test_only_a_listen_request_may_have_no_response(tmp_path: Path) -> None:
    header = {"schema": "mcp-replay/cassette@1", "meta": {}}

    def line(method: str) -> str:
        message = {"jsonrpc": "2.0", "id": 1, "method": method}
        return json.dumps({"seq": 0, "kind": "request", "message": message, "response": None})

    ok = tmp_path / "ok.jsonl"
    ok.write_text(json.dumps(header) + "\n" + line("subscriptions/listen") + "\n")
    assert load(str(ok)).interactions[0].response is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(header) + "\n" + line("tools/list") + "\n")
    with pytest.raises(CassetteError) as err:
        load(str(bad))
    assert err.value.line == 2


def test_over_streamable_http_the_stream_records_and_replays(tmp_path: Path) -> None:
    # The listen answer is an SSE stream that never ends: the HTTP recording proxy passes it
    # through as it arrives, and the replay's HTTP transport reads it on its own thread.
    path = tmp_path / "listen-http.jsonl"

    def http_server(*args: str) -> Any:
        port = free_port()
        return running([PYTHON, str(SERVER), "--http", str(port), *args], f"http://127.0.0.1:{port}/mcp")

    with http_server() as url:
        record_via_cli(url, path, session)
    (listen,) = [line for line in cassette_lines(path)[1:] if line["message"].get("method") == "subscriptions/listen"]
    assert listen["response"] is None and on_stream(cassette_lines(path)[1:], listen["message"]["id"])[0] == ACK
    with http_server() as url:
        clean = run_cli("replay", "--url", url, "--cassette", path, report=tmp_path / "a.json")
    assert clean.code == 0 and clean.findings() == [], clean.describe()
    with http_server("--quiet") as url:
        quiet = run_cli("replay", "--url", url, "--cassette", path, report=tmp_path / "b.json")
    assert [(f["method"], f["rule"]) for f in quiet.findings()] == [("subscriptions/listen", "item-removed")], (
        quiet.describe()
    )
