"""Progress while a replay runs (report/progress.py): each cassette's line on stderr as it
finishes, with and without --jobs, and on a terminal only, a live line for a long cassette.
Driven through the real CLI against the bundled calc server; the terminal is a real pty."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_replay_action.model.results import CassetteResult, InteractionResult, Score
from mcp_replay_action.report.progress import LIVE_MIN, REDRAW_EVERY, ConsoleProgress, cassette_line

PY = sys.executable
CALC = f"{PY} -m mcp_replay_action.samples.calc_server"
MCP_REPLAY = [PY, "-m", "mcp_replay_action"]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def recorded(tmp_path: Path, name: str, calls: int) -> Path:
    """A cassette of ``calls`` tools/call add, recorded through ``mcp-replay record``."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    lines += [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "add", "arguments": {"a": i, "b": 1}}}
        for i in range(1, calls + 1)
    ]
    path = tmp_path / name
    stdin = "".join(json.dumps(line) + "\n" for line in lines).encode()
    done = subprocess.run(
        [*MCP_REPLAY, "record", "--server", CALC, "--cassette", str(path)],
        input=stdin,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return path


def replay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCP_REPLAY, "replay", "--server", CALC, *args], cwd=cwd, capture_output=True, text=True, timeout=150
    )


def test_each_cassette_line_is_printed_as_it_finishes_with_and_without_jobs(tmp_path: Path) -> None:
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        recorded(tmp_path, name, 3)
    for jobs in ("1", "2"):
        done = replay("--cassette", "*.jsonl", "--jobs", jobs, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        lines = done.stderr.splitlines()
        assert sorted(lines) == [f"PASS {n}.jsonl: 4 passed, 0 failed, 0 missing, GRADE A (100.0/100)" for n in "abc"]
        if jobs == "1":
            assert lines == sorted(lines)  # one at a time: in the order of the paths
        assert "\r" not in done.stderr  # not a terminal: nothing that rewrites itself
        assert "OVERALL  GRADE A" in done.stdout  # the report follows, on stdout, as before
    one = replay("--cassette", "a.jsonl", cwd=tmp_path)
    assert one.returncode == 0 and one.stderr == ""  # one cassette: the report says it all


def test_a_long_cassette_gets_a_live_line_on_a_terminal_only(tmp_path: Path) -> None:
    long = recorded(tmp_path, "long.jsonl", LIVE_MIN + 20)
    total = LIVE_MIN + 22
    leader, follower = pty.openpty()
    try:
        proc = subprocess.Popen(
            [*MCP_REPLAY, "replay", "--server", CALC, "--cassette", str(long)],
            stdout=subprocess.PIPE,
            stderr=follower,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,
        )
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the last writer closed the pseudo-terminal
                break
            if not chunk:
                break
            seen += chunk
        assert proc.communicate(timeout=120)[0]  # the report, on stdout
        assert proc.returncode == 0
    finally:
        os.close(leader)
        if follower >= 0:
            os.close(follower)
    text = seen.decode()
    assert f"\r\x1b[K{long.name}  0 of {total} interactions" in text  # the path as the report shows it
    assert text.endswith("\r\x1b[K")  # cleared before the report: nothing left on the line
    piped = replay("--cassette", str(long), cwd=tmp_path)
    assert piped.returncode == 0 and piped.stderr == ""


def result(path: str, passed: int, failed: int = 0) -> CassetteResult:
    rows = [InteractionResult(seq=i, line=i + 2, method="ping", name=None, status="pass") for i in range(passed)]
    rows += [
        InteractionResult(seq=passed + i, line=passed + i + 2, method="ping", name=None, status="fail")
        for i in range(failed)
    ]
    return CassetteResult(path=path, results=tuple(rows), score=Score(55.0, "F", 1.0, 0.5, 1.0, 1.0))


def test_the_live_line_is_redrawn_at_most_every_tenth_of_a_second_and_at_the_end() -> None:
    now = [0.0]
    out = io.StringIO()
    progress = ConsoleProgress(out, live=True, clock=lambda: now[0])
    assert progress.live("short.jsonl", LIVE_MIN - 1) is None
    tick = progress.live("big.jsonl", 500)
    assert tick is not None and out.getvalue() == "\r\x1b[Kbig.jsonl  0 of 500 interactions"
    tick(10)  # too soon: not drawn
    now[0] += REDRAW_EVERY
    tick(250)
    tick(500)  # the last is always drawn
    assert out.getvalue().count("\r\x1b[K") == 3 and "250 of 500" in out.getvalue()
    progress.finished(result("big.jsonl", 2, 1))
    assert out.getvalue().endswith("\r\x1b[KFAIL big.jsonl: 2 passed, 1 failed, 0 missing, GRADE F (55.0/100)\n")
    quiet = ConsoleProgress(io.StringIO(), live=False)
    assert quiet.live("big.jsonl", 10_000) is None


def test_a_cassette_line_is_one_line_whatever_the_path_holds() -> None:
    line = cassette_line(result("odd\n::error::x.jsonl", 1))
    assert "\n" not in line and line.startswith("PASS odd")
