"""The console script spawns a plain stdio replay's server before click is imported
(``launch.py``, ``early.prespawn``): the command line is read without click, and the replay takes
that server only when click's reading gives the same ``Target``. These tests hold the reading to
click's (on generated command lines), and check that a server no replay takes is stopped and that
what a user sees does not change."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import click
import pytest

from e2e_helpers import TAG_VAR, reap_strays, tagged_processes
from mcp_replay_action import early
from mcp_replay_action.commands import replay as replay_command
from mcp_replay_action.errors import ReplayError
from test_process import alive

PY = sys.executable
CALC = f"{PY} -m mcp_replay_action.samples.calc_server"
# Prints one line per process spawned, saying whether click was imported by then.
WATCHED = (
    "import runpy, sys\n"
    "def hook(event, args):\n"
    "    if event == 'subprocess.Popen':\n"
    "        print('spawned; click imported:', 'click' in sys.modules, file=sys.stderr)\n"
    "sys.addaudithook(hook)\n"
    "runpy.run_module('mcp_replay_action', run_name='__main__', alter_sys=True)\n"
)


def watched(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m mcp_replay_action ARGS`` (the console script's path), noting each spawn."""
    return subprocess.run(
        [PY, "-c", WATCHED, *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def clicks(*args: str) -> subprocess.CompletedProcess[str]:
    """The same command line run by the CLI alone, with no prespawn (``cli.entry``)."""
    program = "import sys\nfrom mcp_replay_action.cli import entry\nsys.argv[0] = 'mcp-replay'\nentry()\n"
    return subprocess.run(
        [PY, "-c", program, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def spawns(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("spawned;")]


def without_spawns(done: subprocess.CompletedProcess[str]) -> str:
    """stderr less the spawn notes, naming the program as ``clicks`` does."""
    kept = "".join(line + "\n" for line in done.stderr.splitlines() if not line.startswith("spawned;"))
    return kept.replace("python -m mcp_replay_action", "mcp-replay")


# -- the reading ------------------------------------------------------------------------------------


def test_the_flags_are_clicks_and_every_option_read_is_a_replay_option() -> None:
    flags: set[str] = set()
    options: set[str] = set()
    for param in replay_command.replay.params:
        assert isinstance(param, click.Option)
        names = {*param.opts, *param.secondary_opts}
        options |= names
        if param.is_flag:
            flags |= names
    assert early.FLAGS == flags
    assert set(early._READ) <= options
    assert early._NOT_EARLY - {"-h", "--help"} <= options


def clicks_reading(argv: list[str]) -> tuple[Any, int] | None:
    """The target and job count click reads from ``argv``, or None when it refuses it."""
    try:
        ctx = replay_command.replay.make_context(argv[0], argv[1:])
        return replay_command.replay_target(ctx.params), ctx.params["jobs"]
    except (click.ClickException, click.exceptions.Exit, ReplayError):
        return None


VALUES: dict[str, list[str]] = {
    "--server": [CALC, "node server.js --port 3", "'a b' c", "--server", "x=y"],
    "--target-stdio": [CALC, "uvx my-server"],
    "--cassette": ["a.jsonl", "--server", "--isolate", "c/*.jsonl"],
    "--cwd": ["/tmp", "sub dir"],
    "--env": ["A=1", "B=two words", "A=3", "NOEQUALS", "=v"],
    "--target-env": ["C=3", "D="],
    "--timeout": ["5", "0.5", "120", "abc", "nan", "1e1"],
    "--startup-timeout": ["60", "0.01", "inf", "7"],
    "--jobs": ["1", "2", "auto", "0"],
    "--ignore-key": ["id", "--server", "--jobs"],
    "--fail-on": ["any", "breaking", "nope"],
    "--report": ["r.json"],
    "--url": ["http://127.0.0.1:9/mcp"],
    "--setup": ["true"],
    "--header": ["X-A: 1"],
}
LONE = ["--isolate", "--no-confirm", "--json", "-v", "--verbose", "--update", "--allow-reorder", "--", "stray", "-x"]


def command_line(rng: random.Random) -> list[str]:
    argv = [rng.choice(["replay", "replay", "verify"])]
    if rng.random() < 0.9:
        argv += ["--server", rng.choice(VALUES["--server"])]
    argv += ["--cassette", "a.jsonl"]
    for _ in range(rng.randrange(5)):
        if rng.random() < 0.25:
            argv.append(rng.choice(LONE))
            continue
        name = rng.choice(sorted(VALUES))
        value = rng.choice(VALUES[name])
        argv += [f"{name}={value}"] if rng.random() < 0.3 else [name, value]
    return argv


def test_the_reading_is_clicks_on_generated_command_lines() -> None:
    rng = random.Random(20261201)
    taken = 0
    for _ in range(1500):
        argv = command_line(rng)
        ours, theirs = early.target_from_argv(argv), clicks_reading(argv)
        if ours is not None and theirs is not None:
            # Never a different server: the replay would stop ours and start its own.
            assert theirs == (ours, 1), argv
            taken += 1
        if theirs is not None and ours is None:
            target, jobs = theirs
            # Whenever the replay would spawn early, the prespawn did it (no --header here).
            would = bool(target.command) and not target.url and not target.setup and jobs == 1
            assert not would or any(a.startswith("--header") for a in argv), argv
    assert taken > 200  # the generated lines were not all refused


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--server", CALC, "--cassette", "a.jsonl", "--help"],
        ["replay", "-h", "--server", CALC],
        ["record", "--server", CALC, "--cassette", "a.jsonl"],
        ["replay", "--url", "http://127.0.0.1:9/mcp", "--server", CALC],
        ["replay", "--server", CALC, "--setup", "true"],
        ["replay", "--server", CALC, "--jobs", "2"],
        ["replay", "--cassette", "a.jsonl"],
        ["replay", "--server"],
        ["replay", "--server", CALC, "--isolate=yes"],
        ["replay", "--server", CALC, "--report", f"{__file__}/r.json"],  # refused before any server starts
        ["--version"],
        [],
    ],
)
def test_no_prespawn_for_anything_but_a_plain_stdio_replay(argv: list[str]) -> None:
    assert early.target_from_argv(argv) is None


def test_a_prespawned_server_is_taken_only_for_the_same_target() -> None:
    argv = ["replay", "--server", CALC, "--cassette", "a.jsonl"]
    same = early.target_from_argv(argv)
    assert same is not None
    early.prespawn(argv)
    try:
        assert early._PRESPAWNED is not None
        first = early._PRESPAWNED[1]
        pid = first._transport.pid
        assert pid is not None and alive(pid)
        other = early.target_from_argv([*argv, "--env", "BUILD=8"])
        assert other is not None and other != same
        second = early.spawn_early(other)  # click read another target: ours is stopped
        assert second is not None and second is not first and early._PRESPAWNED is None
        assert not alive(pid)
        second.discard()
        early.prespawn(argv)
        assert early._PRESPAWNED is not None
        kept = early._PRESPAWNED[1]
        assert early.spawn_early(same) is kept  # the same target: taken as it is
        kept.discard()
    finally:
        early.discard_prespawned()
    assert early._PRESPAWNED is None


# -- end to end -----------------------------------------------------------------------------------


def test_the_console_script_spawns_the_server_once_before_click_is_imported(demo_cassette: Path) -> None:
    done = watched("replay", "--server", CALC, "--cassette", str(demo_cassette))
    assert done.returncode == 0, done.stderr
    # The demo's job id is minted afresh by every start: a second, fresh start (the confirmation
    # pass, after click) settles it as noise. The replay's own server is the prespawned one.
    assert spawns(done) == ["spawned; click imported: False", "spawned; click imported: True"]
    once = watched("replay", "--server", CALC, "--cassette", str(demo_cassette), "--no-confirm")
    assert once.returncode == 0, once.stderr
    assert spawns(once) == ["spawned; click imported: False"]
    plain = clicks("replay", "--server", CALC, "--cassette", str(demo_cassette))
    assert (plain.returncode, plain.stdout.splitlines()[:3]) == (0, done.stdout.splitlines()[:3])


def test_help_spawns_nothing() -> None:
    done = watched("replay", "--server", CALC, "--help")
    assert (done.returncode, spawns(done)) == (0, [])
    plain = clicks("replay", "--server", CALC, "--help").stdout
    assert done.stdout.replace("python -m mcp_replay_action", "mcp-replay") == plain


@pytest.mark.parametrize(
    "extra",
    [
        ("--startup-timeout", "0.01"),  # read by the prespawn, refused by click (below 0.1)
        ("--fail-on", "nope"),  # an option the prespawn skips, refused by click
        ("--ignore-path", "result..x"),  # refused after the replay took the server
    ],
)
def test_a_command_line_click_refuses_reads_as_before_and_leaves_no_server(
    demo_cassette: Path, extra: tuple[str, ...]
) -> None:
    tag = uuid.uuid4().hex
    args = ("replay", "--server", CALC, "--cassette", str(demo_cassette), *extra)
    try:
        done = watched(*args, env={TAG_VAR: tag})
        left = tagged_processes(tag)
    finally:
        reap_strays(tag, grace=0)
    assert spawns(done) == ["spawned; click imported: False"]  # it was started, and stopped
    assert left == []
    plain = clicks(*args)
    assert plain.returncode == 2
    assert (done.returncode, done.stdout, without_spawns(done)) == (2, "", plain.stderr)


@pytest.mark.parametrize("argv", [("--help",), ("inspect", "--help"), ("replay", "--help")])
def test_other_commands_and_help_load_no_transport(argv: tuple[str, ...]) -> None:
    """The console script imports ``early`` for every command: only a replay it prespawns for
    may load the transport (and subprocess, ctypes) before click."""
    program = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('loaded:', sorted(m for m in sys.modules if m.startswith(\n"
        "    ('mcp_replay_action.transport', 'ctypes'))), file=sys.stderr))\n"
        "runpy.run_module('mcp_replay_action', run_name='__main__', alter_sys=True)\n"
    )
    done = subprocess.run([PY, "-c", program, *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == "loaded: []"
