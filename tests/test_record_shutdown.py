"""A recording survives its client's shutdown (issue 28, item 1).

The official SDK clients (Python ``mcp`` and the TypeScript SDK) end a stdio session by closing
the server's stdin, waiting 2 s, SIGTERM, 2 s, SIGKILL. ``record`` used to write the cassette only
after stopping the server, so a server slow to exit got the recorder killed first and the cassette
was lost, silently. Now each interaction is on disk as it completes and the line is said when the
client disconnects: these tests run the SDK clients' own shutdown against a server that ignores
SIGTERM once its stdin closes, and kill the recorder with SIGKILL mid-session.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import load
from mcp_replay_action.redact import PLACEHOLDER
from test_process import alive

ROOT = Path(__file__).resolve().parent.parent
FAKES = Path(__file__).parent / "fakes"
SERVERS = Path(__file__).parent / "servers"
SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
TS_SDK = SERVERS / "node_modules" / "@modelcontextprotocol" / "sdk"
PY = sys.executable
RECORD = [PY, "-m", "mcp_replay_action", "record"]
SECRET = "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ"
CALLS = 15  # with initialize, initialized and tools/list: 18 interactions

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

PYTHON_CLIENT = """
import asyncio, sys
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        for i in range(CALLS):
            await session.call_tool("echo", {"i": i, "api_key": SECRET})

asyncio.run(main())
"""

TS_CLIENT = """
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args });
const client = new Client({ name: "shutdown-test", version: "1.0.0" });
await client.connect(transport);
await client.listTools();
for (let i = 0; i < CALLS; i++) {
  await client.callTool({ name: "echo", arguments: { i, api_key: SECRET } });
}
await client.close();
"""


def slow_server(pidfile: Path) -> str:
    return f"{PY} {FAKES / 'slow_exit_server.py'} --pidfile {pidfile}"


def child_env() -> dict[str, str]:
    # The recorder the clients start imports this checkout's package.
    return {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def assert_complete(cassette_path: Path, stderr: str) -> None:
    """Every interaction of the session is in the cassette, the line said so, no secret on disk."""
    assert f"mcp-replay: {CALLS + 3} interactions recorded to {cassette_path} (handshake era" in stderr, stderr
    cassette = load(cassette_path)
    assert [i.method for i in cassette.interactions] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        *["tools/call"] * CALLS,
    ]
    calls = [i for i in cassette.interactions if i.method == "tools/call"]
    assert [c.response["result"]["structuredContent"]["i"] for c in calls] == list(range(CALLS))  # type: ignore[index]
    assert all(c.message["params"]["arguments"]["api_key"] == PLACEHOLDER for c in calls)
    assert cassette.meta["unanswered"] == 0 and cassette.meta["server_info"]["name"] == "slow-exit"
    assert SECRET not in cassette_path.read_text(encoding="utf-8")


def assert_gone(pidfile: Path) -> None:
    """The server (deaf to SIGTERM, sleeping 120 s) did not outlive the recorder."""
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 15
    while alive(pid):
        assert time.monotonic() < deadline, "the slow server outlived the recording"
        time.sleep(0.05)


def script(text: str) -> str:
    return text.replace("CALLS", str(CALLS)).replace("SECRET", json.dumps(SECRET))


def shutdown(tmp_path: Path, client: list[str], cwd: Path | None = None) -> None:
    """Run ``client`` (which starts ``record`` in front of the slow server, calls, and ends the
    session its SDK's way): it exits 0, the cassette is complete and said so, the server is gone."""
    cassette_path, pidfile = tmp_path / "session.jsonl", tmp_path / "server.pid"
    argv = [*RECORD, "--server", slow_server(pidfile), "--cassette", str(cassette_path)]
    done = subprocess.run(
        [*client, *argv], cwd=cwd, capture_output=True, text=True, timeout=90, env=child_env(), stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    assert_complete(cassette_path, done.stderr)
    assert_gone(pidfile)


@pytest.mark.parametrize("python", ["mcp2", "mcp1"])
def test_the_python_sdk_shutdown_leaves_a_complete_cassette(python: str, tmp_path: Path) -> None:
    interpreter = PY if python == "mcp2" else str(SDK1_PYTHON)
    if python == "mcp1" and not SDK1_PYTHON.exists():
        pytest.skip("tests/servers/.venv-sdk1 (mcp 1.x) is not installed")
    (tmp_path / "client.py").write_text(script(PYTHON_CLIENT), encoding="utf-8")
    shutdown(tmp_path, [interpreter, str(tmp_path / "client.py")])


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_typescript_sdk_shutdown_leaves_a_complete_cassette(tmp_path: Path) -> None:
    if not TS_SDK.exists():
        pytest.skip("the npm test servers are not installed (npm ci --prefix tests/servers)")
    (tmp_path / "node_modules" / "@modelcontextprotocol").mkdir(parents=True)
    # The SDK's own dependencies resolve from the test servers' node_modules, where it lives.
    os.symlink(TS_SDK.resolve(), tmp_path / "node_modules" / "@modelcontextprotocol" / "sdk")
    (tmp_path / "client.mjs").write_text(script(TS_CLIENT), encoding="utf-8")
    shutdown(tmp_path, ["node", "--preserve-symlinks-main", "client.mjs"], cwd=tmp_path)


# -- a client driving the recorder by hand -----------------------------------------------------------


def message(id_: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id_ is not None:
        msg["id"] = id_
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode() + b"\n"


INIT = message(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})


class Session:
    """``mcp-replay record`` in front of the slow server, spoken to line by line."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.cassette = tmp_path / "c.jsonl"
        self.pidfile = tmp_path / "server.pid"
        self.proc = subprocess.Popen(
            [*RECORD, "--server", slow_server(self.pidfile), "--cassette", str(self.cassette)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env(),
        )
        self.ask(INIT)
        self.send(message(None, "notifications/initialized"))

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line)
        self.proc.stdin.flush()

    def ask(self, line: bytes) -> dict[str, Any]:
        self.send(line)
        assert self.proc.stdout is not None
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return answer

    def call(self, i: int) -> None:
        assert self.ask(message(i + 1, "tools/call", {"name": "echo", "arguments": {"i": i, "api_key": SECRET}}))

    def on_disk(self) -> str:
        """Every file in the cassette's directory (temp files too), as text."""
        return "".join(p.read_text("utf-8", "replace") for p in self.dir.iterdir() if p.is_file())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.parametrize("answered", [1, 4, 9])
def test_a_sigkill_mid_session_leaves_every_answered_interaction_and_no_secret(tmp_path: Path, answered: int) -> None:
    session = Session(tmp_path)
    try:
        for i in range(answered):
            session.call(i)
            # An answer the client holds is on disk: the recorder writes before it forwards.
            assert SECRET not in session.on_disk()
            assert len(load(session.cassette).interactions) == 2 + i + 1
        session.send(message(99, "tools/call", {"name": "echo", "arguments": {"api_key": SECRET}}))  # in flight
        os.kill(session.proc.pid, signal.SIGKILL)
        session.proc.wait(30)
    finally:
        session.close()
    cassette = load(session.cassette)
    # Every answered interaction is there, in order; the one in flight at the kill may or may not
    # be (whether the server answered it and the recorder wrote it before the kill landed is up to
    # the scheduler), but when it is, it is whole: answered, and redacted like the rest.
    recorded = [(i.method, i.message.get("id")) for i in cassette.interactions]
    expected = [("initialize", 0), ("notifications/initialized", None)] + [
        ("tools/call", n + 1) for n in range(answered)
    ]
    assert recorded in (expected, [*expected, ("tools/call", 99)]), recorded
    assert all(i.response is not None for i in cassette.interactions if i.method != "notifications/initialized")
    assert SECRET not in session.on_disk()
    assert_gone(session.pidfile)  # the kernel ended the server with its recorder (PDEATHSIG)
    # inspect reads it as it is.
    shown = subprocess.run(
        [PY, "-m", "mcp_replay_action", "inspect", str(session.cassette)],
        capture_output=True,
        text=True,
        timeout=60,
        env=child_env(),
    )
    assert shown.returncode == 0, shown.stderr
    assert f"Interactions ({len(recorded)}):" in shown.stdout, shown.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_stop_signal_mid_session_ends_the_recording_cleanly(tmp_path: Path, sig: signal.Signals) -> None:
    session = Session(tmp_path)
    try:
        for i in range(3):
            session.call(i)
        session.proc.send_signal(sig)
        assert session.proc.wait(30) == 0
        assert session.proc.stderr is not None
        stderr = session.proc.stderr.read().decode()
    finally:
        session.close()
    assert f"mcp-replay: 5 interactions recorded to {session.cassette} (handshake era" in stderr, stderr
    assert len(load(session.cassette).interactions) == 5
    assert_gone(session.pidfile)  # deaf to SIGTERM: the hurried stop killed it
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".c.jsonl.")]  # no temp file left


def test_lines_written_during_the_session_are_the_lines_of_the_cassette(tmp_path: Path) -> None:
    """The header is rewritten as its counts grow; every interaction line keeps its bytes."""
    session = Session(tmp_path)
    try:
        for i in range(4):
            session.call(i)
        during = session.cassette.read_bytes().splitlines(keepends=True)
        for i in range(4, 8):
            session.call(i)
        assert session.proc.stdin is not None
        session.proc.stdin.close()  # the client's EOF: the session ends
        assert session.proc.wait(30) == 0
    finally:
        session.close()
    after = session.cassette.read_bytes().splitlines(keepends=True)
    assert len(during) == 1 + 6 and len(after) == 1 + 10
    assert after[1:7] == during[1:]  # byte for byte
    assert json.loads(after[0])["meta"]["redaction"]["hits"] != json.loads(during[0])["meta"]["redaction"]["hits"]


# -- record --url and record-scenarios: the same promise -------------------------------------------------


def test_a_sigkill_of_the_http_recorder_mid_session_leaves_a_readable_cassette(tmp_path: Path) -> None:
    from fakes.http_fake_server import FakeHttpServer
    from http_helpers import free_port
    from mcp_replay_action.transport.http_client import HttpTransport, wait_for_port

    cassette_path, port = tmp_path / "c.jsonl", free_port()
    with FakeHttpServer("json") as fake:
        proxy_url = f"http://127.0.0.1:{port}/mcp"
        argv = [*RECORD, "--url", fake.url, "--listen", f"127.0.0.1:{port}", "--cassette", str(cassette_path)]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=child_env())
        client = HttpTransport(proxy_url, listen=False)
        try:
            wait_for_port(proxy_url, 30, alive=lambda: proc.poll() is None)
            client.start()
            client.send(json.loads(INIT))
            client.receive(10)
            client.send(json.loads(message(None, "notifications/initialized")))
            for i in range(3):
                client.send(json.loads(message(i + 1, "tools/call", {"name": "x", "arguments": {"api_key": SECRET}})))
                assert client.receive(10)["id"] == i + 1
                assert len(load(cassette_path).interactions) == 2 + i + 1  # on disk before the client had it
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
            try:
                client.close()
            except Exception:  # noqa: BLE001 - the proxy is gone; closing is best effort
                pass
    cassette = load(cassette_path)
    assert [i.method for i in cassette.interactions] == ["initialize", "notifications/initialized"] + ["tools/call"] * 3
    assert SECRET not in "".join(p.read_text("utf-8") for p in tmp_path.iterdir())


SCENARIOS = """\
target: {server}
redact:
  keys: [api_key]
scenarios:
  first:
    actions:
      - list_tools
  slow:
    actions:
{calls}
"""


def scenarios_file(tmp_path: Path, calls: int = 40) -> Path:
    server = f"{PY} {FAKES / 'echo_server.py'} --delay 0.15"
    steps = "".join(
        f"      - call_tool: {{name: echo, arguments: {{i: {i}, api_key: {SECRET}}}}}\n" for i in range(calls)
    )
    path = tmp_path / "scenarios.yml"
    path.write_text(SCENARIOS.format(server=server, calls=steps), encoding="utf-8")
    (tmp_path / "cassettes").mkdir()
    for name in ("first", "slow"):  # the cassettes of an earlier recording, committed
        (tmp_path / "cassettes" / f"{name}.jsonl").write_text("precious\n")
    return path


def start_scenarios(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [PY, "-m", "mcp_replay_action", "record-scenarios", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )


def wait_for_lines(path: Path, lines: int) -> None:
    deadline = time.monotonic() + 60
    while not path.exists() or len(path.read_text("utf-8").splitlines()) < lines:
        assert time.monotonic() < deadline, f"{path} never reached {lines} lines"
        time.sleep(0.05)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_record_scenarios_stopped_or_killed_keeps_what_it_recorded_beside_the_old_cassettes(
    tmp_path: Path, sig: signal.Signals
) -> None:
    path = scenarios_file(tmp_path)
    partial = tmp_path / "cassettes" / "slow.jsonl.partial"
    proc = start_scenarios(path)
    try:
        wait_for_lines(partial, 1 + 2 + 5)  # the header, the handshake and five calls
        assert SECRET not in partial.read_text("utf-8")
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    for name in ("first", "slow"):  # nothing replaced
        assert (tmp_path / "cassettes" / f"{name}.jsonl").read_text() == "precious\n"
    kept = load(partial)  # every call answered before the signal, readable as it is
    calls = [i for i in kept.interactions if i.method == "tools/call"]
    assert len(calls) >= 5 and [c.message["params"]["arguments"]["i"] for c in calls] == list(range(len(calls)))
    assert SECRET not in "".join(p.read_text("utf-8") for p in (tmp_path / "cassettes").iterdir())
    assert load(tmp_path / "cassettes" / "first.jsonl.partial").interactions  # the scenario done before
    if sig == signal.SIGTERM:
        assert proc.returncode == 130
        assert stderr.strip().splitlines()[-1] == (
            "mcp-replay: error: interrupted: no cassette replaced; what was recorded is in "
            f"{tmp_path / 'cassettes' / 'first.jsonl.partial'}, {partial}"
        ), stderr
        assert "Traceback" not in stderr


def test_record_scenarios_moves_every_cassette_into_place_once_all_are_recorded(tmp_path: Path) -> None:
    path = scenarios_file(tmp_path, calls=2)
    proc = start_scenarios(path)
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 0, err
    names = sorted(p.name for p in (tmp_path / "cassettes").iterdir())
    assert names == ["first.jsonl", "slow.jsonl"]  # no .partial left
    slow = load(tmp_path / "cassettes" / "slow.jsonl")
    assert [i.method for i in slow.interactions][-2:] == ["tools/call", "tools/call"]
    assert slow.meta["redaction"]["hits"]  # the header made at the end counts every redaction
