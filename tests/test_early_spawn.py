"""The replay command spawns its first server as soon as the plan is made, before the replay
engine is imported and the cassette read (``early.py``). What a user sees must not change: the
same report, the same one-line error for a bad cassette (reported before a server that cannot
start), no process and no ``--isolate`` home left behind, and ``--setup`` still run only after
the cassettes were checked."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import NODE_BIN, TAG_VAR, command, reap_strays, record_through_proxy, steady_noise, tagged_processes
from mcp_replay_action.commands import replay as replay_command
from mcp_replay_action.early import EarlyServer, spawn_early
from mcp_replay_action.options import from_flags, plan_from
from mcp_replay_action.plan import Plan
from mcp_replay_action.replay.engine import run
from mcp_replay_action.report.json_report import to_dict
from test_process import alive, escape_server

pytestmark = pytest.mark.integration

PY = sys.executable
CALC = f"{PY} -m mcp_replay_action.samples.calc_server"
REGRESSED = f"{PY} -m mcp_replay_action.samples.calc_server_regressed"
EVERYTHING = NODE_BIN / "mcp-server-everything"
BAD_LINE = '{"seq": 0, "kind": "request"\n'


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "mcp_replay_action", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture
def bad_cassette(tmp_path: Path) -> Path:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "mcp-replay/cassette@1", "meta": {}}\n' + BAD_LINE)
    return bad


def bad_line_error(bad: Path) -> str:
    """What ``replay`` printed for ``bad_cassette`` before the early spawn (main at f59552c)."""
    return f"mcp-replay: error: {bad}:2: invalid JSON: Expecting ',' delimiter (column 1)\n"


def test_the_server_is_spawned_before_the_replay_engine_is_imported(demo_cassette: Path) -> None:
    program = (
        "import subprocess, sys\n"
        "seen = []\n"
        "spawn = subprocess.Popen.__init__\n"
        "def noting(self, *args, **kwargs):\n"
        "    if not seen:\n"
        "        seen.append([m for m in ('mcp_replay_action.replay.engine', 'mcp_replay_action.cassette') if m in sys.modules])\n"
        "        print('loaded at spawn:', seen[0], file=sys.stderr)\n"
        "    spawn(self, *args, **kwargs)\n"
        "subprocess.Popen.__init__ = noting\n"
        "from mcp_replay_action.cli import main\n"
        "main()\n"
    )
    done = subprocess.run(
        [PY, "-c", program, "replay", "--server", CALC, "--cassette", str(demo_cassette)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    assert "loaded at spawn: []" in done.stderr, done.stderr


def test_a_bad_cassette_fails_as_before_and_the_early_server_is_ended(tmp_path: Path, bad_cassette: Path) -> None:
    pids = tmp_path / "pids"
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    tag = uuid.uuid4().hex  # inherited by every process the run starts, however it was spawned
    try:
        # A server that ignores the end of its stdin and leaves a setsid() grandchild behind.
        done = cli(
            "replay",
            "--server",
            escape_server(pids, "--stay"),
            "--isolate",
            "--cassette",
            str(bad_cassette),
            env={"TMPDIR": str(scratch), TAG_VAR: tag},
        )
        left = tagged_processes(tag)
    finally:
        reap_strays(tag, grace=0)
    assert done.returncode == 2
    assert done.stderr == bad_line_error(bad_cassette)
    assert done.stdout == ""
    # Ended with everything it started (it may have been stopped before it got to start its
    # grandchild, or to note its pid), and its --isolate home removed.
    assert left == []
    noted = [int(row.split()[1]) for row in pids.read_text().splitlines()] if pids.exists() else []
    assert not any(alive(pid) for pid in noted)
    assert list(scratch.iterdir()) == []


def test_a_bad_cassette_is_reported_before_a_server_that_cannot_start(bad_cassette: Path) -> None:
    done = cli("replay", "--server", "no-such-mcp-server --flag", "--cassette", str(bad_cassette))
    assert (done.returncode, done.stderr) == (2, bad_line_error(bad_cassette))


def test_a_missing_server_binary_still_exits_3_with_one_line(demo_cassette: Path) -> None:
    done = cli("replay", "--server", "no-such-mcp-server --flag", "--cassette", str(demo_cassette))
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == "mcp-replay: error: server command not found: no-such-mcp-server\n"


def test_setup_still_runs_only_after_the_cassettes_are_checked(tmp_path: Path, bad_cassette: Path) -> None:
    pids = tmp_path / "pids"
    marker = tmp_path / "setup-ran"
    setup = f"{PY} -c \"open('{marker}', 'w').close()\""
    done = cli("replay", "--server", escape_server(pids), "--setup", setup, "--cassette", str(bad_cassette))
    assert (done.returncode, done.stderr) == (2, bad_line_error(bad_cassette))
    assert not marker.exists() and not pids.exists()  # neither the setup nor the server ran


def cli_plan(*args: str) -> Plan:
    ctx = replay_command.replay.make_context("replay", list(args))
    return plan_from(from_flags(ctx.params), root=os.getcwd())


def report_of(plan: Plan, *, early: bool) -> dict[str, Any]:
    """The JSON report of ``plan``'s run, without what is timed (durations, latencies)."""
    outcome = run(plan, spawn_early(plan.target, plan.jobs) if early else None)
    return {"exit": outcome.exit_code, "report": _untimed(to_dict(outcome.report))}


def _untimed(value: Any) -> Any:
    """``value`` without timings, and without the values a server mints afresh on every start
    (what a substitution carried forward, and the live value of a minted value's noise; their
    paths and recorded values stay)."""
    if isinstance(value, dict):
        minted = "recorded" in value and "live" in value
        return {
            k: steady_noise(v, _untimed) if k == "noise" else _untimed(v)
            for k, v in value.items()
            if "duration" not in k and "latency" not in k and not (minted and k == "live")
        }
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


SERVERS = {
    "healthy": (CALC,),
    "regressed": (REGRESSED,),  # findings, and a confirming second run against a fresh start
    "isolated with env": (CALC, "--isolate", "--env", "BUILD=7"),
    "two cassettes": (REGRESSED, "--no-confirm"),
}


@pytest.mark.parametrize("case", sorted(SERVERS))
def test_an_early_spawn_reports_exactly_what_a_late_one_does(demo_cassette: Path, tmp_path: Path, case: str) -> None:
    server, *extra = SERVERS[case]
    cassettes = [demo_cassette]
    if case == "two cassettes":
        second = tmp_path / "second.jsonl"
        second.write_bytes(demo_cassette.read_bytes())
        cassettes.append(second)
    args = ["--server", server, *extra]
    for path in cassettes:
        args += ["--cassette", str(path)]
    plan = cli_plan(*args)
    late = report_of(plan, early=False)
    assert report_of(plan, early=True) == late
    assert late["report"]["cassettes"][0]["interactions"], late  # something was replayed and compared


async def everything_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.call_tool("echo", {"message": "hello"})
    await client.call_tool("get-sum", {"a": 2, "b": 40})
    return {}


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm ci in tests/servers installs server-everything")
def test_an_early_spawn_of_server_everything_reports_exactly_what_a_late_one_does(tmp_path: Path) -> None:
    cassette = tmp_path / "everything.jsonl"
    server = command(EVERYTHING, "stdio")
    record_through_proxy(server, cassette, everything_session)
    plan = cli_plan("--server", server, "--cassette", str(cassette))
    late = report_of(plan, early=False)
    assert report_of(plan, early=True) == late
    assert late["exit"] == 0, late


def test_no_early_spawn_where_it_would_change_what_runs_first(demo_cassette: Path) -> None:
    def early(*args: str) -> EarlyServer | None:
        plan = cli_plan(*args, "--cassette", str(demo_cassette))
        return spawn_early(plan.target, plan.jobs)

    assert early("--server", CALC, "--setup", "true") is None
    assert early("--url", "http://127.0.0.1:9/mcp") is None
    assert early("--server", CALC, "--jobs", "2") is None
    started = early("--server", CALC)
    assert started is not None
    pid = started._transport.pid
    assert pid is not None and alive(pid)
    started.discard()
    assert not alive(pid)


def test_an_option_error_found_after_the_spawn_reads_as_before(tmp_path: Path) -> None:
    """The cassettes are looked for, and the compare options checked, after the server is
    spawned: the errors are main's (f59552c printed these very lines), and nothing the run
    started is left."""
    tag = uuid.uuid4().hex
    missing = tmp_path / "nothing-here" / "*.jsonl"
    try:
        no_match = cli("replay", "--server", CALC, "--cassette", str(missing), env={TAG_VAR: tag})
        bad_path = cli(
            "replay", "--server", CALC, "--cassette", str(tmp_path), "--ignore-path", "result..x", env={TAG_VAR: tag}
        )
        left = tagged_processes(tag)
    finally:
        reap_strays(tag, grace=0)
    assert (no_match.returncode, no_match.stdout) == (2, "")
    assert no_match.stderr == f"mcp-replay: error: --cassette: no file matches {missing}\n"
    assert (bad_path.returncode, bad_path.stdout) == (2, "")
    assert bad_path.stderr == "mcp-replay: error: invalid ignore path 'result..x': cannot read '..x'\n"
    assert left == []


# Prints one line per process spawned, saying whether click was imported by then.
WATCHED = (
    "import runpy, sys\n"
    "def hook(event, args):\n"
    "    if event == 'subprocess.Popen':\n"
    "        print('spawned; click imported:', 'click' in sys.modules, file=sys.stderr)\n"
    "sys.addaudithook(hook)\n"
    "runpy.run_module('mcp_replay_action', run_name='__main__', alter_sys=True)\n"
)


def test_the_server_is_spawned_once_and_after_click_has_parsed_the_command_line(demo_cassette: Path) -> None:
    """No second reading of the command line before click (issue 19 deleted ``early.prespawn``):
    the one server of a --no-confirm replay starts after click, from click's own Target."""
    args = ("replay", "--server", CALC, "--cassette", str(demo_cassette), "--no-confirm")
    done = subprocess.run([PY, "-c", WATCHED, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stderr.splitlines() if line.startswith("spawned;")] == [
        "spawned; click imported: True"
    ]


@pytest.mark.parametrize("argv", [("--help",), ("inspect", "--help"), ("replay", "--help")])
def test_help_loads_no_transport(argv: tuple[str, ...]) -> None:
    """Help (of the group or of a command) loads neither the transports nor ctypes."""
    program = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('loaded:', sorted(m for m in sys.modules if m.startswith(\n"
        "    ('mcp_replay_action.transport', 'ctypes'))), file=sys.stderr))\n"
        "runpy.run_module('mcp_replay_action', run_name='__main__', alter_sys=True)\n"
    )
    done = subprocess.run([PY, "-c", program, *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "loaded: []"
