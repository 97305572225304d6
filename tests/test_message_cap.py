"""A server's message is read up to ``--max-message-size`` and no further: a stdout line that never
ends (a flood) is dropped as it grows, whether it is read plainly or beside its long recording
(``beside.Reader``), and the request gets a finding naming the cap; memory stays bounded
(peak RSS of the replaying process, measured in it with ``resource``)."""

from __future__ import annotations

import contextlib
import http.server
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from github_action_run import FAKES, PY, record_session
from mcp_replay_action.demo import demo_answer
from mcp_replay_action.errors import MessageTooLarge, TransportTimeout
from mcp_replay_action.transport.http_client import HttpTransport
from mcp_replay_action.transport.session import ClientSession
from mcp_replay_action.transport.stdio import StdioTransport

pytestmark = pytest.mark.integration

FLOOD = f"{PY} {FAKES / 'stdout_flood_server.py'}"
CAP = 8 << 20
# Runs a replay in this process and prints its exit code and peak RSS (bytes) as JSON.
REPLAY_AND_MEASURE = """
import json, resource, sys
from mcp_replay_action.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}))
"""


def replay_measured(cassette: Path, report: Path, env: dict[str, str], *options: str) -> dict[str, int]:
    argv = ["replay", "--server", FLOOD, "--cassette", str(cassette), "--report", str(report), "--timeout", "20"]
    done = subprocess.run(
        [sys.executable, "-c", REPLAY_AND_MEASURE, *argv, *options, *(f"--env={k}={v}" for k, v in env.items())],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("recorded", [10, 2 << 20], ids=["plain", "beside-its-recording"])
def test_a_stdout_line_that_never_ends_is_dropped_at_the_cap(tmp_path: Path, recorded: int) -> None:
    cassette = tmp_path / "flood.jsonl"
    record_session(cassette, FLOOD, [("tools/call", {"name": "echo", "arguments": {}})], env={"LENGTH": str(recorded)})
    cap = ["--max-message-size", f"{CAP >> 20}MiB"]
    calm = replay_measured(cassette, tmp_path / "calm.json", {"LENGTH": str(recorded)}, *cap)
    assert calm["code"] == 0
    flood = replay_measured(cassette, tmp_path / "flood.json", {"LENGTH": str(recorded), "FLOOD_MIB": "200"}, *cap)
    # The gate fails on a missing response (exit 1): a finding, not a crash or an infrastructure error.
    assert flood["code"] == 1
    report = json.loads((tmp_path / "flood.json").read_text("utf-8"))
    (call,) = [i for i in report["cassettes"][0]["interactions"] if i["method"] == "tools/call"]
    assert call["kind"] == "missing-response"
    assert "longer than 8 MiB (the --max-message-size cap)" in call["findings"][0]["message"], call
    # Held: at most the cap twice over (the line and its join), never the 200 MiB flood.
    assert flood["peak"] < calm["peak"] + 2 * CAP, (flood["peak"] >> 20, calm["peak"] >> 20)


class _Flooding(http.server.BaseHTTPRequestHandler):
    """Answers every POST with an endless answer: an SSE event that never ends, or a JSON body
    sent in chunks without end (no Content-Length to refuse it by)."""

    protocol_version = "HTTP/1.1"
    sse = True

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream" if self.sse else "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        start = (
            b'data: {"jsonrpc": "2.0", "id": 1, "result": {"text": "'
            if self.sse
            else b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "'
        )
        self.wfile.write(b"%x\r\n%s\r\n" % (len(start), start))
        line = (b"a" * 1000 + b"\ndata: ") if self.sse else b"a" * 1024  # many data lines, no blank one
        piece = line * 64
        try:
            for _ in range(20 * 16):  # 20 MiB, far past the cap
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        except OSError:
            return  # the client stopped reading: what the cap is for


@contextlib.contextmanager
def flooding_http(sse: bool) -> Iterator[HttpTransport]:
    """A transport (cap 1 MiB) to a server on 127.0.0.1 whose every answer floods (``_Flooding``)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), type("Flooding", (_Flooding,), {"sse": sse}))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    transport = HttpTransport(f"http://127.0.0.1:{server.server_address[1]}/mcp", max_message=1 << 20, listen=False)
    try:
        transport.start()
        yield transport
    finally:
        transport.close()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.parametrize("sse", [True, False], ids=["sse-event", "json-body"])
def test_an_http_answer_past_the_cap_is_a_message_too_large(sse: bool) -> None:
    with flooding_http(sse) as transport:
        transport.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        with pytest.raises(MessageTooLarge, match=r"longer than 1 MiB \(the --max-message-size cap\)"):
            transport.receive(30)


def test_an_endless_acknowledgement_of_a_notification_is_a_message_too_large() -> None:
    with flooding_http(sse=False) as transport:
        with pytest.raises(MessageTooLarge, match=r"notifications/initialized: .*longer than 1 MiB"):
            transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})


def test_the_stdio_recording_proxy_drops_a_line_past_the_cap(tmp_path: Path) -> None:
    cassette = tmp_path / "rec.jsonl"
    proxy = [PY, "-m", "mcp_replay_action", "record", "--server", FLOOD, "--cassette", str(cassette)]
    # Here the flood's line ends, after 20 MiB: the next answer is a line of its own.
    transport = StdioTransport([*proxy, "--max-message-size", "1MiB"], env={"FLOOD_MIB": "20", "FLOOD_END": "1"})
    transport.start()
    try:
        client = ClientSession(transport, answer=demo_answer)
        client.call(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        )
        client.notify("notifications/initialized")
        with pytest.raises(TransportTimeout):  # the flood is never handed on, whole or cut
            client.request(client.message("tools/call", {"name": "echo", "arguments": {}}), 5)
        assert client.call("ping", {}).get("result") == {}  # the line after it is
    finally:
        transport.close()
    assert "longer than 1 MiB (the --max-message-size cap): dropped" in transport.diagnostics()["stderr_tail"]
    recorded = cassette.read_text("utf-8")
    assert '"ping"' in recorded and "a" * 1000 not in recorded
