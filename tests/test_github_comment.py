"""The sticky comment against the fake GitHub API: found by marker AND author across pages,
edited only when changed, one per comment-id, forks and oversized bodies handled, and the
post-comment path verified against the workflow run."""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from fakegithub import BOT, FakeGitHub
from github_events import workflow_run
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github import comment as sticky
from mcp_replay_action.github.client import Forbidden, GitHubClient, Unprocessable
from mcp_replay_action.github.event import event_from_payload
from mcp_replay_action.github.template import render_comment
from mcp_replay_action.report import json_report as report_json
from report_fixtures import hostile_report

pytestmark = pytest.mark.unit

REPO = "octo/demo"
SHA = "c0ffee" + "0" * 34


def gh(fake: FakeGitHub, token: str = "app-token") -> GitHubClient:
    return GitHubClient(fake.url, token, sleep=lambda _s: None)


def body(text: str, comment_id: str = "default") -> str:
    return f"{sticky.marker(comment_id)}\n{text}\n"


def test_create_then_unchanged_then_update(fake: FakeGitHub) -> None:
    first = sticky.upsert_comment(gh(fake), REPO, 5, body("grade A"), "default")
    assert first is not None and first.action == "created"
    again = sticky.upsert_comment(gh(fake), REPO, 5, body("grade A"), "default")
    assert again is not None and (again.action, again.id) == ("unchanged", first.id)
    changed = sticky.upsert_comment(gh(fake), REPO, 5, body("grade B"), "default")
    assert changed is not None and (changed.action, changed.id) == ("updated", first.id)
    assert [c["body"] for c in fake.comments[(REPO, 5)]] == [body("grade B")]
    assert len(fake.requests("PATCH")) == 1 and len(fake.requests("POST")) == 1


def test_found_on_a_later_page_among_many_comments(fake: FakeGitHub) -> None:
    for i in range(150):
        fake.add_comment(REPO, 5, f"chatter {i}", "someone")
    ours = fake.add_comment(REPO, 5, body("old"), BOT)
    for i in range(30):
        fake.add_comment(REPO, 5, f"more {i}", "someone")
    posted = sticky.upsert_comment(gh(fake), REPO, 5, body("new"), "default")
    assert posted is not None and posted.id == ours["id"] and posted.action == "updated"
    assert len(fake.requests("GET", r"/comments$")) == 2
    assert not fake.requests("POST")


def test_marker_quoted_by_someone_else_is_not_ours(fake: FakeGitHub) -> None:
    theirs = fake.add_comment(REPO, 5, "> quoting\n" + body("their copy"), "octocat")
    posted = sticky.upsert_comment(gh(fake), REPO, 5, body("ours"), "default")
    assert posted is not None and posted.action == "created" and posted.id != theirs["id"]
    assert theirs["body"] == "> quoting\n" + body("their copy")


def test_one_comment_per_comment_id(fake: FakeGitHub) -> None:
    sticky.upsert_comment(gh(fake), REPO, 5, body("py", "python"), "python")
    sticky.upsert_comment(gh(fake), REPO, 5, body("node", "node"), "node")
    sticky.upsert_comment(gh(fake), REPO, 5, body("py2", "python"), "python")
    assert sorted(c["body"] for c in fake.comments[(REPO, 5)]) == [body("node", "node"), body("py2", "python")]


def test_personal_token_uses_its_own_login(fake: FakeGitHub) -> None:
    fake.add_comment(REPO, 5, body("bot's"), BOT)
    posted = sticky.upsert_comment(gh(fake, "user-token"), REPO, 5, body("mine"), "default")
    assert posted is not None and posted.action == "created"
    assert fake.comments[(REPO, 5)][-1]["user"]["login"] == "octo-user"
    assert sticky.my_login(gh(fake)) == BOT


def test_read_only_token_raises_forbidden(fake: FakeGitHub) -> None:
    with pytest.raises(Forbidden):
        sticky.upsert_comment(gh(fake, "fork-token"), REPO, 5, body("x"), "default")
    assert not fake.comments.get((REPO, 5))


def test_oversized_body_falls_back_to_the_short_one(fake: FakeGitHub) -> None:
    fake.max_body = 100
    long_body = body("x" * 500)
    with pytest.raises(Unprocessable):
        sticky.upsert_comment(gh(fake), REPO, 5, long_body, "default")
    posted = sticky.upsert_comment(gh(fake), REPO, 5, long_body, "default", fallback=body("short"))
    assert posted is not None and posted.action == "created"
    assert fake.comments[(REPO, 5)][0]["body"] == body("short")


def test_update_only_does_not_create(fake: FakeGitHub) -> None:
    assert sticky.upsert_comment(gh(fake), REPO, 5, body("ok"), "default", create=False) is None
    assert not fake.requests("POST")


def test_body_without_marker_is_refused(fake: FakeGitHub) -> None:
    with pytest.raises(ValueError):
        sticky.upsert_comment(gh(fake), REPO, 5, "no marker", "default")


# -- the comment file and post-comment --------------------------------------------------------


def saved(pr: int = 12, sha: str = SHA) -> sticky.SavedComment:
    return sticky.SavedComment(REPO, pr, sha, "default", report_json.to_dict(hostile_report()), run_id="99")


def test_comment_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    sticky.save_comment_file(path, saved())
    assert sticky.load_comment_file(path) == saved()


@pytest.mark.parametrize(
    ("doc", "needle"),
    [
        ("not json", "not JSON"),
        ({"schema": "other"}, "not a comment file"),
        ({"schema": sticky.COMMENT_FILE_SCHEMA, "pr_number": "12"}, "pr_number"),
        (
            {
                "schema": sticky.COMMENT_FILE_SCHEMA,
                "pr_number": 1,
                "repository": "",
                "head_sha": "",
                "comment_id": "x-->",
                "report": {},
                "run_id": "",
            },
            "comment_id",
        ),
    ],
)
def test_bad_comment_files(tmp_path: Path, doc: object, needle: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    with pytest.raises(ConfigError, match=needle):
        sticky.load_comment_file(path)
    with pytest.raises(ConfigError, match="no comment file"):
        sticky.load_comment_file(tmp_path / "absent.json")


def test_a_report_too_large_for_the_cap_is_saved_slim(tmp_path: Path) -> None:
    big = copy.deepcopy(saved().report)
    finding = big["cassettes"][0]["interactions"][0]["findings"]
    finding.append({"kind": "value-change", "class": "breaking", "path": "$.x", "message": "changed",
                    "before": "x" * sticky.MAX_COMMENT_FILE_BYTES, "after": "y", "diff": ""})  # fmt: skip
    path = tmp_path / "c.json"
    sticky.save_comment_file(path, replace(saved(), report=big))
    assert path.stat().st_size < sticky.MAX_COMMENT_FILE_BYTES
    loaded = sticky.load_comment_file(path)
    assert report_json.from_dict(loaded.report).score.grade == saved().report["grade"]


def test_a_saved_report_round_trips_through_its_schema() -> None:
    """The post-comment job rebuilds the report from the file (after the schema check) and
    renders the same comment the run would have rendered."""
    again = report_json.from_dict(saved().report)
    assert report_json.to_dict(again) == saved().report
    assert render_comment(again, marker=sticky.marker("default")) == render_comment(
        hostile_report(), marker=sticky.marker("default")
    )


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (lambda r: r.update(grade="A+"), "grade"),
        (lambda r: r["cassettes"][0].update(passed="many"), "cassettes/0/passed"),
        (lambda r: r["cassettes"][0]["interactions"][0].update(status="owned"), "status"),
        (lambda r: r.pop("score"), "score"),
    ],
)
def test_a_report_that_breaks_its_schema_is_refused(mutate: Any, needle: str) -> None:
    bad = copy.deepcopy(saved().report)
    mutate(bad)
    with pytest.raises(ConfigError, match=f"not a valid report at .*{needle}|{needle}"):
        report_json.from_dict(bad, where="comment file")


def fork_run_event(run_id: int = 99, sha: str = SHA, pr_numbers: tuple[int, ...] = ()):  # type: ignore[no-untyped-def]
    return event_from_payload("workflow_run", workflow_run(run_id, sha, fork=True, pr_numbers=pr_numbers))


def test_verification_accepts_the_runs_pull_request(fake: FakeGitHub) -> None:
    fake.add_run(REPO, 99, head_sha=SHA, head_branch="patch-1", head_repo="stranger/demo")
    fake.add_pull(REPO, 12, head_sha=SHA, head_ref="patch-1", head_repo="stranger/demo")
    verdict = sticky.verify_saved_comment(gh(fake), REPO, fork_run_event(), saved())
    assert verdict.ok, verdict.reason


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        ({"pull_sha": "d" * 40}, "head is now"),
        ({"pull_ref": "other"}, "head branch"),
        ({"pull_repo": "mallory/demo"}, "another repository"),
        ({"run_event": "push"}, "not a pull request"),
        ({"pr": 13}, "does not exist"),
        ({"run_prs": (14,)}, "not one of the run's"),
        ({"saved_sha": "e" * 40}, "another commit"),
    ],
)
def test_verification_refuses_a_mismatch(fake: FakeGitHub, setup: dict[str, object], needle: str) -> None:
    fake.add_run(
        REPO,
        99,
        head_sha=SHA,
        head_branch="patch-1",
        head_repo="stranger/demo",
        event=str(setup.get("run_event", "pull_request")),
        pull_requests=setup.get("run_prs", ()),  # type: ignore[arg-type]
    )
    fake.add_pull(
        REPO,
        12,
        head_sha=str(setup.get("pull_sha", SHA)),
        head_ref=str(setup.get("pull_ref", "patch-1")),
        head_repo=str(setup.get("pull_repo", "stranger/demo")),
    )
    mine = saved(pr=int(setup.get("pr", 12)), sha=str(setup.get("saved_sha", SHA)))  # type: ignore[call-overload]
    verdict = sticky.verify_saved_comment(gh(fake), REPO, fork_run_event(), mine)
    assert not verdict.ok
    assert needle in verdict.reason


def test_post_comment_outside_workflow_run_is_a_config_error(fake: FakeGitHub) -> None:
    with pytest.raises(ConfigError, match="workflow_run"):
        sticky.verify_saved_comment(gh(fake), REPO, event_from_payload("push", {}), saved())
