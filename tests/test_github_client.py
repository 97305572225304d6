"""The REST client against the fake GitHub API over real HTTP: pagination, retries honouring
Retry-After and x-ratelimit-reset (bounded), typed errors, and a token that never leaks."""

from __future__ import annotations

import pytest

from fakegithub import FakeGitHub
from mcp_replay_action.errors import EXIT_INFRA
from mcp_replay_action.github.client import (
    Forbidden,
    GitHubClient,
    GitHubError,
    NotFound,
    RateLimited,
    Unprocessable,
    next_link,
)

pytestmark = pytest.mark.unit

REPO = "octo/demo"


class Recorder:
    """Collects the client's debug lines and the waits it asked for (without sleeping them)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.waits: list[float] = []

    def log(self, line: str) -> None:
        self.lines.append(line)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


def client(fake: FakeGitHub, token: str = "app-token", rec: Recorder | None = None, **kw: object) -> GitHubClient:
    rec = rec or Recorder()
    return GitHubClient(fake.url, token, log=rec.log, sleep=rec.sleep, **kw)  # type: ignore[arg-type]


def test_paginates_over_link_headers(fake: FakeGitHub) -> None:
    for i in range(250):
        fake.add_comment(REPO, 1, f"c{i}", "someone")
    items = list(client(fake).paginate(f"repos/{REPO}/issues/1/comments"))
    assert [c["body"] for c in items] == [f"c{i}" for i in range(250)]
    pages = fake.requests("GET", r"/issues/1/comments$")
    assert len(pages) == 3
    assert pages[0].query["per_page"] == ["100"]


def test_next_link_parsing() -> None:
    header = '<https://api.x/r?page=2>; rel="next", <https://api.x/r?page=5>; rel="last"'
    assert next_link(header) == "https://api.x/r?page=2"
    assert next_link('<https://api.x/r?page=1>; rel="prev"') is None
    assert next_link("") is None


def test_retries_5xx_then_succeeds(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 1, head_sha="a" * 40, head_ref="f")
    fake.fail_next("502")
    fake.fail_next("500")
    rec = Recorder()
    assert client(fake, rec=rec).get(f"repos/{REPO}/pulls/1")["number"] == 1
    assert rec.waits == [1.0, 2.0]
    assert [r.status for r in fake.log] == [502, 500, 200]


def test_secondary_rate_limit_honours_retry_after(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 1, head_sha="a" * 40, head_ref="f")
    fake.fail_next("secondary", retry_after=7)
    rec = Recorder()
    assert client(fake, rec=rec).get(f"repos/{REPO}/pulls/1")["number"] == 1
    assert rec.waits == [7.0]


def test_rate_limit_without_retry_after_waits_for_reset(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 1, head_sha="a" * 40, head_ref="f")
    fake.fail_next("secondary-no-retry-after", retry_after=5)
    fake.fail_next("primary", retry_after=5)
    rec = Recorder()
    assert client(fake, rec=rec).get(f"repos/{REPO}/pulls/1")["number"] == 1
    assert len(rec.waits) == 2
    assert all(3.0 <= w <= 7.5 for w in rec.waits), rec.waits


def test_429_is_retried(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 1, head_sha="a" * 40, head_ref="f")
    fake.fail_next("429", retry_after=2)
    rec = Recorder()
    client(fake, rec=rec).get(f"repos/{REPO}/pulls/1")
    assert rec.waits == [2.0]


def test_retries_are_bounded(fake: FakeGitHub) -> None:
    fake.fail_next("503", times=10)
    rec = Recorder()
    with pytest.raises(GitHubError) as info:
        client(fake, rec=rec, max_attempts=3).get(f"repos/{REPO}/pulls/1")
    assert info.value.status == 503 and "gave up after 3 attempts" in str(info.value)
    assert len(rec.waits) == 2
    assert info.value.exit_code == EXIT_INFRA


def test_a_wait_longer_than_the_bound_is_not_waited(fake: FakeGitHub) -> None:
    fake.fail_next("long-wait")
    rec = Recorder()
    with pytest.raises(RateLimited, match="asks to wait 3600"):
        client(fake, rec=rec).get(f"repos/{REPO}/pulls/1")
    assert rec.waits == []


def test_typed_errors(fake: FakeGitHub) -> None:
    fake.max_body = 10
    with pytest.raises(NotFound):
        client(fake).get(f"repos/{REPO}/pulls/404")
    with pytest.raises(Forbidden, match="Resource not accessible by integration"):
        client(fake, "fork-token").post(f"repos/{REPO}/issues/1/comments", {"body": "hi"})
    with pytest.raises(Unprocessable, match="body is too long"):
        client(fake).post(f"repos/{REPO}/issues/1/comments", {"body": "x" * 11})
    with pytest.raises(GitHubError, match="Bad credentials") as info:
        client(fake, "nope").get("user")
    assert type(info.value) is GitHubError


def test_network_failure_is_bounded_and_typed() -> None:
    rec = Recorder()
    gh = GitHubClient("http://127.0.0.1:9", "secret-token", log=rec.log, sleep=rec.sleep, max_attempts=2, timeout=2)
    with pytest.raises(GitHubError, match="cannot reach the API"):
        gh.get("user")
    assert len(rec.waits) == 1


def test_token_never_in_logs_errors_or_repr(fake: FakeGitHub) -> None:
    token = "ghs_SuperSecretValue123"
    fake.add_token(token, write=False)
    rec = Recorder()
    gh = client(fake, token, rec=rec)
    fake.fail_next("500")
    with pytest.raises(Forbidden) as info:
        gh.post(f"repos/{REPO}/issues/1/comments", {"body": "x"})
    assert token not in repr(gh)
    assert token not in str(info.value)
    assert all(token not in line for line in rec.lines)
    assert fake.log[-1].token == token  # it did go in the Authorization header


def test_token_is_not_sent_to_another_host(fake: FakeGitHub) -> None:
    gh = client(fake)
    with pytest.raises(GitHubError, match="another host"):
        gh.request("GET", "http://127.0.0.2:1/user")
