"""Issue 20 item 3: a value given through the action's ``env`` input (or the CLI's ``--env``) is a
secret wherever it shows up, whatever its name, unless ``env-public`` / ``--env-public`` names it.
The server under test echoes its environment (``tests/fakes/env_echo_server.py`` answers with
``BUILD``, a plain name); every sink is read back: the log and its annotations, the job summary,
the PR comment, the report files, and the cassette a record or an update writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import FAKES, PY, make_workspace, record_session, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_GATE
from test_redact_env import cli

pytestmark = pytest.mark.integration

REPO = "octo/demo"
SHA = "e" * 40
ECHO = f"{PY} {FAKES / 'env_echo_server.py'}"
VALUE = "build-value-7781-quiet"  # a plain name and a plain value: no rule would call it a secret
CALL = [("tools/call", {"name": "echo", "arguments": {}})]


@pytest.fixture()
def fake() -> FakeGitHub:  # type: ignore[misc]
    with FakeGitHub() as server:
        server.add_token("app-token")
        server.add_pull(REPO, 7, head_sha=SHA, head_ref="feature")
        yield server


@pytest.fixture(scope="module")
def echo_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "echo.jsonl"
    record_session(path, ECHO, CALL)  # BUILD unset: the recording says "build 1"
    return path


def everything_published(ws: Path, run: object, fake: FakeGitHub) -> str:
    bodies = [comment["body"] for thread in fake.comments.values() for comment in thread]
    files = [p.read_text(encoding="utf-8") for p in (ws / "mcp-replay-report.json", ws / "report.md")]
    return "\n".join([run.stdout, run.stderr, run.summary, *bodies, *files])  # type: ignore[attr-defined]


def run_echo(tmp_path: Path, fake: FakeGitHub, cassette: Path, **more: str):  # type: ignore[no-untyped-def]
    """The action on a pull request against the echoing server with ``BUILD`` in ``env``."""
    ws = make_workspace(tmp_path, {"cassettes/echo.jsonl": cassette})
    inputs = {"server": ECHO, "env": f"BUILD={VALUE}", "github-token": "app-token", "markdown-file": "report.md",
              "fail-on": "any", **{k.replace("_", "-"): v for k, v in more.items()}}  # fmt: skip
    run = run_action(ws, event_name="pull_request", event=pull_request(7, SHA), inputs=inputs, api_url=fake.url)
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr  # the echo changed: a regression
    return ws, run


def test_an_env_value_a_server_echoes_is_redacted_in_every_sink(
    tmp_path: Path, fake: FakeGitHub, echo_cassette: Path
) -> None:
    # install prints its environment too: the log is a sink
    install = f"{PY} -c \"import os; print('install sees', os.environ['BUILD'])\""
    ws, run = run_echo(tmp_path, fake, echo_cassette, install=install)
    published = everything_published(ws, run, fake)
    assert [c["body"] for thread in fake.comments.values() for c in thread], "no comment was written"
    assert "install sees [REDACTED]" in run.stdout
    assert "build [REDACTED]" in (ws / "mcp-replay-report.json").read_text(encoding="utf-8")  # the change is shown
    assert VALUE not in published


def test_a_variable_declared_public_is_shown(tmp_path: Path, fake: FakeGitHub, echo_cassette: Path) -> None:
    ws, _ = run_echo(tmp_path, fake, echo_cassette, env_public="BUILD")
    assert VALUE in (ws / "report.md").read_text(encoding="utf-8")


def test_the_cli_redacts_every_env_value_in_its_report_and_in_an_updated_cassette(
    tmp_path: Path, echo_cassette: Path
) -> None:
    cassette = tmp_path / "echo.jsonl"
    cassette.write_bytes(echo_cassette.read_bytes())
    report = tmp_path / "report.json"
    done = cli("replay", "--server", ECHO, "--cassette", str(cassette), "--env", f"BUILD={VALUE}",
               "--fail-on", "any", "--json", "--report", str(report), env={})  # fmt: skip
    assert done.returncode == EXIT_GATE, done.stdout + done.stderr
    assert VALUE not in done.stdout + done.stderr + report.read_text(encoding="utf-8")
    assert "[REDACTED]" in done.stdout
    updated = cli(
        "replay", "--server", ECHO, "--cassette", str(cassette), "--env", f"BUILD={VALUE}", "--update", env={}
    )
    assert updated.returncode == 0, updated.stdout + updated.stderr
    text = cassette.read_text(encoding="utf-8")
    assert VALUE not in text and "build [REDACTED]" in text
    shown = cli("replay", "--server", ECHO, "--cassette", str(echo_cassette), "--env", f"BUILD={VALUE}",
                "--env-public", "BUILD", "--fail-on", "any", "--json", env={})  # fmt: skip
    assert VALUE in shown.stdout


def test_record_keeps_every_env_value_out_of_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "rec.jsonl"
    record_session(cassette, ECHO, CALL, options=("--env", f"BUILD={VALUE}"))
    text = cassette.read_text(encoding="utf-8")
    assert VALUE not in text and "build [REDACTED]" in text
    assert json.loads(text.splitlines()[0])["meta"]["redaction"]["env"] == ["BUILD"]  # the name only
    public = tmp_path / "public.jsonl"
    record_session(public, ECHO, CALL, options=("--env", f"BUILD={VALUE}", "--env-public", "BUILD"))
    assert VALUE in public.read_text(encoding="utf-8")
