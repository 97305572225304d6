"""``mode: refresh`` on a cassette ``mcp-replay explore`` wrote: the server is explored again with
the options the header stored, so a tool the server gained since is called too (a replay could
only re-send the old requests). The real entrypoint, the fake GitHub API on 127.0.0.1 and a real
bare git repository on disk, as in test_github_refresh.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e_helpers import SERVERS, python_server, run_cli
from fakegithub import FakeGitHub
from git_origin import make_origin
from mcp_replay_action.errors import EXIT_OK
from test_github_refresh import BRANCH, REPO, dispatch, writes

pytestmark = pytest.mark.integration

SERVER = python_server(SERVERS / "explore_server.py")


def test_an_explored_cassette_is_explored_again_on_refresh(tmp_path: Path, fake: FakeGitHub) -> None:
    explored = tmp_path / "explored.jsonl"
    run = run_cli("explore", "--server", SERVER, "--cassette", explored, "--timeout", "1", "--call", "plain")
    assert run.code == 0, run.describe()
    origin = make_origin(tmp_path / "repo", {"cassettes/explored.jsonl": explored.read_bytes()})
    fake.add_git_repo(REPO, origin.bare)

    same = dispatch(origin, fake, {"server": SERVER})
    assert same.returncode == EXIT_OK, same.stdout + same.stderr
    assert "Exploring the server again for 1 explored cassette(s)" in same.stdout
    assert same.outputs["changed"] == "false", same.summary
    assert writes(fake) == []

    gained = dispatch(origin, fake, {"server": SERVER, "env": "EXPLORE_ADDED=1"})
    assert gained.returncode == EXIT_OK, gained.stdout + gained.stderr
    assert gained.outputs["changed-cassettes"] == "cassettes/explored.jsonl", gained.summary
    lines = [json.loads(line) for line in origin.show(BRANCH, "cassettes/explored.jsonl").splitlines()]
    called = [e["message"]["params"]["name"] for e in lines[1:] if e["message"].get("method") == "tools/call"]
    assert called == ["added_later", "lookup", "plain"]
    assert lines[0]["meta"]["explored"]["options"]["calls"] == ["plain"]
