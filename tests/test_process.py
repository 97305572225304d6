"""Process supervision (transport/process.py) through the real CLI and real processes: no server
escapes (a setsid() grandchild, a kill -9 of the recorder), SIGHUP saves a recording, and a crash
is reported as a crash even when a grandchild keeps the server's stdout open (issue 8 item 11)."""

from __future__ import annotations

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

FAKES = Path(__file__).parent / "fakes"
PY = sys.executable
MCP_REPLAY = str(Path(PY).parent / "mcp-replay")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux procfs"),
]


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def req(id_: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": params or {}}


INIT = req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})
CALL = req(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})


def escape_server(pids: Path, *extra: str) -> str:
    return f"{PY} {FAKES / 'escape_server.py'} --pids {pids} {' '.join(extra)}"


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def pid_of(pids: Path, what: str, timeout: float = 15.0) -> int:
    deadline = time.monotonic() + timeout
    while True:
        if pids.exists():
            for row in pids.read_text().splitlines():
                name, _, pid = row.partition(" ")
                if name == what:
                    return int(pid)
        assert time.monotonic() < deadline, f"no {what} pid in {pids}"
        time.sleep(0.05)


@pytest.fixture
def pids(tmp_path: Path):
    """The pid file the escape server writes; whatever it names is ended after the test, by pid."""
    path = tmp_path / "pids"
    yield path
    if path.exists():
        for row in path.read_text().splitlines():
            pid = int(row.partition(" ")[2])
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def start_record(server: str, cassette: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [MCP_REPLAY, "record", "--server", server, "--cassette", str(cassette)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def converse(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin is not None and proc.stdout is not None
    for message in (INIT, CALL):
        proc.stdin.write(line(message))
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == message["id"]


def finish(proc: subprocess.Popen[bytes], timeout: float = 30) -> int:
    try:
        return proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_record_ends_a_setsid_grandchild_of_the_server(tmp_path: Path, pids: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    proc = start_record(escape_server(pids), cassette)
    converse(proc)
    grandchild = pid_of(pids, "grandchild")
    assert proc.stdin is not None
    proc.stdin.close()  # the client is done: the recorder stops the server, and all it started
    assert finish(proc) == 0
    assert gone(grandchild), "a setsid() grandchild of the server outlived mcp-replay record"
    assert [i.method for i in load(cassette).interactions] == ["initialize", "tools/call"]


def test_record_saves_on_sighup(tmp_path: Path, pids: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    proc = start_record(escape_server(pids), cassette)
    converse(proc)
    server = pid_of(pids, "server")
    proc.send_signal(signal.SIGHUP)  # the terminal that ran the recorder was closed
    assert finish(proc) == 0
    assert [i.method for i in load(cassette).interactions] == ["initialize", "tools/call"]
    assert gone(server) and gone(pid_of(pids, "grandchild"))


def test_no_server_survives_kill_9_of_the_recorder(tmp_path: Path, pids: Path) -> None:
    proc = start_record(escape_server(pids, "--stay"), tmp_path / "c.jsonl")
    converse(proc)
    server = pid_of(pids, "server")
    proc.kill()  # SIGKILL: no handler, no atexit, nothing of ours runs
    proc.wait()
    assert gone(server), "the server outlived a kill -9 of the recording proxy"


def test_a_crash_is_reported_as_a_crash_while_a_grandchild_holds_stdout(tmp_path: Path, pids: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    proc = start_record(escape_server(tmp_path / "recording-pids"), cassette)
    converse(proc)
    assert proc.stdin is not None
    proc.stdin.close()
    assert finish(proc) == 0

    run = subprocess.run(
        [MCP_REPLAY, "replay", "--server", escape_server(pids, "--crash"), "--cassette", str(cassette)]
        + ["--timeout", "60", "--json", "--fail-on-regression"],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert run.returncode == 1, run.stderr
    text = json.dumps(json.loads(run.stdout))
    assert "status 3" in text and "escape server crashed" in text, text
    assert "within 60 s" not in text
    assert gone(pid_of(pids, "grandchild")), "the crashed server's grandchild outlived the replay"


def test_stopping_a_server_ends_what_a_nested_supervisor_started_for_it(tmp_path: Path) -> None:
    """``replay --server "mcp-replay record --server ..."``: the inner supervisor starts its server
    in a session of its own with its own marker appended to ours, so ending ours ends it too, even
    when the inner one dies by SIGKILL (it ignores SIGTERM here) and its server has no PDEATHSIG
    (started from a thread)."""
    from mcp_replay_action.transport.process import spawn_server

    pidfile = tmp_path / "inner"
    inner = (
        "import signal, subprocess, sys, threading, time\n"
        "from mcp_replay_action.transport.process import spawn_server\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "def start():\n"
        "    s = spawn_server([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "    open(sys.argv[1], 'w').write(str(s.pid))\n"
        "t = threading.Thread(target=start)\n"
        "t.start()\n"
        "t.join()\n"
        "time.sleep(600)\n"
    )
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    outer = spawn_server([PY, "-c", inner, str(pidfile)], **quiet)
    try:
        inner_pid = 0
        deadline = time.monotonic() + 15
        while not inner_pid:
            assert time.monotonic() < deadline, "the inner server never started"
            text = pidfile.read_text() if pidfile.exists() else ""
            inner_pid = int(text) if text else 0
            time.sleep(0.05)
        assert alive(inner_pid)
    finally:
        outer.stop(grace=0.1, term_timeout=0.5)
    try:
        assert gone(inner_pid, timeout=5), "a server started by a nested supervisor outlived the outer one"
    finally:
        if alive(inner_pid):
            os.kill(inner_pid, signal.SIGKILL)


def test_wait_leader_sees_an_exit_during_the_wait_and_leaves_a_live_child_alone() -> None:
    """The leader's exit is seen when it happens (a pidfd on Linux) and the child is reaped; a
    child still running when the wait ends is neither reaped nor signalled."""
    from mcp_replay_action.transport.process import wait_leader

    exits = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    stays = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert exits.stdin is not None
        exits.stdin.close()  # it exits once it reads EOF, while we wait
        wait_leader(exits, 30.0)
        assert exits.returncode == 0
        wait_leader(stays, 0.05)
        assert stays.returncode is None and stays.poll() is None
    finally:
        stays.kill()
        stays.wait(timeout=10)
        exits.kill()
        exits.wait(timeout=10)
