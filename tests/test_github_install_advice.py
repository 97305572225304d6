"""A server that cannot start in the action for something it needs (a Python module, a Node
package, a program) gets a comment and an error that name the ``install`` input with an example
(issue 30, the first CI run): real servers that fail as a new user's do, run by the action's
entrypoint against the fake GitHub API on 127.0.0.1."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import PY, ActionRun, make_workspace, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_INFRA, CommandNotFound, ServerStartError
from mcp_replay_action.github import comment as sticky
from mcp_replay_action.transport.missing import Missing, missing_dependency

pytestmark = pytest.mark.integration

REPO = "octo/demo"
NODE = shutil.which("node")


def first_run(tmp_path: Path, fake: FakeGitHub, cassette: Path, files: dict[str, str], **inputs: str) -> ActionRun:
    """The user's first pull request run: their server's files in the workspace, the inputs given."""
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": cassette})
    for name, text in files.items():
        (ws / name).write_text(text, encoding="utf-8")
    return run_action(
        ws,
        event_name="pull_request",
        event=pull_request(7, "e" * 40),
        inputs={"cassettes": "cassettes/*.jsonl", "github-token": "app-token", **inputs},
        api_url=fake.url,
    )


def our_comment(fake: FakeGitHub) -> str:
    """Our comment's text as a reader sees it (md_cell writes backticks and underscores as
    character references, which GitHub shows as the characters)."""
    [comment] = [c for c in fake.comments.get((REPO, 7), []) if sticky.marker("default") in c["body"]]
    return html.unescape(str(comment["body"]))


def the_error(run: ActionRun) -> str:
    [error] = [c.data for c in run.annotations("error")]
    return error


def test_a_python_server_missing_a_module_is_told_to_use_install(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    server = "import json\nimport mcp_replay_dep_not_installed  # the user's dependency\n"
    run = first_run(tmp_path, fake, calc_cassette, {"server.py": server}, server=f"{PY} server.py")
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    error = the_error(run)
    assert "No module named 'mcp_replay_dep_not_installed'" in error
    assert "the Python module `mcp_replay_dep_not_installed`" in error
    assert "with the action's `install` input, for example `install: pip install -r requirements.txt`" in error
    body = our_comment(fake)
    assert "could not complete" in body and "**Install the server's dependencies.**" in body
    assert "the Python module `mcp_replay_dep_not_installed`" in body
    assert "for example `install: pip install -r requirements.txt`" in body
    assert "MCP replay could not run" in run.summary and "`install` input" in html.unescape(run.summary)


def test_when_install_ran_and_missed_it_the_advice_says_so(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    run = first_run(
        tmp_path,
        fake,
        calc_cassette,
        {"server.py": "import mcp_replay_dep_not_installed\n"},
        server=f"{PY} server.py",
        install=f"{PY} -c pass",
    )
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    assert "The action's `install` input ran but did not provide it" in the_error(run)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.parametrize(
    ("name", "source", "package"),
    [
        ("server.js", "require('mcp-replay-missing-pkg');\n", "mcp-replay-missing-pkg"),  # CommonJS
        ("server.mjs", "import x from 'mcp-replay-missing-esm';\nconsole.log(x);\n", "mcp-replay-missing-esm"),
    ],
)
def test_a_node_server_missing_a_package_is_told_to_use_install(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path, name: str, source: str, package: str
) -> None:
    run = first_run(tmp_path, fake, calc_cassette, {name: source}, server=f"{NODE} {name}")
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    error = the_error(run)
    assert f"the Node package `{package}`" in error and "`install: npm ci`" in error
    assert "install: npm ci" in our_comment(fake)


def test_a_program_not_on_path_is_told_to_use_install(tmp_path: Path, fake: FakeGitHub, calc_cassette: Path) -> None:
    run = first_run(tmp_path, fake, calc_cassette, {}, server="mcp-replay-no-such-program --stdio")
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    error = the_error(run)
    assert "server command not found: mcp-replay-no-such-program" in error
    assert "the program `mcp-replay-no-such-program` is not on the action's PATH" in error
    assert "`install` input" in error and "`install` input" in our_comment(fake)


def test_a_program_a_shell_cannot_find_is_told_to_use_install(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    run = first_run(tmp_path, fake, calc_cassette, {}, server="sh -c 'mcp-replay-no-such-tsx server.ts'")
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    assert "the program `mcp-replay-no-such-tsx`" in the_error(run)


def test_a_server_that_fails_for_another_reason_gets_no_install_advice(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    run = first_run(
        tmp_path, fake, calc_cassette, {"server.py": "raise TypeError('bad config')\n"}, server=f"{PY} server.py"
    )
    assert run.returncode == EXIT_INFRA, run.stdout + run.stderr
    assert "TypeError: bad config" in the_error(run) and "install" not in the_error(run)
    assert "**Install the server's dependencies.**" not in our_comment(fake)


@pytest.mark.parametrize(
    ("tail", "expected"),
    [
        (
            "Traceback (most recent call last):\n  File \"s.py\", line 1\nModuleNotFoundError: No module named 'a.b'",
            Missing("python", "a.b"),
        ),
        (
            "node:internal\nError: Cannot find module '/w/dist/index.js'\n{ code: 'MODULE_NOT_FOUND' }\nNode.js v22",
            Missing("file", "dist/index.js"),
        ),
        ("Error: spawn uvx ENOENT", Missing("program", "uvx")),
        ("zsh: command not found: tsx", Missing("program", "tsx")),
        ("ModuleNotFoundError: No module named '[x](http://e.x)'", None),  # not a plain name: not shown
        ("TypeError: nope\n" + "sh: 1: " * 5000, None),  # long adversarial runs are read in one pass
    ],
)
def test_what_a_stderr_tail_says_was_missing(tail: str, expected: Missing | None) -> None:
    found = missing_dependency(ServerStartError("server exited at start-up", stderr_tail=tail))
    assert found == expected or (expected is None and (found is None or found.name == ""))


def test_a_program_name_is_redacted_with_the_message() -> None:
    """The spawn's ENOENT names argv[0]; redacting the error redacts the name the advice shows."""
    shown = CommandNotFound("/opt/sk-secret-123/bin/server").redacted(
        lambda s: s.replace("sk-secret-123", "[REDACTED]")
    )
    assert "sk-secret-123" not in str(shown)
    found = missing_dependency(shown)
    assert found is not None and found.kind == "program" and "sk-secret-123" not in repr(found)
