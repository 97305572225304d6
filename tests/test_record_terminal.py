"""``mcp-replay record`` typed in a terminal says what it waits for (issue 30, the first CI run):
a real pseudo-terminal as its stdin (``pty``), the real CLI in a subprocess, bounded; a pipe (a
client) gets no such line, since the client's stderr is not a person's."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

CALC = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
BOUND = 30.0  # seconds: generous for a loaded machine; each wait ends as soon as its line is there


def read_stderr_until(proc: subprocess.Popen[bytes], needle: bytes) -> bytes:
    """What ``proc`` wrote to stderr until ``needle`` appeared (or the bound, or its exit)."""
    assert proc.stderr is not None
    seen = b""
    deadline = time.monotonic() + BOUND
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            chunk = os.read(proc.stderr.fileno(), 65536)
            if not chunk:
                break
            seen += chunk
    return seen


def test_record_on_a_terminal_says_it_waits_for_a_client_and_how_to_drive_one(tmp_path: Path) -> None:
    cassette = tmp_path / "session.jsonl"
    master, slave = pty.openpty()
    argv = [sys.executable, "-m", "mcp_replay_action", "record", "--server", CALC, "--cassette", str(cassette)]
    proc = subprocess.Popen(argv, stdin=slave, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        said = read_stderr_until(proc, b"Ctrl-D").decode()
        assert "record waits for an MCP client on stdin" in said, said
        assert "docs/recording.md" in said and "a Python or TypeScript SDK client" in said
        assert "mcp-replay explore" in said
        os.write(master, b"\x04")  # Ctrl-D at the start of a line: end of input, as the line says
        assert proc.wait(timeout=BOUND) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        os.close(master)


def test_record_driven_by_a_client_on_a_pipe_says_nothing_of_terminals(tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-m",
        "mcp_replay_action",
        "record",
        "--server",
        CALC,
        "--cassette",
        str(tmp_path / "c.jsonl"),
    ]
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=BOUND)
    assert b"waits for an MCP client" not in done.stderr, done.stderr
