"""``--setup CMD`` / action input ``setup``: a command run before each cassette's server start, so a
stateful server (here the real ``@modelcontextprotocol/server-memory``) starts from the recorded
state (issue 9 section 4)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from e2e_helpers import command, record_through_proxy, replay, run_cli
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.settings import Settings
from mcp_replay_action.options import clean_setup
from test_e2e_real_servers import MEMORY, assert_clean, memory_session, needs_node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RECORDED_STATE = '{"type":"entity","name":"Babbage","entityType":"person","observations":["designed the engine"]}\n'
SETUP = "cp recorded.jsonl memory.jsonl"


def recorded_memory(tmp_path: Path) -> tuple[Path, tuple[str, ...], Path]:
    """A server-memory session recorded from ``RECORDED_STATE``: the state directory (holding
    ``recorded.jsonl``), the options that point the server at it, and the cassette."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "recorded.jsonl").write_text(RECORDED_STATE)
    shutil.copy(state / "recorded.jsonl", state / "memory.jsonl")
    store = ("--cwd", str(state), "--env", f"MEMORY_FILE_PATH={state / 'memory.jsonl'}")
    cassette = tmp_path / "memory.jsonl"
    record_through_proxy(command(MEMORY), cassette, memory_session, proxy_args=list(store))
    return state, store, cassette


@needs_node
def test_setup_resets_server_memory_to_the_recorded_state(tmp_path: Path) -> None:
    state, store, cassette = recorded_memory(tmp_path)
    assert "Ada" in (state / "memory.jsonl").read_text()  # the session changed the store

    # Without --setup the server starts from what the recording left behind: entities that exist
    # already are not created again, and the answers differ.
    stale = replay(command(MEMORY), cassette, *store, report=tmp_path / "stale.json")
    assert stale.code == 1 and stale.findings(), stale.describe()

    for attempt in range(2):  # each replay changes the store again; setup resets it each time
        run = replay(command(MEMORY), cassette, *store, "--setup", SETUP, report=tmp_path / f"clean-{attempt}.json")
        assert_clean(run)


@needs_node
def test_a_failing_setup_is_a_clear_error_naming_it(tmp_path: Path) -> None:
    cassette = tmp_path / "memory.jsonl"
    store = ("--env", f"MEMORY_FILE_PATH={tmp_path / 'memory-store.jsonl'}")
    record_through_proxy(command(MEMORY), cassette, memory_session, proxy_args=list(store))
    run = run_cli(
        "replay",
        "--server",
        command(MEMORY),
        "--cassette",
        str(cassette),
        *store,
        "--cwd",
        str(tmp_path),
        "--setup",
        "cp no-such-state.jsonl memory.jsonl",
        report=tmp_path / "r.json",
    )
    assert run.code == 3, run.describe()
    assert "--setup cp failed with status 1" in run.stderr and "no-such-state.jsonl" in run.stderr, run.describe()


def test_action_input_setup_is_split_like_server_and_reaches_the_target(tmp_path: Path) -> None:
    assert clean_setup("") == ()
    assert clean_setup(" cp 'a state.jsonl' memory.jsonl ") == ("cp", "a state.jsonl", "memory.jsonl")
    with pytest.raises(ConfigError, match="input setup"):
        clean_setup("cp 'unclosed")
    settings = Settings(workspace=tmp_path, server=("python3", "-m", "x"), setup=("cp", "a", "b"))
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "c.jsonl").write_text("{}\n")
    assert settings.plan().target.setup == ("cp", "a", "b")


@needs_node
def test_calibrate_runs_setup_before_each_fresh_start(tmp_path: Path) -> None:
    # calibrate compares fresh runs of one build; a stateful server must start each of them from
    # the recorded state, or what the store accumulated between runs would be learned as noise.
    state, store, cassette = recorded_memory(tmp_path)

    setup = command("sh", "-c", f"{SETUP} && echo start >> starts.log")
    done = run_cli("calibrate", "--server", command(MEMORY), "--cassette", cassette, *store, "--setup", setup)
    assert done.code == 0, done.describe()
    assert (state / "starts.log").read_text().splitlines() == ["start"] * 3  # one reset per run
    assert "0 noise rule(s) from 3 runs" in done.stdout, done.describe()
    # The calibrated cassette still replays clean from the recorded state.
    assert_clean(replay(command(MEMORY), cassette, *store, "--setup", SETUP, report=tmp_path / "after.json"))

    failing = run_cli(
        "calibrate", "--server", command(MEMORY), "--cassette", cassette, *store, "--setup", "cp no-such.jsonl x"
    )
    assert failing.code == 3 and "--setup cp failed with status 1" in failing.stderr, failing.describe()
