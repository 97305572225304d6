"""A comment that could not be written gets the advice that fits the cause (issue 30, the first CI
run): no token, an API that cannot be reached (a closed port on 127.0.0.1), a read-only token on
the repository's own pull request, and a pull request from a fork (the only cause whose fix is the
``post-comment`` recipe). The action's entrypoint as a subprocess, against the fake GitHub API."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import CALC_REGRESSED, ActionRun, make_workspace, run_action
from github_events import fork_pull_request, pull_request
from mcp_replay_action.errors import EXIT_GATE

pytestmark = pytest.mark.integration

RECIPE = "mode: post-comment"


def failing_run(tmp_path: Path, cassette: Path, api_url: str, token: str, *, fork: bool = False) -> str:
    """A pull request run whose gate fails (a comment is due); its one comment warning."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": cassette})
    run: ActionRun = run_action(
        ws,
        event_name="pull_request",
        event=fork_pull_request(8, "f" * 40) if fork else pull_request(7, "f" * 40),
        inputs={"server": CALC_REGRESSED, "cassettes": "cassettes/*.jsonl", "github-token": token},
        api_url=api_url,
    )
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr  # the verdict stands whatever the comment did
    [warning] = [c.data for c in run.annotations("warning") if c.properties.get("title") == "mcp-replay comment"]
    assert run.outputs["comment-written"] == "true"  # the report is saved in every case
    return warning


def test_no_token_says_to_give_the_action_one(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    warning = failing_run(tmp_path, calc_cassette, fake.url, "")
    assert warning.startswith("No github-token: the PR comment was not posted.")
    assert "${{ github.token }}" in warning and "pull-requests: write" in warning
    assert RECIPE not in warning and "fork" not in warning
    assert not fake.requests()  # nothing was sent without a token


def test_an_api_that_cannot_be_reached_says_to_re_run(tmp_path: Path, calc_cassette: Path) -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    warning = failing_run(tmp_path, calc_cassette, f"http://127.0.0.1:{port}", "app-token")
    assert "cannot reach the API" in warning and "re-run the job" in warning
    assert RECIPE not in warning and "fork" not in warning and "permissions" not in warning


def test_a_read_only_token_on_our_own_pull_request_says_which_permission(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    warning = failing_run(tmp_path, calc_cassette, fake.url, "fork-token")  # read-only, not a fork
    assert [r.status for r in fake.requests("POST")] == [403]
    assert "the token may not write to this pull request" in warning
    assert "permissions: pull-requests: write" in warning
    assert RECIPE not in warning and "fork" not in warning


def test_a_fork_gets_the_post_comment_recipe(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    warning = failing_run(tmp_path, calc_cassette, fake.url, "fork-token", fork=True)
    assert "comes from a fork, whose token is read-only" in warning
    assert RECIPE in warning and "#pull-requests-from-forks" in warning
    assert "mcp-replay-comment.json" in warning
