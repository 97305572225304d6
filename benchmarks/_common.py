"""What every benchmark shares: whole-process timing with the child's own peak RSS, interleaved
paired rounds against a floor, cassettes recorded from a real server, and the table row.

Every figure is a whole process (interpreter start, imports, cassette load, server start,
report, teardown), never an in-process timing: those hide exactly the costs a CI job pays.
A ratio is the median of per-round ratios, each round running the floor and the tool back to
back, so a noisy neighbour slows both sides of a round alike.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp_replay_action.cassette import save, with_lines
from mcp_replay_action.model.cassette import Cassette
from mcp_replay_action.record.tape import Tape
from mcp_replay_action.redact import Redactor

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PY = sys.executable
# The replay CLI run through a thin wrapper that reports the process's own peak RSS (not its
# server's) and the modules it imported.
TOOL = [PY, str(HERE / "_self_rss.py"), "-m", "mcp_replay_action"]
CALC_SERVER = [PY, "-m", "mcp_replay_action.samples.calc_server"]
EVERYTHING = ROOT / "tests/servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

# An installed package has its bytecode compiled (pip does it; so does the image build). A
# checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise compile every changed module from
# source in every measured process, a cost no user pays.
compileall.compile_dir(ROOT / "src", quiet=1)


@dataclass(frozen=True)
class Run:
    """One whole-process run."""

    seconds: float
    rc: int
    self_rss_mib: float | None = None  # the tool's own peak RSS, when run through _self_rss.py
    modules: tuple[str, ...] = ()
    stdout: str = ""


@dataclass(frozen=True)
class Row:
    """One line of the table."""

    case: str
    figure: str  # what was measured, in words and units
    ratio: float | None  # against the floor named in ``floor``
    floor: str
    goal: str
    met: bool | None  # None: not measurable here (say why in ``figure``)


def run(
    argv: Sequence[str], *, timeout: float = 600, env: dict[str, str] | None = None, stdin: str | None = None
) -> Run:
    """Run a process to the end; wall time, exit status and what ``_self_rss.py`` reported."""
    with tempfile.NamedTemporaryFile("r", suffix=".json") as info:
        full_env = {**os.environ, **(env or {}), "MCP_BENCH_INFO": info.name}
        started = time.perf_counter()
        try:
            done = subprocess.run(
                list(argv),
                env=full_env,
                input=stdin,
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Run(timeout, -1)
        seconds = time.perf_counter() - started
        text = Path(info.name).read_text()
    facts = json.loads(text) if text.strip() else {}
    return Run(
        seconds,
        done.returncode,
        facts.get("maxrss_kib", 0) / 1024 if facts else None,
        tuple(facts.get("modules", ())),
        done.stdout + done.stderr,
    )


def paired(floor: Callable[[], Run], tool: Callable[[], Run], rounds: int) -> tuple[list[Run], list[Run], float]:
    """``rounds`` interleaved pairs (alternating which side goes first); the median ratio."""
    floors: list[Run] = []
    tools: list[Run] = []
    ratios: list[float] = []
    for i in range(rounds):
        if i % 2:
            t = tool()
            f = floor()
        else:
            f = floor()
            t = tool()
        floors.append(f)
        tools.append(t)
        ratios.append(t.seconds / f.seconds)
    return floors, tools, statistics.median(ratios)


def median_s(runs: Sequence[Run]) -> float:
    return statistics.median(r.seconds for r in runs)


def check_ok(runs: Sequence[Run], what: str) -> None:
    """A benchmark of a failing run measures nothing: stop with its output."""
    for r in runs:
        if r.rc != 0:
            sys.exit(f"{what} exited {r.rc}:\n{r.stdout[-2000:]}")


def exchange(proc: subprocess.Popen[bytes], message: dict, tape: Tape) -> dict:
    """Send ``message`` and read up to its answer; every line both ways goes on ``tape``, as the
    recording proxy tees it (a notification or request the server sent on the way included)."""
    assert proc.stdin is not None and proc.stdout is not None
    line = json.dumps(message).encode() + b"\n"
    tape.client_line(line, time.monotonic())
    proc.stdin.write(line)
    proc.stdin.flush()
    while True:
        raw = proc.stdout.readline()
        tape.server_line(raw, time.monotonic())
        answer = json.loads(raw)
        if "id" in answer and answer.get("id") == message.get("id") and "method" not in answer:
            return answer


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def record(path: Path, server: Sequence[str], requests: Sequence[dict], env: dict[str, str] | None = None) -> None:
    """Record a cassette by talking to the real server (handshake, then ``requests``), as
    ``mcp-replay record`` does: every line both ways goes on the recording proxy's own tape
    (``record.tape.Tape``, redacting as it goes), so what the server sends besides its answers
    (``notifications/tools/list_changed``, a log line) is kept, in the order it came."""
    proc = subprocess.Popen(
        list(server), stdin=subprocess.PIPE, stdout=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    assert proc.stdin is not None and proc.stdout is not None
    tape = Tape(Redactor())
    exchange(proc, INIT, tape)
    line = json.dumps(INITIALIZED).encode() + b"\n"
    tape.client_line(line, time.monotonic())
    proc.stdin.write(line)
    for i, req in enumerate(requests):
        exchange(proc, {"jsonrpc": "2.0", "id": i + 1, **req}, tape)
    proc.stdin.close()
    for raw in proc.stdout:  # what the server still sends as it ends
        tape.server_line(raw, time.monotonic())
    proc.wait(timeout=30)
    save(with_lines(Cassette(meta={"server": list(server)}, interactions=tuple(tape.interactions()))), path)


def calc_calls(n: int) -> list[dict]:
    """``n`` tools/call requests on the bundled sample server (add, echo, now in turn)."""
    out = []
    for i in range(n):
        if i % 3 == 0:
            params = {"name": "add", "arguments": {"a": i, "b": 7}}
        elif i % 3 == 1:
            params = {"name": "echo", "arguments": {"message": f"message number {i}"}}
        else:
            params = {"name": "now", "arguments": {}}
        out.append({"method": "tools/call", "params": params})
    return out


def replay_argv(cassette: Path | str, server: Sequence[str], *extra: str) -> list[str]:
    """The CLI replay of one cassette (or glob) against a stdio server command."""
    return [*TOOL, "replay", "--cassette", str(cassette), "--server", _shell(server), *extra]


def _shell(argv: Sequence[str]) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in argv)


def peer_command() -> str | None:
    """mcp-recorder's console script, if installed (``run_all.py --install-peer``)."""
    local = ROOT / ".peer/bin/mcp-recorder"
    if local.exists():
        return str(local)
    return shutil.which("mcp-recorder")


def peer_cassette(path: Path) -> dict:
    """The cassette in mcp-recorder's JSON format, as mcp-recorder 0.5 accepts it: it requires an
    HTTP status even on stdio interactions, which our converter leaves null."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.cassette.recorder_json import to_recorder_json

    doc = to_recorder_json(load(path))
    for item in doc.get("interactions", []):
        if item.get("response_status") is None:
            item["response_status"] = 200
    return doc


def peer_row(path: Path, server: Sequence[str], tool_argv: Sequence[str], rounds: int, speedup_goal: float) -> Row:
    """``mcp-recorder verify`` on the same cassette and server, paired with our replay."""
    case = "… vs mcp-recorder verify"
    goal = f">= {speedup_goal:g}x faster"
    peer = peer_command()
    if peer is None:
        return Row(case, "mcp-recorder not installed (run_all.py --install-peer)", None, "mcp-recorder", goal, None)
    foreign = path.with_suffix(".recorder.json")
    foreign.write_text(json.dumps(peer_cassette(path)))
    peer_argv = [peer, "verify", "--cassette", str(foreign), "--target-stdio", _shell(server)]
    peers, tools, ratio = paired(lambda: run(peer_argv), lambda: run(tool_argv), rounds)
    # mcp-recorder has no masks: a fresh timestamp fails its verify (exit 1) after all the work.
    verdict = "" if all(p.rc in (0, 1) for p in peers) else f" (mcp-recorder exited {peers[0].rc})"
    speedup = 1 / ratio
    return Row(
        case,
        f"mcp-recorder {fmt_s(median_s(peers))}, replay {fmt_s(median_s(tools))}{verdict}",
        speedup,
        "mcp-recorder (x faster)",
        goal,
        speedup >= speedup_goal,
    )


def fmt_s(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def print_rows(rows: Sequence[Row]) -> None:
    """The table as Markdown."""
    print("| case | figure | ratio | floor / peer | goal | met |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}x"
        met = "n/a" if r.met is None else ("yes" if r.met else "NO")
        print(f"| {r.case} | {r.figure} | {ratio} | {r.floor} | {r.goal} | {met} |")


def compare_seconds(path: Path, changed_text: str) -> float:
    """compare() alone, in this process, on the cassette's last recorded answer and the same answer
    with its first text replaced by ``changed_text`` (one difference: one finding)."""
    import json

    from mcp_replay_action.cassette import load
    from mcp_replay_action.compare.engine import compare

    recorded = load(path).interactions[-1].response
    assert recorded is not None
    live = json.loads(json.dumps(recorded))
    live["result"]["content"][0]["text"] = changed_text
    started = time.perf_counter()
    findings = compare(recorded, live)
    elapsed = time.perf_counter() - started
    assert len(findings) == 1, findings
    return elapsed
