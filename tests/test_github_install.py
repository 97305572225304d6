"""The install step: runs in the working directory with the extra environment, its output shown
but never obeyed, bounded in time, failures typed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from mcp_replay_action.errors import EXIT_INFRA
from mcp_replay_action.github.commands import Commands
from mcp_replay_action.github.install import InstallError, run_install
from runner_parse import parse_commands

pytestmark = pytest.mark.integration


def test_output_is_shown_inside_a_group_and_never_obeyed(tmp_path: Path) -> None:
    buf = io.StringIO()
    run_install(
        "echo \"cwd=$(pwd) flag=$FLAG\"; echo '::set-output name=grade::A'; echo '  ##[error]x' >&2",
        cwd=tmp_path,
        env={"FLAG": "on"},
        out=Commands(buf),
    )
    text = buf.getvalue()
    assert f"cwd={tmp_path} flag=on" in text
    assert "set-output" in text and "##" in text
    assert [c.name for c in parse_commands(text)] == ["group", "endgroup"]


def test_failure_and_timeout_are_install_errors(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="status 3") as info:
        run_install("false || exit 3", cwd=tmp_path, env={}, out=Commands(io.StringIO()))
    assert info.value.exit_code == EXIT_INFRA
    with pytest.raises(InstallError, match="still running after 0.5 s"):
        run_install("sleep 30", cwd=tmp_path, env={}, out=Commands(io.StringIO()), timeout=0.5)


def test_pipefail(tmp_path: Path) -> None:
    with pytest.raises(InstallError):
        run_install("false | cat", cwd=tmp_path, env={}, out=Commands(io.StringIO()))


def test_a_background_process_holding_the_pipe_does_not_hold_the_run(tmp_path: Path) -> None:
    buf = io.StringIO()
    # The background job keeps the output pipe open for 5 s, then leaves a mark: the install
    # step must return on the shell's exit, before the mark exists, with what it printed so far.
    run_install("(sleep 5; echo late; touch done) & echo started", cwd=tmp_path, env={}, out=Commands(buf))
    shown = buf.getvalue().splitlines()
    assert "started" in shown and "late" not in shown
    assert not (tmp_path / "done").exists()


def test_a_shell_that_closes_its_output_is_still_waited_for(tmp_path: Path) -> None:
    buf = io.StringIO()
    run_install("echo before; exec >/dev/null 2>&1; sleep 1; touch done", cwd=tmp_path, env={}, out=Commands(buf))
    assert "before" in buf.getvalue().splitlines()
    assert (tmp_path / "done").exists()


def test_everything_printed_before_the_exit_is_shown(tmp_path: Path) -> None:
    buf = io.StringIO()
    run_install("seq 1 20000", cwd=tmp_path, env={}, out=Commands(buf))
    shown = buf.getvalue().splitlines()
    assert [line for line in shown if line.isdigit()] == [str(n) for n in range(1, 20001)]
