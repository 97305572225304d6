"""The action's entrypoint end to end: ``python -m mcp_replay_action.github`` as a subprocess with
the runner's environment, real sample servers, real cassettes recorded through the proxy, and the
stateful fake GitHub API on 127.0.0.1."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
import yaml

from fakegithub import BOT, FakeGitHub
from github_action_run import (
    CALC,
    CALC_REGRESSED,
    HOSTILE,
    PY,
    ActionRun,
    make_workspace,
    run_action,
)
from github_events import fork_pull_request, pull_request, push, workflow_dispatch, workflow_run
from http_helpers import free_port
from mcp_replay_action.cassette import load
from mcp_replay_action.errors import EXIT_GATE, EXIT_INFRA, EXIT_OK, EXIT_USAGE
from mcp_replay_action.github import comment as sticky
from runner_parse import parse_commands

pytestmark = pytest.mark.integration

REPO = "octo/demo"
SHA = "abc1234" + "0" * 33
MENTION = re.compile(r"@(?=[0-9A-Za-z_-])")


def inputs(server: str, **more: str) -> dict[str, str]:
    return {"server": server, "github-token": "app-token", **{k.replace("_", "-"): v for k, v in more.items()}}


def comments(fake: FakeGitHub, pr: int = 7) -> list[dict]:  # type: ignore[type-arg]
    return fake.comments.get((REPO, pr), [])


def test_pull_request_three_runs_leave_exactly_one_comment(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    event = pull_request(7, SHA)
    for i in range(120):  # the comment list spans two pages
        fake.add_comment(REPO, 7, f"review chatter {i}", "someone")

    first = run_action(ws, event_name="pull_request", event=event, inputs=inputs(CALC), api_url=fake.url)
    assert first.returncode == EXIT_OK, first.stdout + first.stderr
    assert first.outputs["grade"] == "A"
    assert first.outputs["failed"] == "0" and first.outputs["missing"] == "0"
    assert first.outputs["comment-url"].endswith(f"#issuecomment-{comments(fake)[-1]['id']}")

    second = run_action(ws, event_name="pull_request", event=event, inputs=inputs(CALC_REGRESSED), api_url=fake.url)
    assert second.returncode == EXIT_GATE
    third = run_action(ws, event_name="pull_request", event=event, inputs=inputs(CALC_REGRESSED), api_url=fake.url)
    assert third.returncode == EXIT_GATE

    ours = [c for c in comments(fake) if sticky.marker("default") in c["body"]]
    assert len(ours) == 1 and ours[0]["user"]["login"] == BOT
    assert len(comments(fake)) == 121
    assert len(fake.requests("POST")) == 1
    assert len(fake.requests("PATCH")) == 1  # the third run changed nothing, so no edit
    assert "grade **B**" in ours[0]["body"] and "❌" in ours[0]["body"]
    assert "a breaking change caps the grade at B" in ours[0]["body"]
    assert "https://github.com/octo/demo/actions/runs/4242" in ours[0]["body"]
    assert "PR comment unchanged" in third.stdout


def test_regression_annotations_summary_outputs_and_gate(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = run_action(
        ws,
        event_name="pull_request",
        event=pull_request(7, SHA),
        inputs=inputs(CALC_REGRESSED, min_grade="A"),
        api_url=fake.url,
    )
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr

    # Annotations name the cassette relative to the workspace and the failing interaction's line.
    cassette = load(ws / "cassettes/calc.jsonl")
    lines = {i.label: i.line for i in cassette.interactions}
    findings = [c for c in run.annotations() if c.properties.get("file")]
    assert findings, run.stdout
    assert {c.properties["file"] for c in findings} == {"cassettes/calc.jsonl"}
    by_title = {c.properties["title"]: int(c.properties["line"]) for c in findings}
    assert by_title["breaking value-change: tools/call add"] == lines["tools/call add"]
    assert by_title["additive structure-change: tools/call echo"] == lines["tools/call echo"]
    gate = [c for c in run.annotations("error") if c.properties.get("title") == "mcp-replay gate"]
    assert len(gate) == 1 and "breaking change(s)" in gate[0].data
    assert "grade B is below the minimum A" in gate[0].data  # one breaking change in nine: capped at B

    # The job summary: grade, score, a table per cassette, failures in <details>.
    assert run.summary.startswith("## ❌ MCP replay failed (fail-on: breaking, min-grade: A): grade B (93.9/100)")
    assert "A breaking change caps the grade at B" in run.summary
    assert "### cassettes/calc.jsonl" in run.summary
    assert "| # | interaction | status | kind | detail |" in run.summary
    assert "<details><summary>#3 tools/call add: breaking value-change" in run.summary

    # Outputs, and the JSON report they point at.
    out = run.outputs
    assert out["report"] == "mcp-replay-report.json"
    # The comment was posted: no comment file, and the outputs say so (the example's upload step
    # keys on comment-written).
    assert out["comment-file"] == "" and out["comment-written"] == "false"
    assert not (ws / "mcp-replay-comment.json").exists()
    report = json.loads((ws / out["report"]).read_text())
    assert report["schema"] == "mcp-replay/report@1"
    assert out["grade"] == report["grade"] == "B" and report["breaking_capped"] is True
    assert (out["passed"], out["failed"], out["missing"]) == tuple(
        str(report[k]) for k in ("passed", "failed", "missing")
    )
    assert int(out["failed"]) >= 2 and out["missing"] == "0"
    assert float(out["score"]) == pytest.approx(report["score"], abs=0.05)
    assert report["gate"]["passed"] is False
    assert report["cassettes"][0]["path"] == "cassettes/calc.jsonl"


def test_fork_pull_request_saves_the_comment_instead_of_crashing(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = run_action(
        ws,
        event_name="pull_request",
        event=fork_pull_request(8, SHA),
        inputs=inputs(CALC, github_token="fork-token"),
        api_url=fake.url,
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    warnings = run.annotations("warning")
    assert len(warnings) == 1
    assert "fork" in warnings[0].data and "mode: post-comment" in warnings[0].data
    assert "#pull-requests-from-forks" in warnings[0].data
    assert [r.status for r in fake.requests("POST")] == [403]
    assert run.outputs["comment-url"] == "" and run.outputs["comment-written"] == "true"
    saved = sticky.load_comment_file(ws / run.outputs["comment-file"])
    assert (saved.pr_number, saved.head_sha, saved.repository, saved.run_id) == (8, SHA, REPO, "4242")
    assert saved.report["schema"] == "mcp-replay/report@1" and saved.report["grade"] == "A"  # data, not a body


def saved_by_a_fork(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> Path:
    """A fork's pull request run (read-only token: the comment file is saved), and the run and
    pull request the later workflow_run job will verify it against. Returns the workspace."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    fork_run = run_action(
        ws,
        event_name="pull_request",
        event=fork_pull_request(8, SHA),
        inputs=inputs(CALC, github_token="fork-token"),
        api_url=fake.url,
    )
    assert fork_run.returncode == EXIT_OK
    fake.add_run(REPO, 555, head_sha=SHA, head_branch="patch-1", head_repo="stranger/demo")
    fake.add_pull(REPO, 8, head_sha=SHA, head_ref="patch-1", head_repo="stranger/demo")
    return ws


def post_saved(ws: Path, fake: FakeGitHub) -> ActionRun:
    """The workflow_run job: the same workspace holds the downloaded artifact; no PR code runs."""
    return run_action(
        ws,
        event_name="workflow_run",
        event=workflow_run(555, SHA, fork=True),
        inputs={"mode": "post-comment", "github-token": "app-token"},
        api_url=fake.url,
    )


def test_post_comment_mode_posts_the_fork_comment_after_verification(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = saved_by_a_fork(tmp_path, fake, calc_cassette)
    post = post_saved(ws, fake)
    assert post.returncode == EXIT_OK, post.stdout + post.stderr
    [posted] = comments(fake, 8)
    assert posted["user"]["login"] == BOT and posted["body"].startswith(sticky.marker("default"))
    assert post.outputs["comment-url"] == posted["html_url"]
    assert fake.requests("GET", r"/actions/runs/555$") and fake.requests("GET", r"/pulls/8$")

    # A newer push moved the PR on: the stale comment is not posted, and that is no failure.
    fake.add_pull(REPO, 8, head_sha="9" * 40, head_ref="patch-1", head_repo="stranger/demo")
    (ws / "mcp-replay-comment.json").write_text(
        (ws / "mcp-replay-comment.json").read_text().replace('"grade": "A"', '"grade": "F"')
    )
    stale = post_saved(ws, fake)
    assert stale.returncode == EXIT_OK
    assert "Not posting the saved comment" in stale.annotations("warning")[0].data
    assert "grade **A**" in comments(fake, 8)[0]["body"]


@pytest.mark.parametrize(("name", "event"), [("push", push(SHA)), ("workflow_dispatch", workflow_dispatch())])
@pytest.mark.parametrize("mode", ["auto", "on-failure"])
def test_push_and_dispatch_never_comment_unless_always(
    tmp_path: Path,
    fake: FakeGitHub,
    calc_cassette: Path,
    name: str,
    event: dict,  # type: ignore[type-arg]
    mode: str,
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    fake.add_pull(REPO, 7, head_sha=SHA, head_ref="feature")
    run = run_action(ws, event_name=name, event=event, inputs=inputs(CALC_REGRESSED, comment=mode), api_url=fake.url)
    assert run.returncode == EXIT_GATE
    assert fake.log == []
    assert run.outputs["comment-url"] == "" and run.outputs["comment-file"] == ""
    assert run.outputs["comment-written"] == "false"
    assert run.outputs["grade"] == "B"  # one breaking change in nine answers: capped at B


def test_always_comments_from_a_push_on_the_open_pull_request_of_the_commit(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    fake.add_pull(REPO, 5, head_sha="e" * 40, head_ref="other")
    # No open pull request has this commit: one lookup, no comment, and no failure.
    alone = run_action(ws, event_name="push", event=push(SHA), inputs=inputs(CALC, comment="always"), api_url=fake.url)
    assert alone.returncode == EXIT_OK, alone.stdout + alone.stderr
    assert [r.method for r in fake.log] == ["GET"] and comments(fake, 5) == []
    assert alone.outputs["comment-url"] == ""
    # Once one has: the comment goes there, and later pushes edit the same one.
    fake.add_pull(REPO, 7, head_sha=SHA, head_ref="feature")
    first = run_action(ws, event_name="push", event=push(SHA), inputs=inputs(CALC, comment="always"), api_url=fake.url)
    assert first.returncode == EXIT_OK, first.stdout + first.stderr
    assert len(comments(fake, 7)) == 1, first.stdout + first.stderr
    [posted] = comments(fake, 7)
    assert first.outputs["comment-url"] == posted["html_url"] and first.outputs["comment-written"] == "false"
    again = run_action(
        ws, event_name="push", event=push(SHA), inputs=inputs(CALC_REGRESSED, comment="always"), api_url=fake.url
    )
    assert again.returncode == EXIT_GATE
    assert len(comments(fake, 7)) == 1 and "❌" in comments(fake, 7)[0]["body"]
    assert comments(fake, 5) == []


def test_docs_link_names_the_repository_the_action_was_used_from(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    no_token = {"server": CALC, "github-token": ""}
    event = fork_pull_request(8, SHA)  # the link comes with the fork recipe (tests/test_github_unwritten.py)
    by_path = run_action(
        ws, event_name="pull_request", event=event, inputs=no_token, api_url=fake.url,
        extra_env={"GITHUB_ACTION_PATH": "/home/runner/work/_actions/acme/mcp-replay-fork/v1"},
    )  # fmt: skip
    assert "https://github.com/acme/mcp-replay-fork#pull-requests-from-forks" in by_path.stdout, by_path.stdout
    assert by_path.outputs["comment-written"] == "true"
    # Neither variable: the project URL from the package's metadata (pyproject's [project.urls]).
    plain = run_action(ws, event_name="pull_request", event=event, inputs=no_token, api_url=fake.url)
    assert "https://github.com/mcp-replay/mcp-replay-action#pull-requests-from-forks" in plain.stdout


def test_comment_modes(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    event = pull_request(7, SHA)
    off = run_action(
        ws, event_name="pull_request", event=event, inputs=inputs(CALC_REGRESSED, comment="off"), api_url=fake.url
    )
    assert off.returncode == EXIT_GATE and fake.log == []
    # on-failure: a passing run creates nothing...
    ok = run_action(
        ws, event_name="pull_request", event=event, inputs=inputs(CALC, comment="on-failure"), api_url=fake.url
    )
    assert ok.returncode == EXIT_OK and comments(fake) == []
    # ...a failing one comments, and the next passing run updates that comment to say so.
    run_action(
        ws,
        event_name="pull_request",
        event=event,
        inputs=inputs(CALC_REGRESSED, comment="on-failure"),
        api_url=fake.url,
    )
    assert len(comments(fake)) == 1 and "❌" in comments(fake)[0]["body"]
    run_action(ws, event_name="pull_request", event=event, inputs=inputs(CALC, comment="on-failure"), api_url=fake.url)
    assert len(comments(fake)) == 1 and "✅" in comments(fake)[0]["body"]


def test_rate_limits_and_oversized_body_still_end_in_one_comment(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    fake.fail_next("secondary", method="GET", path_re=r"/comments$", retry_after=1)
    fake.fail_next("secondary-no-retry-after", method="POST", retry_after=1)
    fake.fail_next("502", method="POST")
    fake.max_body = 1300  # GitHub refuses the full body (about 2,000 characters): the compact one goes instead
    run = run_action(
        ws,
        event_name="pull_request",
        event=pull_request(7, SHA),
        inputs=inputs(CALC_REGRESSED),
        api_url=fake.url,
        extra_env={"RUNNER_DEBUG": "1"},
    )
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    [ours] = comments(fake)
    assert len(ours["body"]) <= 1300 and "grade **B**" in ours["body"]
    assert "mcp-replay replay --server " in ours["body"]  # the compact one still says what to do
    # Posted (compact): so nothing is left in the workspace for a post-comment job.
    assert not (ws / "mcp-replay-comment.json").exists() and run.outputs["comment-written"] == "false"
    statuses = [r.status for r in fake.requests("POST")]
    assert statuses == [403, 502, 422, 201]
    debug = [c.data for c in run.commands if c.name == "debug"]
    assert any("retry 1 in" in d for d in debug)
    assert all("app-token" not in line for line in (run.stdout + run.stderr).splitlines())


def test_hostile_server_cannot_inject_break_tables_or_mention(
    tmp_path: Path, fake: FakeGitHub, hostile_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/hostile.jsonl": hostile_cassette})
    run = run_action(
        ws, event_name="pull_request", event=pull_request(7, SHA), inputs=inputs(HOSTILE), api_url=fake.url
    )
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    # Every command the runner would see is one of ours, and none sets an output or an env var.
    names = {c.name for c in run.commands}
    assert names <= {"error", "warning", "notice", "group", "endgroup", "debug"}, names
    for cmd in run.annotations():
        if cmd.properties.get("file"):
            assert cmd.properties["file"] == "cassettes/hostile.jsonl"
            assert cmd.properties["line"].isdigit()
    assert any("injected error" in c.data for c in run.annotations()), "the hostile text is shown, inert"
    # Every output action.yml declares for a replay is set, and nothing else.
    declared = yaml.safe_load((Path(__file__).parent.parent / "action.yml").read_text())["outputs"]
    refresh_only = {"changed", "changed-cassettes", "refresh-branch", "refresh-commit", "refresh-pr-url"}
    assert set(run.outputs) == set(declared) - refresh_only
    assert run.outputs["grade"] != "A" or run.outputs["failed"] != "0"
    for text in (run.summary, comments(fake)[0]["body"]):
        check_markdown(text)
    assert "&#124;" in comments(fake)[0]["body"]  # the pipe is shown, escaped


def check_markdown(text: str) -> None:
    """No workflow command, no mention or foreign HTML outside code, every table row intact."""
    assert parse_commands(text) == []
    prose: list[str] = []
    fence = ""
    for line in text.splitlines():
        if fence:
            fence = "" if line.startswith(fence) and set(line) == {"`"} else fence
            continue
        m = re.match(r"`{3,}", line)
        if m:
            fence = m.group(0)
            continue
        prose.append(line)
    assert not fence
    body = "\n".join(prose)
    assert not MENTION.search(body), body[max(0, MENTION.search(body).start() - 80) :][:160]  # type: ignore[union-attr]
    assert set(re.findall(r"</?([A-Za-z][A-Za-z0-9-]*)", body)) <= {"details", "summary", "sub"}
    table: list[str] = []
    for line in prose + [""]:
        if line.startswith("|"):
            table.append(line)
            continue
        if table:
            assert len({row.count("|") for row in table}) == 1, table
            table = []


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"min-grade": "Z"}, "input min-grade: 'Z' is not valid; expected one of A, B, C, D, F"),
        ({"comment": "maybe"}, "input comment"),
        ({"cassettes": "nothing/**/*.jsonl"}, "input cassettes: no file matches"),
        ({"working-directory": "../.."}, "input working-directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, calc_cassette: Path, extra: dict[str, str], needle: str
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = run_action(ws, event_name="push", event=push(SHA), inputs={"server": CALC, **extra})
    assert run.returncode == EXIT_USAGE
    [error] = run.annotations("error")
    assert needle in error.data and "\n" not in error.data
    assert run.outputs == {}


def test_bad_cassette_names_file_and_line(tmp_path: Path, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    (ws / "cassettes/broken.jsonl").write_text('{"schema":"mcp-replay/cassette@1","meta":{}}\n{oops\n')
    run = run_action(ws, event_name="push", event=push(SHA), inputs={"server": CALC})
    assert run.returncode == EXIT_USAGE
    assert "cassettes/broken.jsonl:2" in run.annotations("error")[0].data


def test_server_that_cannot_start_is_exit_3(tmp_path: Path, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = run_action(ws, event_name="push", event=push(SHA), inputs={"server": "no-such-server-binary --stdio"})
    assert run.returncode == EXIT_INFRA
    [error] = run.annotations("error")
    assert "no-such-server-binary" in error.data
    assert run.summary.startswith("## ⛔ MCP replay could not run")  # the summary says why, too


def test_install_runs_in_the_working_directory_without_the_token(tmp_path: Path, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    (ws / "server").mkdir()
    script = (
        "pwd > installed.txt; env | grep -c -E '^(INPUT_|GITHUB_TOKEN|GITHUB_OUTPUT)' >> installed.txt || true; "
        "echo \"$MY_FLAG\" >> installed.txt; echo '::error::from install'; echo '##[error]legacy'"
    )
    run = run_action(
        ws,
        event_name="push",
        event=push(SHA),
        inputs={
            "server": CALC,
            "install": script,
            "working-directory": "server",
            "env": "MY_FLAG=on",
            "github-token": "secret-token",
        },
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    lines = (ws / "server/installed.txt").read_text().splitlines()
    assert lines == [str(ws / "server"), "0", "on"]
    assert "from install" in run.stdout  # shown in the log...
    assert not [c for c in run.commands if c.name == "error"]  # ...but not obeyed

    failing = run_action(ws, event_name="push", event=push(SHA), inputs={"server": CALC, "install": "exit 7"})
    assert failing.returncode == EXIT_INFRA
    assert "status 7" in failing.annotations("error")[0].data


def test_underscore_inputs_and_python_dash_m_entrypoint(tmp_path: Path, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = run_action(
        ws,
        event_name="workflow_dispatch",
        event=workflow_dispatch(),
        inputs={"server": f"{PY} -m mcp_replay_action.samples.calc_server", "MIN_GRADE": "B", "JOB_SUMMARY": "false"},
    )
    assert run.returncode == EXIT_OK
    assert run.summary == ""


def test_http_server_started_by_the_action(tmp_path: Path, calc_cassette: Path) -> None:
    """``server`` + ``url``: the action starts an HTTP server (here the cassette's own mock) for
    each cassette and replays over Streamable HTTP."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette, "mock/calc.jsonl": calc_cassette})
    port = free_port()
    run = run_action(
        ws,
        event_name="push",
        event=push(SHA),
        inputs={
            "server": f"{PY} -m mcp_replay_action serve --cassette mock/calc.jsonl --listen 127.0.0.1:{port}",
            "url": f"http://127.0.0.1:{port}/mcp",
            "headers": "X-Test: 1",
        },
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert (run.outputs["failed"], run.outputs["missing"]) == ("0", "0")
    assert int(run.outputs["passed"]) >= 5


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_no_ancestor_of_the_server_or_install_holds_the_token(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    """Issue 8 item 2: the entrypoint re-executes itself with a clean environment, so reading
    ``/proc/<ancestor>/environ`` from the server or the install command finds neither the token
    nor an ``env`` input value, while the server still gets that value in its own environment."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    seen = tmp_path / "seen.jsonl"
    snoop = f"{PY} {Path(__file__).parent / 'fakes' / 'snoop_server.py'} {seen}"
    token, env_secret = "ghs_" + "T0kenValue9" * 4, "db-pass-" + "Zq81" * 6
    fake.add_token(token, BOT)
    run = run_action(
        ws,
        event_name="pull_request",
        event=pull_request(7, SHA),
        inputs={"server": f"{snoop} --serve", "install": snoop, "env": f"DB_PASS={env_secret}", "github-token": token},
        api_url=fake.url,
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert comments(fake), "the token still worked for the comment"
    processes = [json.loads(line) for line in seen.read_text().splitlines()]
    entrypoints = [p for p in processes if "mcp_replay_action.github" in p["cmdline"]]
    assert len(entrypoints) >= 2  # seen from the install command and from the server
    if os.geteuid() == 0:
        # root reads every process's environ: the check can see, and finds no token below
        assert all(not p["environ"].startswith("<unreadable") for p in entrypoints)
    else:
        # the same user cannot: the token holder made itself non-dumpable (privilege.no_dumps)
        assert all(p["environ"].startswith("<unreadable") for p in entrypoints), entrypoints
    for process in processes:
        for text in (process["environ"], process["cmdline"]):
            assert token not in text and env_secret not in text, process["cmdline"]
            assert "INPUT_" not in text


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown needs root (as in the container)")
def test_files_the_action_writes_belong_to_the_workspace_owner(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    """Issue 8 item 9: inside the container the action runs as root; the report and the fork's
    comment file (and a directory made for it) go to the workspace owner, with umask modes."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    uid, gid = 4321, 8765
    os.chown(ws, uid, gid)
    run = run_action(
        ws,
        event_name="pull_request",
        event=fork_pull_request(8, SHA),
        inputs=inputs(CALC, github_token="fork-token", comment_file="out/comment.json"),
        api_url=fake.url,
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    for rel in ("mcp-replay-report.json", "out/comment.json", "out"):
        info = (ws / rel).stat()
        assert (info.st_uid, info.st_gid) == (uid, gid), rel
    assert stat.S_IMODE((ws / "out/comment.json").stat().st_mode) == 0o644


def test_a_redirect_from_the_api_is_a_typed_error_not_a_crash(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    """Issue 8 item 7: a 301 (a renamed repository) is neither followed (the token would go where
    Location points) nor decoded as data (a TypeError before): the comment is a warning, the
    replay result stands."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    fake.fail_next("moved", method="GET", path_re="comments")
    run = run_action(ws, event_name="pull_request", event=pull_request(7, SHA), inputs=inputs(CALC), api_url=fake.url)
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    [warning] = run.annotations("warning")
    assert "redirects to https://api.github.com" in warning.data and "renamed or moved" in warning.data
    assert "internal error" not in run.stdout
    assert comments(fake) == []


def test_post_comment_renders_from_the_report_never_from_text_the_fork_wrote(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    """Issue 8 item 7: the fork's run uploads data (the JSON report), and the trusted job renders
    the comment with its own template after checking the report against its schema. A body the
    fork's code wrote into the file is never posted; a report that breaks the schema is refused."""
    ws = saved_by_a_fork(tmp_path, fake, calc_cassette)
    path = ws / "mcp-replay-comment.json"
    doc = json.loads(path.read_text())
    # What PR code could write: its own body, and hostile text inside the report's strings.
    doc["body"] = f"{sticky.marker('default')}\nAll good, merge it! @octocat [click](https://evil.example)"
    doc["report"]["cassettes"][0]["path"] = "cassettes/x.jsonl @octocat #1 https://evil.example"
    path.write_text(json.dumps(doc))

    done = post_saved(ws, fake)
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    [posted] = comments(fake, 8)
    assert "merge it" not in posted["body"] and "](https://evil" not in posted["body"]
    assert posted["body"].startswith(sticky.marker("default"))
    assert not MENTION.search(posted["body"]) and "https://evil" not in posted["body"]

    doc["report"]["grade"] = "<b>A+</b>"
    path.write_text(json.dumps(doc))
    refused = post_saved(ws, fake)
    assert refused.returncode == EXIT_USAGE
    assert "not a valid report at grade" in refused.annotations("error")[0].data
    assert len(comments(fake, 8)) == 1
