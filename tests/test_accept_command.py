"""The next step in the tool's own words: a failing replay's console and Markdown report name the
command that accepts it (``accept_command.update_command``, the one the action's comment names
too), and running that command as printed accepts the change. The pytest plugin's failure names
``--mcp-replay-update`` (tests/test_pytest_plugin.py)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from e2e_helpers import REPO, run_cli
from mcp_replay_action.accept_command import update_command

pytestmark = pytest.mark.integration

CASSETTE = REPO / "cassettes" / "calc" / "handshake.jsonl"
REGRESSED = shlex.join([sys.executable, "-m", "mcp_replay_action.samples.calc_server_regressed"])
LEAD = "to accept these changes, review them and run: "


def test_a_failing_replay_names_the_command_that_accepts_it_and_the_command_does(tmp_path: Path) -> None:
    cassette = tmp_path / "calc.jsonl"
    shutil.copy(CASSETTE, cassette)
    markdown = tmp_path / "report.md"
    failed = run_cli("replay", "--server", REGRESSED, "--cassette", cassette, "--markdown", markdown, cwd=tmp_path)
    assert failed.code == 1, failed.describe()
    [line] = [line for line in failed.stdout.splitlines() if line.startswith(LEAD)]
    command = line[len(LEAD) :]
    assert command == f"mcp-replay replay --server {shlex.quote(REGRESSED)} --cassette {cassette} --update"
    page = markdown.read_text("utf-8")
    assert f"To accept these changes, review them and run:\n\n```sh\n{command}\n```" in page
    # The command as printed (in the same directory) accepts the change; the next replay passes.
    argv = shlex.split(command)
    assert argv[:2] == ["mcp-replay", "replay"]
    accepted = run_cli(*argv[1:], cwd=tmp_path)
    assert accepted.code == 0, accepted.describe()
    again = run_cli("replay", "--server", REGRESSED, "--cassette", cassette, cwd=tmp_path)
    assert again.code == 0 and LEAD not in again.stdout, again.describe()


def test_a_clean_replay_names_nothing(tmp_path: Path) -> None:
    healthy = shlex.join([sys.executable, "-m", "mcp_replay_action.samples.calc_server"])
    run = run_cli("replay", "--server", healthy, "--cassette", CASSETTE)
    assert run.code == 0 and LEAD not in run.stdout, run.describe()


def test_the_command_keeps_secrets_out() -> None:
    command = update_command(
        server=("node", "srv.js", "--api-key", "s3cr3t-v4lue-123"),
        url=None,
        cassettes=("cassettes/*.jsonl",),
        env=(("TOKEN", "tok-abcdef-123456"),),
        ignore_notifications=("progress",),
    )
    assert "s3cr3t-v4lue-123" not in command and "tok-abcdef-123456" not in command
    assert '--env "TOKEN=$TOKEN"' in command
    assert "--ignore-notifications progress" in command and command.endswith(" --update")
    bare = update_command(url="https://user:pw@example.test/mcp?key=abc", update=False)
    assert "pw" not in bare and "key=abc" not in bare and not bare.endswith("--update")
    assert update_command() == ""
