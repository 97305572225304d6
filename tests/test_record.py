"""The stdio recording proxy: pairing rules, byte transparency, redaction on disk, shutdown and
periodic saves; end to end with the official MCP SDK as the client and real servers behind it."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import load
from mcp_replay_action.cassette.header import session_facts
from mcp_replay_action.record.stdio_proxy import record_stdio
from mcp_replay_action.record.tape import Tape
from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_rules import PLACEHOLDER

FAKES = Path(__file__).parent / "fakes"
ROOT = Path(__file__).resolve().parent.parent
EVERYTHING = Path(__file__).parent / "servers" / "node_modules" / ".bin" / "mcp-server-everything"
TIME_SERVER = Path(sys.executable).parent / "mcp-server-time"
PY = sys.executable
PROXY = [PY, str(Path(__file__).parent / "stdio_proxy_cli.py")]  # record_stdio as a command of its own
OPENAI_KEY = "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ"
GH_TOKEN = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def req(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def ok(id_: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "result": result}


INIT = req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})


def proxy_argv(server: str, cassette: Path, *extra: str) -> list[str]:
    return [*PROXY, "--server", server, "--cassette", str(cassette), *extra]


def run_proxy(
    server: str, cassette: Path, stdin: bytes, *extra: str, timeout: float = 60
) -> subprocess.CompletedProcess:
    return subprocess.run(proxy_argv(server, cassette, *extra), input=stdin, capture_output=True, timeout=timeout)


# -- the tape: pairing rules -------------------------------------------------------------------------


def test_tape_pairs_by_id_per_direction():
    tape = Tape(Redactor(), t0=0.5)
    tape.client_line(line(req(5, "tools/call", {"name": "where"})), 1.0)
    tape.server_line(line(req(5, "roots/list")), 1.1)  # the same id, the other direction
    tape.server_line(line({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}), 1.15)
    tape.client_line(line(ok(5, {"roots": []})), 1.2)  # answers the server's request
    tape.client_line(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}), 1.25)
    tape.server_line(line(ok(5, {"content": []})), 1.3)  # answers the client's request
    got = tape.interactions()
    assert [(i.seq, i.kind, i.method) for i in got] == [
        (0, "request", "tools/call"),
        (1, "server-request", "roots/list"),
        (2, "server-notification", "notifications/progress"),
        (3, "notification", "notifications/cancelled"),
    ]
    assert got[0].response == ok(5, {"content": []})
    assert got[1].response == ok(5, {"roots": []})
    assert got[0].latency_ms == pytest.approx(300.0)
    assert got[0].ts == pytest.approx(0.5)


def test_tape_orders_by_first_message_and_drops_unanswered():
    tape = Tape(Redactor())
    tape.t0 = 0.0
    tape.client_line(line(req(1, "slow")), 1.0)
    tape.client_line(line(req(2, "fast")), 2.0)
    tape.client_line(line(req(3, "never")), 2.5)
    tape.server_line(line(ok(2, {})), 3.0)
    tape.server_line(line(ok(1, {})), 4.0)  # answered last, but asked first: it stays first
    tape.server_line(line(ok(99, {})), 4.5)  # nobody asked
    tape.server_line(b"Server started\n", 4.6)
    got = tape.interactions()
    assert [i.method for i in got] == ["slow", "fast"]
    assert [i.ts for i in got] == [1.0, 2.0]
    assert tape.unanswered == 1 and tape.unmatched_responses == 1 and tape.non_json_lines == 1


def test_tape_keeps_numeric_and_string_ids_apart_and_reads_batches():
    tape = Tape(Redactor())
    tape.client_line(b"[" + line(req(1, "a")).strip() + b"," + line(req("1", "b")).strip() + b"]\n", 1.0)
    tape.server_line(line(ok("1", {"x": "b"})), 1.1)
    tape.server_line(line(ok(1, {"x": "a"})), 1.2)
    got = {i.method: i.response for i in tape.interactions()}
    assert got == {"a": ok(1, {"x": "a"}), "b": ok("1", {"x": "b"})}


def test_tape_redacts_once_as_messages_arrive():
    redactor = Redactor()
    tape = Tape(redactor)
    tape.client_line(line(req(1, "tools/call", {"name": "login", "arguments": {"password": "hunter2"}})), 1.0)
    tape.server_line(line(ok(1, {"content": [{"type": "text", "text": f"token {OPENAI_KEY}"}]})), 1.1)
    for _ in range(3):  # saving repeatedly neither re-redacts nor re-counts
        (inter,) = tape.interactions()
    assert inter.message["params"]["arguments"] == {"password": PLACEHOLDER}
    assert inter.response is not None and inter.response["result"]["content"][0]["text"] == f"token {PLACEHOLDER}"
    assert redactor.rules()["hits"] == {"known-prefixes": 1, "secret-keys": 1}


def test_tape_places_each_interaction_once_it_and_all_before_it_are_complete():
    tape = Tape(Redactor(), t0=0.0)
    tape.client_line(line(req(1, "tools/call", {"name": "slow"})), 1.0)
    tape.server_line(line({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}), 1.1)
    assert tape.place(hold=2.0, now=1.2) == []  # the progress waits behind its open call
    tape.server_line(line(ok(1, {})), 1.5)
    placed = tape.place(hold=2.0, now=1.6)
    assert [(i.seq, i.method) for i in placed] == [(0, "tools/call"), (1, "notifications/progress")]
    assert tape.place(hold=2.0, now=1.7) == []  # each once


def test_an_open_request_holds_back_the_rest_for_at_most_the_hold_then_goes_where_it_is_answered():
    tape = Tape(Redactor(), t0=0.0)
    tape.client_line(line(req(1, "slow")), 1.0)
    tape.client_line(line(req(2, "quick")), 1.1)
    tape.server_line(line(ok(2, {})), 1.2)
    assert tape.place(hold=2.0, now=2.9) == []
    assert [(i.seq, i.method) for i in tape.place(hold=2.0, now=3.1)] == [(0, "quick")]
    tape.server_line(line(ok(1, {})), 5.0)  # answered at last: placed where its answer came
    assert [(i.seq, i.method, i.latency_ms) for i in tape.place(hold=2.0, now=5.1)] == [(1, "slow", 4000.0)]
    assert tape.unanswered == 0 and tape.amended() == []


def test_a_listen_is_placed_at_once_and_its_line_amended_when_the_stream_ends():
    tape = Tape(Redactor(), t0=0.0)
    tape.client_line(line(req(7, "subscriptions/listen", {})), 1.0)
    sid = {"_meta": {"io.modelcontextprotocol/subscriptionId": 7}}
    tape.server_line(line({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": sid}), 1.1)
    placed = tape.place(hold=2.0, now=1.2)
    assert [(i.seq, i.method, i.response) for i in placed] == [
        (0, "subscriptions/listen", None),
        (1, "notifications/tools/list_changed", None),
    ]
    tape.server_line(line(ok(7, {})), 9.0)  # the server closed the stream
    (amended,) = tape.amended()
    assert amended.seq == 0 and amended.response == ok(7, {})
    assert tape.amended() == [] and tape.unanswered == 0


def test_a_server_request_unanswered_past_the_hold_is_kept_and_amended_when_answered():
    tape = Tape(Redactor(), t0=0.0)
    tape.server_line(line(req("s1", "sampling/createMessage", {})), 1.0)
    assert [(i.kind, i.response) for i in tape.place(hold=2.0, now=3.5)] == [("server-request", None)]
    tape.client_line(line(ok("s1", {"content": {"type": "text", "text": "hi"}})), 4.0)
    assert [i.response for i in tape.amended()] == [ok("s1", {"content": {"type": "text", "text": "hi"}})]


def test_a_request_whose_id_is_reused_before_its_answer_is_never_placed():
    tape = Tape(Redactor(), t0=0.0)
    tape.client_line(line(req(1, "first")), 1.0)
    tape.client_line(line(req(1, "second")), 1.1)
    tape.server_line(line(ok(1, {})), 1.2)
    assert [i.method for i in tape.place(hold=2.0, now=1.3)] == ["second"]
    assert tape.unanswered == 1


def test_a_message_too_deep_to_redact_is_passed_on_never_recorded():
    tape = Tape(Redactor(), t0=0.0)
    tape.client_line(line(req(1, "tools/call", {"name": "deep"})), 1.0)
    deep = b'{"jsonrpc":"2.0","id":1,"result":{"v":' + b"[" * 950 + b"]" * 950 + b"}}\n"
    tape.server_line(deep, 1.1)  # parsed, too deep for the redactor's recursion
    tape.server_line(b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 5000 + b"]" * 5000 + b"}\n", 1.2)  # unparsed
    assert tape.interactions() == [] and tape.too_deep == 2 and tape.unanswered == 1


def test_session_facts_handshake_after_a_failed_discover_probe():
    tape = Tape(Redactor())
    discover = req(1, "server/discover", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    tape.client_line(line(discover), 1.0)
    tape.server_line(line({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}}), 1.1)
    tape.client_line(line(req(2, "initialize", {"protocolVersion": "2025-11-25"})), 1.2)
    tape.server_line(line(ok(2, {"protocolVersion": "2025-06-18", "serverInfo": {"name": "s", "version": "1"}})), 1.3)
    assert session_facts(tape.interactions()) == {
        "era": "handshake",
        "protocol_version": "2025-06-18",
        "server_info": {"name": "s", "version": "1"},
    }


def test_session_facts_stateless():
    tape = Tape(Redactor())
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    tape.client_line(line(req(1, "server/discover", {"_meta": meta})), 1.0)
    info = {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "2"}}
    tape.server_line(line(ok(1, {"supportedVersions": ["2026-07-28"], "_meta": info})), 1.1)
    assert session_facts(tape.interactions()) == {
        "era": "stateless",
        "protocol_version": "2026-07-28",
        "server_info": {"name": "s", "version": "2"},
    }
    assert session_facts(()) == {"era": None, "protocol_version": None, "server_info": None}


# -- the proxy as a process ----------------------------------------------------------------------------


def test_every_byte_passes_unchanged(tmp_path):
    client_bytes = (
        line(INIT)
        + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
        + b'{ "jsonrpc" : "2.0", "id" : "a\\u00e9", "method" : "ping" }   \n'
        + b"not json from the client\n"
        + line(req(2, "tools/list"))
    )
    server = f"{PY} {FAKES / 'quirky_server.py'}"
    direct = subprocess.run([PY, str(FAKES / "quirky_server.py")], input=client_bytes, capture_output=True, timeout=30)
    proxied = run_proxy(server, tmp_path / "c.jsonl", client_bytes)
    assert proxied.returncode == 0, proxied.stderr
    assert proxied.stdout == direct.stdout  # byte for byte: spacing, escapes, CRLF, stray lines
    cassette = load(tmp_path / "c.jsonl")
    requests = [i for i in cassette.interactions if i.kind == "request"]
    assert [i.message["id"] for i in requests] == [0, "aé", 2]
    assert all(i.response and i.response["result"] == {"t": "é"} for i in requests)
    assert cassette.meta["non_json_lines"] == 3
    assert cassette.meta["unanswered"] == 0


def test_secrets_stay_off_disk_but_reach_the_client(tmp_path):
    cassette_path = tmp_path / "c.jsonl"
    call = req(1, "tools/call", {"name": "echo", "arguments": {"api_key": OPENAI_KEY, "note": f"Bearer {GH_TOKEN}"}})
    server = f"{PY} {FAKES / 'echo_server.py'} --api-key {OPENAI_KEY} --token hunter2"
    result = run_proxy(server, cassette_path, line(INIT) + line(call), "--redact", "note")
    assert OPENAI_KEY.encode() in result.stdout  # the client sees the real answer
    text = cassette_path.read_text()
    for secret in (OPENAI_KEY, GH_TOKEN, "hunter2"):
        assert secret not in text
    cassette = load(cassette_path)
    assert cassette.meta["server"][-4:] == ["--api-key", PLACEHOLDER, "--token", PLACEHOLDER]
    structured = cassette.interactions[1].response["result"]["structuredContent"]  # type: ignore[index]
    assert structured == {"api_key": PLACEHOLDER, "note": PLACEHOLDER}
    assert cassette.meta["redaction"]["keys"] == ["note"]
    assert cassette.meta["redaction"]["hits"]["secret-keys"] >= 4


def test_values_given_in_the_server_env_are_redacted_wherever_they_appear(tmp_path):
    """Every ``env`` value is a secret whatever its name (issue 20 item 3), except a variable
    declared public, which is recorded as it is."""
    cassette_path = tmp_path / "c.jsonl"
    server = (
        "import json, os, sys\n"
        "for line in sys.stdin:\n"
        "    msg = json.loads(line)\n"
        "    text = 'connected as ' + os.environ['SERVICE_TOKEN'] + ' at ' + os.environ['LOG_LEVEL']\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': msg['id'], 'result': {'text': text}}), flush=True)\n"
    )
    out = io.BytesIO()
    summary = record_stdio(
        [PY, "-c", server],
        str(cassette_path),
        env={"SERVICE_TOKEN": "plain-looking-value", "LOG_LEVEL": "debug"},
        public_env=("LOG_LEVEL",),
        stdin=io.BytesIO(line(INIT)),
        stdout=out,
        stderr=io.BytesIO(),
    )
    assert summary.interactions == 1 and summary.ended_by == "client" and summary.saved
    assert b"connected as plain-looking-value at debug" in out.getvalue()
    cassette = load(cassette_path)
    assert cassette.interactions[0].response["result"]["text"] == f"connected as {PLACEHOLDER} at debug"
    assert cassette.meta["redaction"]["env"] == ["SERVICE_TOKEN"]  # the name, never the value
    assert "plain-looking-value" not in cassette_path.read_text()


def test_client_eof_stops_the_server_and_counts_unanswered(tmp_path):
    cassette_path = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        proxy_argv(f"{PY} {FAKES / 'hang_server.py'}", cassette_path, "--shutdown-grace", "0.2"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        # Wait for the initialize answer before the EOF: on a loaded machine a slow server start
        # would otherwise race the client's EOF and the grace period.
        proc.stdin.write(line(INIT))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        proc.stdin.write(line(req(1, "tools/call", {"name": "slow"})))
        proc.stdin.close()
        started = time.monotonic()
        assert proc.wait(timeout=60) == 0
        assert time.monotonic() - started < 30  # the server ignores EOF and SIGTERM: SIGKILL ended it
        stderr = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    cassette = load(cassette_path)
    assert [i.method for i in cassette.interactions] == ["initialize"]
    assert cassette.meta["unanswered"] == 1
    assert b"0 unanswered" not in stderr and b"1 unanswered" in stderr


def test_a_server_crash_ends_the_session_and_keeps_what_was_complete(tmp_path):
    cassette_path = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        proxy_argv(f"{PY} {FAKES / 'crash_server.py'}", cassette_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line(INIT))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        proc.stdin.write(line(req(1, "tools/call", {"name": "x"})))
        proc.stdin.flush()
        # The client keeps its end open; the proxy must still end when the server does.
        assert proc.wait(timeout=30) == 0
        assert proc.stderr is not None and b"RuntimeError: boom in tools/call" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    cassette = load(cassette_path)
    assert [i.method for i in cassette.interactions] == ["initialize"]
    assert cassette.meta["unanswered"] == 1


def test_saved_periodically_and_finally_on_sigterm(tmp_path):
    cassette_path = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        proxy_argv(f"{PY} {FAKES / 'echo_server.py'}", cassette_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for i in range(30):
            proc.stdin.write(line(req(i, "tools/call", {"name": "echo", "arguments": {"i": i}})))
            proc.stdin.flush()
            proc.stdout.readline()
        deadline = time.monotonic() + 20
        while not cassette_path.exists():  # written while the session is still open
            assert time.monotonic() < deadline, "no periodic save"
            time.sleep(0.05)
        assert len(load(cassette_path).interactions) >= 25
        assert proc.poll() is None
        proc.stdin.write(line(req(30, "tools/call", {"name": "echo", "arguments": {"i": 30}})))
        proc.stdin.flush()
        proc.stdout.readline()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    cassette = load(cassette_path)
    assert len(cassette.interactions) == 31
    assert [i.seq for i in cassette.interactions] == list(range(31))
    assert not list(tmp_path.glob(".c.jsonl.*"))  # no temp file left behind


def test_missing_server_is_a_clear_error(tmp_path):
    result = run_proxy("no-such-mcp-server-xyz", tmp_path / "c.jsonl", b"")
    assert result.returncode != 0
    assert b"server command not found: no-such-mcp-server-xyz" in result.stderr
    assert not (tmp_path / "c.jsonl").exists()


def test_nothing_recorded_leaves_an_existing_cassette_alone(tmp_path):
    cassette_path = tmp_path / "c.jsonl"
    cassette_path.write_text("precious\n")
    result = run_proxy(f"{PY} {FAKES / 'echo_server.py'}", cassette_path, b"")
    assert result.returncode == 0
    assert cassette_path.read_text() == "precious\n"


# -- end to end: the official SDK as the client -------------------------------------------------------


def sdk_params(command: str, args: list[str], env: dict[str, str] | None = None):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=command, args=args, env=env)


def via_proxy(server: str, cassette: Path, env: dict[str, str] | None = None):
    return sdk_params(PROXY[0], [*PROXY[1:], "--server", server, "--cassette", str(cassette)], env)


async def _session(params, calls: list[tuple[str, dict[str, Any]]], **client_kw: Any) -> dict[str, Any]:
    from mcp import Client

    async with Client(params, **client_kw) as client:
        tools = await client.list_tools()
        results = [await client.call_tool(name, args) for name, args in calls]
        return {
            "protocol_version": client.protocol_version,
            "tools": [t.model_dump(mode="json") for t in tools.tools],
            "results": [r.model_dump(mode="json") for r in results],
        }


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm test servers not installed (tests/servers)")
def test_sdk_client_through_the_proxy_to_server_everything(tmp_path):
    cassette_path = tmp_path / "everything.jsonl"
    env = {"MY_SERVICE_API_KEY": OPENAI_KEY, "GITHUB_TOKEN": GH_TOKEN}
    calls = [
        ("echo", {"message": "hello"}),
        ("get-sum", {"a": 2, "b": 40}),
        ("get-tiny-image", {}),
        ("get-env", {}),
    ]
    direct = asyncio.run(_session(sdk_params(str(EVERYTHING), [], env), calls))
    proxied = asyncio.run(_session(via_proxy(str(EVERYTHING), cassette_path, env), calls))
    # The client cannot tell the proxy is there; only get-env differs, by what the Python
    # interpreter of the proxy adds to its environment (PEP 538's LC_CTYPE) for the server.
    direct_env, proxied_env = direct["results"].pop(), proxied["results"].pop()
    assert proxied == direct
    for secret in (OPENAI_KEY, GH_TOKEN):  # get-env really returned the secrets, to both
        assert secret in json.dumps(proxied_env) and secret in json.dumps(direct_env)

    cassette = load(cassette_path)
    text = cassette_path.read_text()
    assert OPENAI_KEY not in text and GH_TOKEN not in text
    meta = cassette.meta
    assert meta["era"] == "handshake" and meta["protocol_version"] == direct["protocol_version"]
    assert meta["server_info"]["name"] == "mcp-servers/everything"
    assert meta["transport"] == "stdio" and meta["unanswered"] == 0 and meta["recorded_at"].endswith("Z")
    requests = {i.label: i for i in cassette.interactions if i.kind == "request"}
    assert {"initialize", "tools/list", "tools/call echo", "tools/call get-sum", "tools/call get-env"} <= set(requests)
    assert requests["tools/call get-sum"].response["result"]["content"][0]["text"] == "The sum of 2 and 40 is 42."
    image = next(c for c in requests["tools/call get-tiny-image"].response["result"]["content"] if c["type"] == "image")
    live_image = next(c for c in direct["results"][2]["content"] if c["type"] == "image")
    assert image["data"] == live_image["data"]  # content, not a secret: kept byte for byte
    assert any(i.kind == "notification" and i.method == "notifications/initialized" for i in cassette.interactions)
    # every request is answered by the response with its own id
    assert all(i.response["id"] == i.message["id"] for i in cassette.interactions if i.kind == "request")


@pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time not installed")
@pytest.mark.parametrize(("mode", "era"), [("auto", "stateless"), ("legacy", "handshake")])
def test_sdk_client_through_the_proxy_to_server_time(tmp_path, mode, era):
    cassette_path = tmp_path / "time.jsonl"
    calls = [
        ("convert_time", {"source_timezone": "Europe/London", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
        ("get_current_time", {"timezone": "UTC"}),
    ]
    proxied = asyncio.run(_session(via_proxy(str(TIME_SERVER), cassette_path), calls, mode=mode))
    assert json.loads(proxied["results"][0]["content"][0]["text"])["target"]["timezone"] == "Asia/Tokyo"
    cassette = load(cassette_path)
    assert cassette.meta["era"] == era and cassette.meta["protocol_version"] == proxied["protocol_version"]
    assert cassette.meta["server_info"]["name"] == "mcp-time"
    labels = [i.label for i in cassette.interactions if i.kind == "request"]
    assert labels[-2:] == ["tools/call convert_time", "tools/call get_current_time"]
    recorded = cassette.interactions[-1].response["result"]["content"][0]["text"]
    assert recorded == proxied["results"][1]["content"][0]["text"]


def test_sdk_client_stateless_era_through_the_proxy(tmp_path):
    cassette_path = tmp_path / "sdk.jsonl"
    calls = [("add", {"a": 1, "b": 2}), ("whoami", {"api_key": OPENAI_KEY})]
    proxied = asyncio.run(_session(via_proxy(f"{PY} {FAKES / 'sdk_server.py'}", cassette_path), calls))
    assert proxied["protocol_version"] == "2026-07-28"
    assert proxied["results"][1]["content"][0]["text"] == f"logged in with {OPENAI_KEY}"
    cassette = load(cassette_path)
    assert cassette.meta["era"] == "stateless" and cassette.meta["protocol_version"] == "2026-07-28"
    assert cassette.meta["server_info"]["name"] == "sdk-notes"
    assert OPENAI_KEY not in cassette_path.read_text()
    whoami = next(i for i in cassette.interactions if i.tool_name == "whoami")
    assert whoami.message["params"]["arguments"] == {"api_key": PLACEHOLDER}
    tools = next(i for i in cassette.interactions if i.method == "tools/list")
    schema = next(t for t in tools.response["result"]["tools"] if t["name"] == "whoami")["inputSchema"]
    assert "api_key" in schema["properties"]  # schemas are content


def test_sdk_client_answers_a_server_request_that_reuses_its_request_id(tmp_path):
    from mcp import types

    async def roots(_ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    cassette_path = tmp_path / "roots.jsonl"
    params = via_proxy(f"{PY} {FAKES / 'roots_server.py'}", cassette_path)
    proxied = asyncio.run(_session(params, [("where", {})], list_roots_callback=roots, mode="legacy"))
    assert json.loads(proxied["results"][0]["content"][0]["text"]) == ["file:///work"]
    cassette = load(cassette_path)
    call = next(i for i in cassette.interactions if i.label == "tools/call where")
    asked = next(i for i in cassette.interactions if i.kind == "server-request")
    assert asked.message["id"] == call.message["id"]
    assert asked.method == "roots/list" and asked.response["result"]["roots"][0]["uri"] == "file:///work"
    assert json.loads(call.response["result"]["content"][0]["text"]) == ["file:///work"]
    assert call.seq < asked.seq  # ordered by when the first message of each was seen


def test_no_server_process_outlives_the_proxy(tmp_path):
    pidfile = tmp_path / "pids"
    cassette_path = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        proxy_argv(f"{PY} {FAKES / 'hang_server.py'} --child {pidfile}", cassette_path, "--shutdown-grace", "0.2"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line(INIT))
        proc.stdin.flush()
        proc.stdout.readline()
        child = int(pidfile.read_text())
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the server's child outlived the proxy"
        time.sleep(0.05)
    assert [i.method for i in load(cassette_path).interactions] == ["initialize"]


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def test_runs_from_the_current_directory_by_default(tmp_path):
    (tmp_path / "server.py").write_text((FAKES / "echo_server.py").read_text())
    (tmp_path / "_fakelib.py").write_text((FAKES / "_fakelib.py").read_text())
    result = subprocess.run(
        proxy_argv(f"{PY} server.py", tmp_path / "c.jsonl"),
        input=line(INIT),
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["result"]["serverInfo"]["name"] == "echo"


def test_record_ends_with_one_line_saying_how_many_went_where_and_the_era(tmp_path: Path) -> None:
    """``mcp-replay record``'s last stderr line (stdout is the client's channel)."""
    cassette = tmp_path / "calc.jsonl"
    session = (
        line(INIT)
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + line(req(1, "tools/list"))
        + line(req(2, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}))
    )
    argv = [PY, "-m", "mcp_replay_action", "record", "--server", f"{PY} -m mcp_replay_action.samples.calc_server"]
    done = subprocess.run(
        [*argv, "--cassette", str(cassette)], input=session, capture_output=True, timeout=60, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 3  # three answers went back to the client
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last == f"mcp-replay: 4 interactions recorded to {cassette} (handshake era, 2025-06-18)"
    assert len(load(cassette).interactions) == 4
    # Nothing complete: nothing written, and the line says so.
    empty = subprocess.run(
        [*argv, "--cassette", "none.jsonl"], input=b"", capture_output=True, timeout=60, cwd=tmp_path
    )
    assert empty.returncode == 0, empty.stderr
    assert (
        empty.stderr.decode().strip().splitlines()[-1] == "mcp-replay: 0 interactions recorded: none.jsonl not written"
    )
    assert not (tmp_path / "none.jsonl").exists()
