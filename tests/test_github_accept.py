"""How the failing comment and the job summary say to accept a change: the refresh workflow on the
pull request's head branch (named, since GitHub preselects the default branch), and the local
``--update`` command with this run's server and cassettes, which really works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import CALC, CALC_REGRESSED, ActionRun, make_workspace, record_session, run_action
from github_events import fork_pull_request, pull_request
from mcp_replay_action.errors import EXIT_GATE, EXIT_INFRA, EXIT_OK
from mcp_replay_action.github.accept import Accept, local_command
from mcp_replay_action.github.settings import Settings
from mcp_replay_action.github.template import STATE_RE, what_to_do
from test_github_template import assert_safe_markdown

pytestmark = pytest.mark.integration

REPO = "octo/demo"
SHA = "abc1234" + "0" * 33
WORKFLOW = {"GITHUB_WORKFLOW_REF": f"{REPO}/.github/workflows/mcp-replay.yml@refs/pull/7/merge"}
BIN = str(Path(sys.executable).parent)


def settings(tmp_path: Path, **inputs: str) -> Settings:
    env = {"GITHUB_WORKSPACE": str(tmp_path), **{f"INPUT_{k.upper()}": v for k, v in inputs.items()}}
    return Settings.from_env(env)


def pr_run(ws: Path, fake: FakeGitHub, server: str, *, event: dict | None = None, **env: str) -> ActionRun:  # type: ignore[type-arg]
    """One pull_request run of the action against ``server`` (the app token unless a fork's event)."""
    event = event or pull_request(7, SHA)
    fork = event["pull_request"]["head"]["repo"]["fork"]
    token = "fork-token" if fork else "app-token"
    return run_action(
        ws,
        event_name="pull_request",
        event=event,
        inputs={"server": server, "github-token": token},
        api_url=fake.url,
        extra_env=env,
    )


def sh_block(body: str) -> str:
    """The one ```sh block of a comment or summary."""
    [block] = re.findall(r"^```sh\n(.*?)\n```$", body, flags=re.S | re.M)
    return block


def test_local_command_is_quoted_redacted_and_leaves_env_values_to_the_shell(tmp_path: Path) -> None:
    (tmp_path / "server").mkdir()
    got = settings(
        tmp_path,
        server="node 'dist/my server.js' --api-key sk-live-123456 --port 3000",
        cassettes="cassettes/**/*.jsonl\nmore/*.jsonl",
        env="SERVICE_TOKEN=tok-very-secret-99\nMODE=test",
        **{"working-directory": "server", "ignore-paths": "result.id", "allow-reorder": "true"},
    )
    command = local_command(got)
    assert "sk-live-123456" not in command and "tok-very-secret-99" not in command
    words = _shell_words(command)
    assert words[:3] == ["mcp-replay", "replay", "--server"]
    assert words[3] == "node 'dist/my server.js' --api-key [REDACTED] --port 3000"
    assert words[4:8] == ["--cassette", "cassettes/**/*.jsonl", "--cassette", "more/*.jsonl"]
    assert words[8:10] == ["--cwd", "server"]
    assert words[10:14] == ["--env", "SERVICE_TOKEN=from-the-shell", "--env", "MODE=from-the-shell"]
    assert words[14:] == ["--ignore-path", "result.id", "--allow-reorder", "--update"]


def test_no_server_no_command(tmp_path: Path) -> None:
    # A post-comment job names no server: no half command; the comment shows its shape instead.
    assert local_command(settings(tmp_path, mode="post-comment")) == ""
    assert "--server 'your server command'" in what_to_do(Accept(), failed=True)


def _shell_words(command: str) -> list[str]:
    """The words a POSIX shell makes of ``command`` (printed one a line by printf)."""
    env = {"PATH": os.environ["PATH"], "SERVICE_TOKEN": "from-the-shell", "MODE": "from-the-shell"}
    out = subprocess.run(["sh", "-c", "printf '%s\\n' " + command], env=env, capture_output=True, text=True, timeout=10)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_what_to_do_names_the_branch_and_falls_back_to_the_local_command() -> None:
    command = "mcp-replay replay --server 'python -m srv' --cassette 'c/*.jsonl' --update"
    full = what_to_do(Accept("https://github.com/o/r/actions/workflows/ci.yml", "feat/x", command), failed=True)
    assert "[run the refresh workflow](https://github.com/o/r/actions/workflows/ci.yml)" in full
    assert "**Use workflow from: feat/x** (not the default branch" in full
    assert sh_block(full) == command
    # No GITHUB_WORKFLOW_REF (and no refresh-workflow input): the local command, not silence.
    local = what_to_do(Accept(command=command), failed=True)
    assert "refresh workflow" not in local and sh_block(local) == command
    # A fork's branch cannot be dispatched on here.
    fork = what_to_do(Accept(command=command, branch="", fork=True), failed=True)
    assert "cannot run on a fork's branch" in fork and "Use workflow from" not in fork
    # Nothing to accept on a clean run; changes that did not gate still may be accepted.
    assert what_to_do(Accept(command=command), failed=False) == ""
    assert "To accept the 2 reported changes" in what_to_do(Accept(command=command), failed=False, accepted=2)


def test_a_hostile_branch_name_stays_inert() -> None:
    branch = "x](https://evil.example)<img src=x>@admin #12 ::error::boom"
    text = what_to_do(
        Accept("https://github.com/o/r/actions/workflows/ci.yml", branch, "mcp-replay replay"), failed=True
    )
    assert "](https://evil" not in text and "<img" not in text
    assert_safe_markdown(text)


def test_the_failing_comment_names_the_head_branch_and_its_command_accepts_the_change(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    event = pull_request(7, SHA, ref="feature/calc-v2")
    run = pr_run(ws, fake, CALC_REGRESSED, event=event, **WORKFLOW)
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    [comment] = fake.comments[(REPO, 7)]
    body = comment["body"]
    assert "[run the refresh workflow](https://github.com/octo/demo/actions/workflows/mcp-replay.yml)" in body
    assert "**Use workflow from: feature/calc-v2**" in body
    command = sh_block(body)
    assert command.startswith("mcp-replay replay --server ") and command.endswith(" --update")
    # The job summary says what to do too, under its headline, with the same command.
    assert run.summary.startswith("## ❌ MCP replay failed (fail-on: breaking): grade B")
    assert run.summary.index("**What to do.**") < run.summary.index("### cassettes/calc.jsonl")
    assert sh_block(run.summary) == command
    assert_safe_markdown(body)

    # Run as the comment says, on a developer's machine (the workspace): the cassette is
    # rewritten, and the replay of the same build then passes.
    env = {**os.environ, "PATH": BIN + os.pathsep + os.environ["PATH"]}
    env = {k: v for k, v in env.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    done = subprocess.run(["sh", "-c", command], cwd=ws, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    again = pr_run(ws, fake, CALC_REGRESSED, event=event)
    assert again.returncode == EXIT_OK, again.stdout + again.stderr
    assert "### ✅ MCP replay passed" in fake.comments[(REPO, 7)][0]["body"]


def test_without_a_workflow_ref_the_comment_gives_the_local_command(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = pr_run(ws, fake, CALC_REGRESSED)
    assert run.returncode == EXIT_GATE
    body = fake.comments[(REPO, 7)][0]["body"]
    assert "refresh workflow" not in body and "**What to do.**" in body
    assert sh_block(body).startswith("mcp-replay replay --server ")


def test_a_fork_pull_request_is_told_to_accept_locally(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = pr_run(ws, fake, CALC_REGRESSED, event=fork_pull_request(8, SHA), **WORKFLOW)
    assert run.returncode == EXIT_GATE
    assert "cannot run on a fork's branch" in run.summary and "Use workflow from" not in run.summary


def test_a_passing_run_has_nothing_to_do(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    run = pr_run(ws, fake, CALC, **WORKFLOW)
    assert run.returncode == EXIT_OK
    assert "What to do" not in run.summary and "What to do" not in fake.comments[(REPO, 7)][0]["body"]
    assert run.summary.startswith("## ✅ MCP replay passed: grade A")


def test_a_run_that_could_not_replay_replaces_the_verdict_on_the_pull_request(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    passed = pr_run(ws, fake, CALC, **WORKFLOW)
    assert passed.returncode == EXIT_OK
    assert "### ✅ MCP replay passed" in fake.comments[(REPO, 7)][0]["body"]

    # The next push's server dies at start-up, saying hostile things on stderr.
    dying = ws / "dying.py"
    dying.write_text(
        "import sys\n"
        "sys.stderr.write('fatal: @admin see #12 <img src=x> [x](https://evil.example) ::error::boom\\n')\n"
        "sys.exit(1)\n"
    )
    server = f"{sys.executable} {dying} --api-key sk-live-0a1b2c3d4e5f"
    broken = pr_run(ws, fake, server, **WORKFLOW)
    assert broken.returncode == EXIT_INFRA, broken.stdout + broken.stderr
    [comment] = fake.comments[(REPO, 7)]  # the same comment, edited
    body = comment["body"]
    assert "### ⛔ MCP replay could not complete" in body and "passed" not in body.split("\n")[2]
    assert "no earlier verdict on this pull request stands" in body
    assert "fatal" in body  # why, from the server's stderr
    assert "sk-live-0a1b2c3d4e5f" not in body  # redacted
    assert_safe_markdown(body)
    assert "](https://evil" not in body.split("```")[0]
    assert sh_block(body).startswith("mcp-replay replay --server ") and "--update" not in sh_block(body)
    assert STATE_RE.search(body) and STATE_RE.search(body).group(1) == "error"  # type: ignore[union-attr]
    # A fork's read-only token: one warning, the run's exit code unchanged.
    fork = pr_run(ws, fake, server, event=fork_pull_request(8, SHA))
    assert fork.returncode == EXIT_INFRA and (REPO, 8) not in fake.comments
    assert any("Cannot write the PR comment" in w.data for w in fork.annotations("warning"))


def test_the_summary_and_the_comment_put_the_failing_cassette_first_and_fold_the_passing_one(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    handshake = tmp_path / "a-handshake.jsonl"
    record_session(handshake, CALC, [])  # only initialize: the regressed build still passes it
    # "a-..." sorts before "calc": the order below is the verdict's, not the names'.
    ws = make_workspace(tmp_path, {"cassettes/a-handshake.jsonl": handshake, "cassettes/calc.jsonl": calc_cassette})
    run = pr_run(ws, fake, CALC_REGRESSED, **WORKFLOW)
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    summary = run.summary
    failing = summary.index("### cassettes/calc.jsonl: grade B")
    folded = summary.index("<details><summary>✅ cassettes/a-handshake.jsonl: grade A, all passing</summary>")
    assert summary.index("**What to do.**") < failing < folded
    body = fake.comments[(REPO, 7)][0]["body"]
    assert body.index("| ❌ cassettes/calc.jsonl |") < body.index("<details><summary>✅ 1 passing cassette</summary>")
    assert body.index("<details><summary>✅ 1 passing cassette</summary>") < body.index(
        "| ✅ cassettes/a-handshake.jsonl |"
    )


def test_local_command_repeats_setup_and_reset(tmp_path: Path) -> None:
    got = settings(tmp_path, url="http://127.0.0.1:8000/mcp", setup="cp a b", reset="sh -c 'echo 0 > counter'")
    words = _shell_words(local_command(got))
    assert words[words.index("--setup") + 1] == "cp a b", words
    assert words[words.index("--reset") + 1] == "sh -c 'echo 0 > counter'", words
