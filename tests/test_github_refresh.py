"""``mode: refresh`` end to end: the real entrypoint (``python -m mcp_replay_action.github``) as a
subprocess, a real server whose answers change between builds, cassettes recorded through the
real proxy with a redacted secret, the fake GitHub API on 127.0.0.1, and a real bare git
repository on disk as ``origin`` (what the API wrote is checked with git itself)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e_helpers import accept_elicitation, command, record_through_proxy, roots_for
from fakegithub import BOT, FakeGitHub, git
from git_origin import Origin, make_origin
from github_action_run import FAKES, HOSTILE, PY, record_hostile_twin, record_session, run_action
from github_events import (
    fork_pull_request,
    issue_comment,
    pull_request,
    pull_request_review,
    pull_request_review_comment,
    push,
    schedule,
    workflow_dispatch,
    workflow_run,
)
from mcp_replay_action.errors import EXIT_INFRA, EXIT_OK, EXIT_USAGE
from mcp_replay_action.github.template import state_line
from test_e2e_real_servers import EVERYTHING, TIME, everything_session, needs_node, time_session
from test_github_main import check_markdown

pytestmark = pytest.mark.integration

REPO = "octo/demo"
SECRET = "sk-live-refresh-7f3a9c"
ENV_ECHO = f"{PY} {FAKES / 'env_echo_server.py'}"
BRANCH = "mcp-replay/refresh/main"  # the default: one refresh branch per base branch


def record(cassette: Path, *, build: str, calls: int) -> None:
    """Record a session against the env-echo server through ``mcp-replay record``, with the
    server's SERVICE_TOKEN redacted by name (``--redact-env``)."""
    echo = [("tools/call", {"name": "echo", "arguments": {"text": f"call {i}"}}) for i in range(calls)]
    record_session(
        cassette,
        ENV_ECHO,
        [("tools/list", None), *echo],
        options=("--redact-env", "SERVICE_TOKEN"),
        env={"BUILD": build, "SERVICE_TOKEN": SECRET},
    )


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("rec")
    record(root / "echo.jsonl", build="1", calls=2)
    record(root / "list.jsonl", build="1", calls=0)
    # A learned noise rule in the header (as `calibrate` writes one) must survive a refresh.
    header, *rest = (root / "echo.jsonl").read_text().splitlines()
    doc = json.loads(header)
    doc["meta"]["noise"] = [
        {"path": "$.result.tools[0].description", "pattern": None, "evidence": ["a", "b"], "seq": 1}
    ]
    echo = "\n".join([json.dumps(doc, separators=(",", ":")), *rest]) + "\n"
    files = {"cassettes/echo.jsonl": echo.encode(), "cassettes/list.jsonl": (root / "list.jsonl").read_bytes()}
    assert SECRET.encode() not in files["cassettes/echo.jsonl"]
    assert b"token [REDACTED]" in files["cassettes/echo.jsonl"]
    return files


@pytest.fixture
def origin(tmp_path: Path, fake: FakeGitHub, cassettes: dict[str, bytes]) -> Origin:
    origin = make_origin(tmp_path, {**cassettes, "README.md": b"demo\n"})
    fake.add_git_repo(REPO, origin.bare)
    return origin


def dispatch(origin: Origin, fake: FakeGitHub, inputs: dict[str, str], *, branch: str = "main"):  # type: ignore[no-untyped-def]
    """One workflow_dispatch run of ``mode: refresh`` in a fresh checkout of ``branch`` (as every
    workflow run gets), dispatched from that branch ("Use workflow from")."""
    git(origin.workspace, "checkout", "-q", "--", ".")
    return run_action(
        origin.workspace,
        event_name="workflow_dispatch",
        event={**workflow_dispatch(), "ref": f"refs/heads/{branch}"},
        inputs={"mode": "refresh", "github-token": "app-token", **inputs},
        api_url=fake.url,
        extra_env={"GITHUB_SHA": origin.head(branch)},
    )


def refresh(  # type: ignore[no-untyped-def]
    origin: Origin, fake: FakeGitHub, *, build: str, token: str = "app-token", branch: str = "main", **more: str
):
    """A refresh against the env-echo server at ``build``, dispatched from ``branch``."""
    env = f"BUILD={build}\nSERVICE_TOKEN={SECRET}"
    return dispatch(origin, fake, {"server": ENV_ECHO, "env": env, "github-token": token, **more}, branch=branch)


def writes(fake: FakeGitHub) -> list[str]:
    return [f"{r.method} {r.path}" for r in fake.log if r.method != "GET"]


def test_refresh_opens_one_pr_then_updates_it_and_a_clean_replay_follows(fake: FakeGitHub, origin: Origin) -> None:
    # Nothing changed: said so, outputs set, exit 0, nothing created.
    same = refresh(origin, fake, build="1")
    assert same.returncode == EXIT_OK, same.stdout + same.stderr
    assert same.outputs["changed"] == "false" and same.outputs["changed-cassettes"] == ""
    assert same.outputs["refresh-pr-url"] == "" and same.outputs["refresh-commit"] == ""
    assert "No cassette changed" in same.stdout and "No cassette changed" in same.summary
    assert writes(fake) == [] and origin.branches() == ["main"]

    # The server changed: one branch, one commit with exactly the changed cassette, one PR.
    first = refresh(origin, fake, build="2", **{"pr-labels": "mcp, refresh", "pr-draft": "true"})
    assert first.returncode == EXIT_OK, first.stdout + first.stderr
    assert first.outputs["changed"] == "true"
    assert first.outputs["changed-cassettes"] == "cassettes/echo.jsonl"
    assert first.outputs["refresh-branch"] == BRANCH
    commit = first.outputs["refresh-commit"]
    assert origin.branches() == ["main", BRANCH] and origin.head(BRANCH) == commit
    assert git(origin.bare, "rev-list", "--count", f"main..{BRANCH}") == "1"
    assert (
        git(origin.bare, "log", "-1", "--format=%P|%an|%cn|%s", commit)
        == f"{origin.sha}|{BOT}|{BOT}|mcp-replay: refresh cassettes"
    )
    assert origin.files_changed(origin.sha, commit) == ["cassettes/echo.jsonl"]
    committed = origin.show(commit, "cassettes/echo.jsonl")
    assert committed + "\n" == (origin.workspace / "cassettes/echo.jsonl").read_text()
    # The redacted secret is still the marker, never the live value; the header is kept.
    assert SECRET not in committed and committed.count("token [REDACTED]") == 2 and "build 2" in committed
    old_lines = json.loads(origin.show("main", "cassettes/echo.jsonl").splitlines()[0])["meta"]
    new_header = json.loads(committed.splitlines()[0])["meta"]
    assert {k: v for k, v in new_header.items() if k != "updated_at"} == old_lines
    assert new_header["noise"][0]["evidence"] == ["a", "b"]
    # Unchanged lines are byte for byte the recorded ones.
    before, after = origin.show("main", "cassettes/echo.jsonl").splitlines(), committed.splitlines()
    assert [a == b for a, b in zip(before, after, strict=True)] == [False, True, True, True, False, False]

    (pull,) = fake.open_pulls(REPO)
    assert first.outputs["refresh-pr-url"] == pull["html_url"]
    assert (pull["head"]["ref"], pull["base"]["ref"], pull["title"]) == (
        BRANCH,
        "main",
        "mcp-replay: refresh cassettes",
    )
    assert pull["draft"] is True and [label["name"] for label in pull["labels"]] == ["mcp", "refresh"]
    body = pull["body"]
    assert "cassettes/echo.jsonl" in body and "cassettes/list.jsonl" not in body
    assert body.count("value&#45;change") + body.count("value-change") >= 2
    # "#3" would link issue 3 on GitHub: the cell breaks it with a zero-width joiner.
    assert "breaking" in body and "#\u200d3 tools/call echo" in body and "#\u200d4 tools/call echo" in body
    assert "build 1" in body and "build 2" in body  # the capped diff shows before and after
    assert SECRET not in body and SECRET not in first.stdout and SECRET not in first.summary
    assert body.strip() in first.summary  # the same text goes to the job summary

    # A further change: the same branch (force-updated) and the same PR, updated.
    second = refresh(origin, fake, build="3")
    assert second.returncode == EXIT_OK, second.stdout + second.stderr
    assert second.outputs["refresh-commit"] != commit and origin.head(BRANCH) == second.outputs["refresh-commit"]
    assert git(origin.bare, "rev-list", "--count", f"main..{BRANCH}") == "1"
    assert origin.files_changed(origin.sha, origin.head(BRANCH)) == ["cassettes/echo.jsonl"]
    (again,) = fake.open_pulls(REPO)
    assert again["number"] == pull["number"] and second.outputs["refresh-pr-url"] == pull["html_url"]
    assert "build 3" in again["body"]
    assert len(fake.requests("POST", r"/pulls$")) == 1 and len(fake.requests("PATCH", r"/pulls/\d+$")) == 1

    # Replay against the same server after the refresh: 0 findings.
    clean = run_action(
        origin.workspace,
        event_name="workflow_dispatch",
        event=workflow_dispatch(),
        inputs={"server": ENV_ECHO, "env": f"BUILD=3\nSERVICE_TOKEN={SECRET}", "github-token": "app-token"},
        api_url=fake.url,
    )
    assert clean.returncode == EXIT_OK, clean.stdout + clean.stderr
    assert (clean.outputs["failed"], clean.outputs["missing"], clean.outputs["grade"]) == ("0", "0", "A")


REFUSED = [
    ("pull_request", pull_request(7), "pull request's code"),
    ("pull_request_target", fork_pull_request(8), "pull request's code"),
    ("pull_request_review", pull_request_review(7, head_repo="stranger/demo"), "pull request's code"),
    ("pull_request_review_comment", pull_request_review_comment(7), "pull request's code"),
    # Triggered by a fork's pull request: workflow_run.head_sha is the fork's head commit.
    ("workflow_run", workflow_run(99, "b" * 40, fork=True, pr_numbers=(8,)), "workflow_run.head_sha"),
    ("workflow_run", workflow_run(98, "c" * 40, fork=False), "workflow_run.head_sha"),
    ("issue_comment", issue_comment(7), "anyone who may comment"),
    ("release", {"action": "published", "repository": {"full_name": REPO}}, "'release' is not an event"),
    ("push", {**push(), "after": "0" * 40, "deleted": True}, "not one of the repository's own"),
]


@pytest.mark.parametrize(("name", "payload", "why"), REFUSED, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(REFUSED)])
@pytest.mark.parametrize("mode", ["refresh", "calibrate"])
def test_writing_is_refused_off_the_allowlist_of_events(
    fake: FakeGitHub, origin: Origin, mode: str, name: str, payload: dict[str, object], why: str
) -> None:
    run = run_action(
        origin.workspace,
        event_name=name,
        event=payload,
        inputs={"mode": mode, "server": ENV_ECHO, "env": "BUILD=2", "github-token": "app-token"},
        api_url=fake.url,
        extra_env={"GITHUB_SHA": origin.sha},
    )
    assert run.returncode == EXIT_USAGE, run.stdout + run.stderr
    (error,) = run.annotations("error")
    assert f"input mode: {mode} is refused on {name}: " in error.data and why in error.data, error.data
    assert "run it on workflow_dispatch, schedule or push" in error.data
    # Nothing written: no API call at all, no branch, the checkout as it was.
    assert fake.log == [] and origin.branches() == ["main"]
    assert git(origin.workspace, "status", "--porcelain") == ""


@pytest.mark.parametrize("name", ["push", "schedule"])
def test_refresh_runs_on_push_and_schedule_on_the_repositorys_commit(
    fake: FakeGitHub, origin: Origin, name: str
) -> None:
    git(origin.workspace, "checkout", "-q", "--", ".")
    run = run_action(
        origin.workspace,
        event_name=name,
        event=push(origin.sha) if name == "push" else schedule(),
        inputs={
            "mode": "refresh",
            "server": ENV_ECHO,
            "env": f"BUILD=2\nSERVICE_TOKEN={SECRET}",
            "github-token": "app-token",
        },
        api_url=fake.url,
        extra_env={"GITHUB_SHA": origin.sha},
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    commit = run.outputs["refresh-commit"]
    assert git(origin.bare, "log", "-1", "--format=%P", commit) == origin.sha  # on the repository's own commit
    (pull,) = fake.open_pulls(REPO)
    assert (pull["head"]["ref"], pull["base"]["ref"]) == (BRANCH, "main")


@pytest.mark.parametrize(
    ("permissions", "create_pulls", "named"),
    [
        (frozenset({"pull-requests", "issues"}), True, "contents: write"),
        (frozenset({"contents", "issues"}), True, "pull-requests: write"),
        (frozenset({"contents", "pull-requests"}), False, "Allow GitHub Actions to create and approve pull requests"),
    ],
)
def test_a_403_names_the_missing_permission(
    fake: FakeGitHub, origin: Origin, permissions: frozenset[str], create_pulls: bool, named: str
) -> None:
    fake.add_token("limited", permissions=permissions, create_pulls=create_pulls)
    run = refresh(origin, fake, build="2", token="limited")
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    (error,) = run.annotations("error")
    assert named in error.data and "403" in error.data
    assert fake.open_pulls(REPO) == []


def test_the_refresh_branch_may_not_be_the_base_branch(fake: FakeGitHub, origin: Origin) -> None:
    run = refresh(origin, fake, build="2", **{"refresh-branch": "main"})
    assert run.returncode == EXIT_USAGE, run.stdout + run.stderr
    (error,) = run.annotations("error")
    assert "refresh-branch: 'main' is the base branch" in error.data
    assert origin.head("main") == origin.sha and fake.requests("PATCH") == []


def test_a_commit_author_and_title_from_inputs(fake: FakeGitHub, origin: Origin) -> None:
    run = refresh(
        origin,
        fake,
        build="2",
        **{"commit-author": "Ada <ada@example.com>", "commit-message": "chore: refresh", "pr-title": "Refresh!"},
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert git(origin.bare, "log", "-1", "--format=%an <%ae>|%s", BRANCH) == "Ada <ada@example.com>|chore: refresh"
    assert fake.open_pulls(REPO)[0]["title"] == "Refresh!"


def test_a_hostile_change_is_inert_in_the_pr_body_and_the_summary(tmp_path: Path, fake: FakeGitHub) -> None:
    recorded = tmp_path / "hostile.jsonl"
    record_hostile_twin(recorded)
    origin = make_origin(tmp_path / "repo", {"cassettes/hostile.jsonl": recorded.read_bytes()})
    fake.add_git_repo(REPO, origin.bare)
    run = dispatch(origin, fake, {"server": HOSTILE})
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert run.outputs["changed-cassettes"] == "cassettes/hostile.jsonl"
    (pull,) = fake.open_pulls(REPO)
    for text in (pull["body"], run.summary):
        check_markdown(text)
    assert {c.name for c in run.commands} <= {"error", "warning", "notice", "group", "endgroup", "debug"}


def test_cassettes_from_scenarios_yml_are_re_recorded_from_their_scenarios(tmp_path: Path, fake: FakeGitHub) -> None:
    root = Path(__file__).resolve().parents[1] / "cassettes" / "calc"
    text = (root / "scenarios.yml").read_text()
    scenarios = text.replace(
        "target: python -m mcp_replay_action.samples.calc_server",
        f"target: {PY} -m mcp_replay_action.samples.calc_server ${{CALC_FLAG:-}}",
    )
    assert scenarios != text
    files = {
        "cassettes/calc/scenarios.yml": scenarios.encode(),
        "cassettes/calc/handshake.jsonl": (root / "handshake.jsonl").read_bytes(),
        "cassettes/calc/stateless.jsonl": (root / "stateless.jsonl").read_bytes(),
    }
    origin = make_origin(tmp_path, files)
    fake.add_git_repo(REPO, origin.bare)

    def run(flag: str):  # type: ignore[no-untyped-def]
        # The server input is not used: every cassette comes from a scenario.
        inputs = {"server": ENV_ECHO, "scenarios": "cassettes/calc/scenarios.yml", "env": f"CALC_FLAG={flag}"}
        return dispatch(origin, fake, inputs)

    same = run("--same")
    assert same.returncode == EXIT_OK, same.stdout + same.stderr
    assert same.outputs["changed"] == "false", same.summary
    assert "Re-recording 2 cassette(s)" in same.stdout and writes(fake) == []

    changed = run("--regressed")
    assert changed.returncode == EXIT_OK, changed.stdout + changed.stderr
    paths = ["cassettes/calc/handshake.jsonl", "cassettes/calc/stateless.jsonl"]
    assert changed.outputs["changed-cassettes"].splitlines() == paths
    assert origin.files_changed(origin.sha, origin.head(BRANCH)) == paths
    body = fake.open_pulls(REPO)[0]["body"]
    assert "tools/call add" in body and "value-change" in body
    committed = json.loads(origin.show(BRANCH, paths[0]).splitlines()[0])
    assert committed["meta"]["scenario"] == "handshake"


@pytest.mark.parametrize("name", [pytest.param("everything", marks=needs_node), "time"])
def test_refresh_against_an_unchanged_real_server_proposes_nothing(tmp_path: Path, fake: FakeGitHub, name: str) -> None:
    # Servers we did not write, recorded by the official SDK through the proxy: times, ids and
    # other noise in their answers must not read as a change worth a pull request.
    recorded = tmp_path / f"{name}.jsonl"
    if name == "everything":
        server = command(EVERYTHING, "stdio")
        record_through_proxy(
            server, recorded, everything_session, elicitation=accept_elicitation, roots=roots_for(tmp_path)
        )
    else:
        server = command(TIME, "--local-timezone", "UTC")
        record_through_proxy(server, recorded, time_session)
    origin = make_origin(tmp_path / "repo", {f"cassettes/{name}.jsonl": recorded.read_bytes()})
    fake.add_git_repo(REPO, origin.bare)
    run = dispatch(origin, fake, {"server": server})
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert run.outputs["changed"] == "false", run.summary
    assert writes(fake) == [] and origin.branches() == ["main"]
    assert git(origin.workspace, "status", "--porcelain", "--untracked-files=no") == ""


def test_two_pull_requests_refreshes_do_not_overwrite_each_other(fake: FakeGitHub, origin: Origin) -> None:
    # Two pull requests' head branches, each refreshed from its own branch ("Use workflow from").
    for name in ("feature-a", "feature-b"):
        git(origin.bare, "branch", name, "main")
    a = refresh(origin, fake, build="2", branch="feature-a")
    b = refresh(origin, fake, build="3", branch="feature-b")
    for run in (a, b):
        assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert a.outputs["refresh-branch"] == "mcp-replay/refresh/feature-a"
    assert b.outputs["refresh-branch"] == "mcp-replay/refresh/feature-b"
    assert origin.head("mcp-replay/refresh/feature-a") == a.outputs["refresh-commit"]
    assert origin.head("mcp-replay/refresh/feature-b") == b.outputs["refresh-commit"]
    assert "build 2" in origin.show("mcp-replay/refresh/feature-a", "cassettes/echo.jsonl")
    assert "build 3" in origin.show("mcp-replay/refresh/feature-b", "cassettes/echo.jsonl")
    pulls = {p["base"]["ref"]: p["head"]["ref"] for p in fake.open_pulls(REPO)}
    assert pulls == {"feature-a": "mcp-replay/refresh/feature-a", "feature-b": "mcp-replay/refresh/feature-b"}
    # Refreshing one again moves its branch and pull request only.
    again = refresh(origin, fake, build="4", branch="feature-a")
    assert again.returncode == EXIT_OK, again.stdout + again.stderr
    assert "build 4" in origin.show("mcp-replay/refresh/feature-a", "cassettes/echo.jsonl")
    assert origin.head("mcp-replay/refresh/feature-b") == b.outputs["refresh-commit"]
    assert len(fake.open_pulls(REPO)) == 2


@pytest.mark.parametrize(("setting", "branch"), [("bot/cassettes", "bot/cassettes"), ("bot/", "bot/main")])
def test_refresh_branch_is_a_name_or_a_prefix(fake: FakeGitHub, origin: Origin, setting: str, branch: str) -> None:
    run = refresh(origin, fake, build="2", **{"refresh-branch": setting})
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert run.outputs["refresh-branch"] == branch and origin.has_branch(branch)
    assert fake.open_pulls(REPO)[0]["head"]["ref"] == branch


def test_an_earlier_single_refresh_branch_in_the_way_is_named(fake: FakeGitHub, origin: Origin) -> None:
    git(origin.bare, "branch", "mcp-replay/refresh", "main")  # what an earlier version left
    run = refresh(origin, fake, build="2")
    assert run.returncode == EXIT_USAGE, run.stdout + run.stderr
    (error,) = run.annotations("error")
    assert "the branch 'mcp-replay/refresh' exists" in error.data and "refresh-branch: mcp-replay/refresh" in error.data
    kept = refresh(origin, fake, build="2", **{"refresh-branch": "mcp-replay/refresh"})
    assert kept.returncode == EXIT_OK, kept.stdout + kept.stderr
    assert kept.outputs["refresh-branch"] == "mcp-replay/refresh"


def state_comment(passed: bool, sha: str) -> str:
    return f"<!-- mcp-replay:default -->\n{state_line(passed, sha)}\n### MCP replay ..."


def test_nothing_changed_here_names_the_open_pull_requests_into_it_that_fail(fake: FakeGitHub, origin: Origin) -> None:
    heads = {n: f"{n:x}" * 40 for n in range(7, 13)}
    for number, ref, base in [
        (7, "feature-a", "main"),  # fails, by our comment on its head commit: named
        (8, "feature-b", "main"),  # passes
        (9, "feature-c", "main"),  # failed at an older commit
        (10, "feature-d", "release"),  # fails, but into another branch
        (11, "feature-e", "main"),  # "fails" by someone else's comment quoting our line
        (12, "feature-f", "main"),  # fails, named too
    ]:
        fake.add_pull(REPO, number, head_sha=heads[number][:40], head_ref=ref, base_ref=base)
    fake.add_comment(REPO, 7, state_comment(False, heads[7][:40]), BOT)
    fake.add_comment(REPO, 8, state_comment(True, heads[8][:40]), BOT)
    fake.add_comment(REPO, 9, state_comment(False, "0" * 40), BOT)
    fake.add_comment(REPO, 10, state_comment(False, heads[10][:40]), BOT)
    fake.add_comment(REPO, 11, state_comment(False, heads[11][:40]), "someone")
    fake.add_comment(REPO, 12, "review chatter", "someone")
    fake.add_comment(REPO, 12, state_comment(False, heads[12][:40]), BOT)

    run = refresh(origin, fake, build="1")
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert run.outputs["changed"] == "false" and writes(fake) == []
    assert "No cassette changed on main: nothing to propose." in run.summary
    assert "2 open pull requests into main fail the replay" in run.summary
    named = [line for line in run.summary.splitlines() if line.startswith("- #")]
    assert named == ["- #7: feature-a", "- #12: feature-f"]
    assert "Use workflow from" in run.summary
    [warning] = [w for w in run.annotations("warning") if w.properties.get("title") == "mcp-replay refresh"]
    assert "#7 (feature-a), #12 (feature-f)" in warning.data

    # None failing: only "nothing changed".
    fake.comments.clear()
    quiet = refresh(origin, fake, build="1")
    assert "No cassette changed on main" in quiet.summary and "fail the replay" not in quiet.summary
