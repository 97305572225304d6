"""The git data, pull request and issue functions against the fake GitHub API, whose repository
is a real bare git repository on disk: what the API wrote is checked with git itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakegithub import FakeGitHub, git
from git_origin import Origin, make_origin
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github import gitdata, pulls
from mcp_replay_action.github.client import GitHubClient, MissingPermission

pytestmark = pytest.mark.integration

REPO = "octo/demo"


@pytest.fixture
def origin(tmp_path: Path, fake: FakeGitHub) -> Origin:
    origin = make_origin(tmp_path, {"cassettes/a.jsonl": b"a1\n", "cassettes/b.jsonl": b"b1\n", "README.md": b"hi\n"})
    fake.add_git_repo(REPO, origin.bare)
    return origin


def gh(fake: FakeGitHub, token: str = "app-token") -> GitHubClient:
    return GitHubClient(fake.url, token, sleep=lambda _s: None)


def test_one_commit_on_base_tree_changes_exactly_the_given_files(fake: FakeGitHub, origin: Origin) -> None:
    client = gh(fake)
    assert gitdata.default_branch(client, REPO) == "main"
    sha = gitdata.commit_files(
        client,
        REPO,
        parent=origin.sha,
        files={"cassettes/b.jsonl": b"b2\n", "cassettes/new/c.jsonl": b"c\n"},
        message="refresh",
    )
    assert gitdata.set_branch(client, REPO, "mcp-replay/refresh", sha) == "created"
    assert origin.head("mcp-replay/refresh") == sha
    assert origin.files_changed(origin.sha, sha) == ["cassettes/b.jsonl", "cassettes/new/c.jsonl"]
    assert origin.show(sha, "cassettes/a.jsonl") == "a1"
    assert origin.show(sha, "README.md") == "hi"
    # github-actions[bot] authors and commits by default; the parent is the workflow's commit.
    assert git(origin.bare, "log", "-1", "--format=%an <%ae>|%cn|%P|%s", sha) == (
        f"{gitdata.BOT.name} <{gitdata.BOT.email}>|{gitdata.BOT.name}|{origin.sha}|refresh"
    )


def test_set_branch_force_updates_a_branch_that_is_not_an_ancestor(fake: FakeGitHub, origin: Origin) -> None:
    client = gh(fake)
    first = gitdata.commit_files(client, REPO, parent=origin.sha, files={"cassettes/a.jsonl": b"x\n"}, message="one")
    gitdata.set_branch(client, REPO, "r", first)
    second = gitdata.commit_files(client, REPO, parent=origin.sha, files={"cassettes/a.jsonl": b"y\n"}, message="two")
    assert gitdata.set_branch(client, REPO, "r", second) == "updated"
    assert origin.head("r") == second
    assert fake.requests("PATCH", r"/git/refs/heads/r$")[-1].body == {"sha": second, "force": True}


def test_a_token_without_contents_write_gets_an_error_naming_it(fake: FakeGitHub, origin: Origin) -> None:
    fake.add_token("read-contents", permissions=frozenset({"pull-requests", "issues"}))
    with pytest.raises(MissingPermission, match=r"contents: write") as info:
        gitdata.commit_files(gh(fake, "read-contents"), REPO, parent=origin.sha, files={"x": b"1"}, message="m")
    assert info.value.status == 403
    assert "Resource not accessible by integration" in info.value.one_line()
    assert not origin.has_branch("r")


def test_pull_is_opened_once_then_updated_and_labelled(fake: FakeGitHub, origin: Origin) -> None:
    client = gh(fake)
    sha = gitdata.commit_files(client, REPO, parent=origin.sha, files={"cassettes/a.jsonl": b"x\n"}, message="m")
    gitdata.set_branch(client, REPO, "mcp-replay/refresh", sha)
    first = pulls.upsert_pull(
        client, REPO, head="mcp-replay/refresh", base="main", title="T", body="B", draft=True, labels=("mcp", "bot")
    )
    assert first.action == "created"
    again = pulls.upsert_pull(client, REPO, head="mcp-replay/refresh", base="main", title="T", body="B")
    assert again == pulls.Opened(first.number, first.url, "unchanged")
    third = pulls.upsert_pull(client, REPO, head="mcp-replay/refresh", base="main", title="T2", body="B2")
    assert (third.number, third.action) == (first.number, "updated")
    (pull,) = fake.open_pulls(REPO)
    assert (pull["title"], pull["body"], pull["draft"]) == ("T2", "B2", True)
    assert [label["name"] for label in pull["labels"]] == ["mcp", "bot"]


def test_pull_creation_403s_name_the_permission_or_the_repository_setting(fake: FakeGitHub, origin: Origin) -> None:
    gitdata.set_branch(gh(fake), REPO, "r", origin.sha)
    fake.add_token("no-setting", create_pulls=False)
    with pytest.raises(MissingPermission, match="Allow GitHub Actions to create and approve pull requests"):
        pulls.upsert_pull(gh(fake, "no-setting"), REPO, head="r", base="main", title="T", body="B")
    fake.add_token("no-pulls", permissions=frozenset({"contents"}))
    with pytest.raises(MissingPermission, match="pull-requests: write"):
        pulls.upsert_pull(gh(fake, "no-pulls"), REPO, head="r", base="main", title="T", body="B")
    assert fake.open_pulls(REPO) == []


def test_issue_by_marker_opened_updated_closed_and_others_left_alone(fake: FakeGitHub, origin: Origin) -> None:
    client = gh(fake)
    mark = "<!-- mcp-replay-drift:default -->"
    fake.issues[(REPO, 50)] = {
        "number": 50,
        "state": "open",
        "title": "quoted",
        "body": f"someone quoting {mark}",
        "user": {"login": "someone"},
        "html_url": "u",
    }
    opened = pulls.upsert_issue(
        client, REPO, marker=mark, login="github-actions[bot]", title="Drift", body=mark + "\n1"
    )
    assert opened.action == "created"
    again = pulls.upsert_issue(client, REPO, marker=mark, login="github-actions[bot]", title="Drift", body=mark + "\n2")
    assert (again.number, again.action) == (opened.number, "updated")
    closed = pulls.close_issue(client, REPO, marker=mark, login="github-actions[bot]", comment="clean again")
    assert closed is not None and closed.number == opened.number
    assert fake.issues[(REPO, opened.number)]["state"] == "closed"
    assert fake.issues[(REPO, 50)]["state"] == "open"
    assert pulls.close_issue(client, REPO, marker=mark, login="github-actions[bot]", comment="x") is None
    fake.add_token("no-issues", permissions=frozenset({"contents"}))
    with pytest.raises(MissingPermission, match="issues: write"):
        pulls.upsert_issue(gh(fake, "no-issues"), REPO, marker=mark, login="github-actions[bot]", title="t", body=mark)


@pytest.mark.parametrize("name", ["", "a..b", "-x", "a b", "x.lock", "a/", "refs~1", "a:b"])
def test_bad_branch_names_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="refresh-branch"):
        gitdata.check_branch_name(name)


def test_commit_author_input_is_name_and_email() -> None:
    assert gitdata.parse_person("Ada <ada@example.com>") == gitdata.Person("Ada", "ada@example.com")
    with pytest.raises(ConfigError, match="commit-author"):
        gitdata.parse_person("ada@example.com")
