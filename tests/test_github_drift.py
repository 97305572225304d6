"""The scheduled drift watch and the failing comment's refresh link, end to end through the real
entrypoint against the sample servers and the fake GitHub API on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import CALC, CALC_REGRESSED, make_workspace, run_action
from github_events import pull_request, schedule
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK
from mcp_replay_action.github.drift import drift_marker

pytestmark = pytest.mark.integration

REPO = "octo/demo"
SHA = "abc1234" + "0" * 33
WORKFLOW_REF = f"{REPO}/.github/workflows/mcp-replay.yml@refs/heads/main"
REFRESH_PAGE = f"https://github.com/{REPO}/actions/workflows/mcp-replay.yml"


def scheduled(ws: Path, fake: FakeGitHub, server: str, run_id: int, **more: str):  # type: ignore[no-untyped-def]
    return run_action(
        ws,
        event_name="schedule",
        event=schedule(),
        inputs={"server": server, "github-token": "app-token", **more},
        api_url=fake.url,
        extra_env={"GITHUB_RUN_ID": str(run_id), "GITHUB_WORKFLOW_REF": WORKFLOW_REF},
    )


def test_schedule_opens_one_issue_updates_it_and_closes_it_when_clean(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    # A clean run with no issue open creates nothing.
    clean = scheduled(ws, fake, CALC, 1)
    assert clean.returncode == EXIT_OK, clean.stdout + clean.stderr
    assert clean.outputs["drift-issue-url"] == "" and fake.issues == {}

    first = scheduled(ws, fake, CALC_REGRESSED, 2, **{"drift-labels": "drift"})
    assert first.returncode == EXIT_GATE, first.stdout + first.stderr
    (issue,) = fake.repo_issues(REPO)
    assert first.outputs["drift-issue-url"] == issue["html_url"]
    assert issue["state"] == "open" and issue["title"].startswith("MCP replay: drift")
    assert issue["body"].startswith(drift_marker("default"))
    assert "grade" in issue["body"] and "value-change" in issue["body"] and "/actions/runs/2" in issue["body"]
    assert REFRESH_PAGE in issue["body"]  # accept the drift with a refresh
    assert [label["name"] for label in issue["labels"]] == ["drift"]
    assert fake.comments == {}  # no pull request, no comment

    second = scheduled(ws, fake, CALC_REGRESSED, 3)
    assert second.returncode == EXIT_GATE
    (again,) = fake.repo_issues(REPO)
    assert again["number"] == issue["number"] and "/actions/runs/3" in again["body"]
    assert len(fake.requests("POST", r"/issues$")) == 1 and len(fake.requests("PATCH", r"/issues/\d+$")) == 1

    fixed = scheduled(ws, fake, CALC, 4)
    assert fixed.returncode == EXIT_OK
    (closed,) = fake.repo_issues(REPO)
    assert closed["number"] == issue["number"] and closed["state"] == "closed"
    assert fixed.outputs["drift-issue-url"] == closed["html_url"]
    (last,) = fake.comments[(REPO, issue["number"])]
    assert "clean again" in last["body"] and "/actions/runs/4" in last["body"]

    # Failing again later opens a new issue (the closed one stays closed).
    scheduled(ws, fake, CALC_REGRESSED, 5)
    assert [i["state"] for i in fake.repo_issues(REPO)] == ["closed", "open"]


def test_drift_issue_without_issues_permission_is_a_warning_naming_it(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    fake.add_token("no-issues", permissions=frozenset({"contents"}))
    run = scheduled(ws, fake, CALC_REGRESSED, 1, **{"github-token": "no-issues"})
    assert run.returncode == EXIT_GATE  # the replay's verdict stands
    warnings = [c.data for c in run.annotations("warning")]
    assert any("issues: write" in w for w in warnings), warnings
    assert fake.issues == {}


@pytest.mark.parametrize(
    ("inputs", "page"),
    [
        ({}, REFRESH_PAGE),
        ({"refresh-workflow": "refresh.yml"}, f"https://github.com/{REPO}/actions/workflows/refresh.yml"),
    ],
)
def test_a_failing_comment_links_to_the_refresh_workflow_and_a_passing_one_does_not(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path, inputs: dict[str, str], page: str
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    env = {"GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/mcp-replay.yml@refs/pull/7/merge"}

    def pr_run(server: str):  # type: ignore[no-untyped-def]
        inputs_ = {"server": server, "github-token": "app-token", **inputs}
        return run_action(
            ws, event_name="pull_request", event=pull_request(7, SHA), inputs=inputs_, api_url=fake.url, extra_env=env
        )

    assert pr_run(CALC_REGRESSED).returncode == EXIT_GATE
    (comment,) = fake.comments[(REPO, 7)]
    assert f"[run the refresh workflow]({page})" in comment["body"]
    assert pr_run(CALC).returncode == EXIT_OK
    (comment,) = fake.comments[(REPO, 7)]
    assert "refresh workflow" not in comment["body"]
