"""The CLI and the action read the same settings into the same ``Plan``: both read the one
options table (``options.py``) and make the plan with ``plan.plan_from`` (issue 19), so what this
checks is that the two readings (click's flags, the action's inputs) agree. And what only the
plan carries reaches the server: a ``--redact-env`` variable given through the action's ``env``
input is redacted and matched on replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from github_action_run import make_workspace, run_action
from github_events import push
from mcp_replay_action.commands import replay as replay_command
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.settings import Settings
from mcp_replay_action.model.gate import GatePolicy
from mcp_replay_action.options import from_flags, plan_from
from mcp_replay_action.plan import Plan
from test_redact_env import VALUE, record

pytestmark = pytest.mark.integration

FAKES = Path(__file__).parent / "fakes"


def cli_plan(args: list[str], root: Path) -> Plan:
    """The plan the real ``replay`` command line parses ``args`` into (nothing is run)."""
    ctx = replay_command.replay.make_context("replay", args)
    return plan_from(from_flags(ctx.params), root=str(root))


def action_plan(inputs: dict[str, str], workspace: Path) -> Plan:
    env = {"GITHUB_WORKSPACE": str(workspace)}
    env.update({"INPUT_" + name.upper(): value for name, value in inputs.items()})
    return Settings.from_env(env).plan()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    for name in ("cassettes/a.jsonl", "cassettes/sub/b.jsonl", "cassettes/old/c.jsonl", "cassettes/d.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}\n")
    return tmp_path.resolve()


def test_the_same_settings_give_the_same_plan(workspace: Path) -> None:
    action = action_plan(
        {
            "server": "python -m my_server --flag 'two words'",
            "cassettes": "cassettes/**/*.jsonl\n!cassettes/old/*.jsonl",
            "env": "API_KEY=abc123\nMODE=test",
            "min-grade": "B",
            "fail-on": "any",
            "ignore-paths": "result.content[].text, $.result.meta",
            "ignore-keys": "timestamp",
            "thread": "ref\nresult.structuredContent.items[].key",
            "no-thread": "result.structuredContent.id",
            "allow-reorder": "true",
            "timeout": "45",
            "setup": "cp fixtures/db.sqlite /tmp/db.sqlite",
        },
        workspace,
    )
    args = [
        "--server", "python -m my_server --flag 'two words'",
        "--cassette", "cassettes/**/*.jsonl", "--cassette", "!cassettes/old/*.jsonl",
        "--env", "API_KEY=abc123", "--env", "MODE=test",
        "--min-grade", "B", "--fail-on", "any",
        "--ignore-path", "result.content[].text", "--ignore-path", "$.result.meta",
        "--ignore-key", "timestamp", "--allow-reorder", "--timeout", "45",
        "--thread", "ref", "--thread", "result.structuredContent.items[].key",
        "--no-thread", "result.structuredContent.id",
        "--cwd", str(workspace), "--setup", "cp fixtures/db.sqlite /tmp/db.sqlite",
    ]  # fmt: skip
    assert cli_plan(args, workspace) == action
    assert action.thread == ("ref", "result.structuredContent.items[].key")
    assert action.paths == (str(workspace / "cassettes/a.jsonl"), str(workspace / "cassettes/sub/b.jsonl"))
    assert action.target.startup_timeout == 45.0 and action.target.env == {"API_KEY": "abc123", "MODE": "test"}


def test_defaults_agree_http_too_and_recorder_json_is_found_by_the_action(workspace: Path) -> None:
    action = action_plan(
        {"server": "node srv.js", "url": "http://127.0.0.1:9/mcp", "headers": "Authorization: Bearer t0k"}, workspace
    )
    args = ["--server", "node srv.js", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization: Bearer t0k",
            "--cwd", str(workspace), "--cassette", "cassettes/**/*.jsonl", "--cassette", "cassettes/**/*.json"]  # fmt: skip
    assert cli_plan(args, workspace) == action
    # One default gate: breaking changes fail, with no flag and no input.
    assert action.gate == GatePolicy(fail_on="breaking", min_grade=None)
    assert str(workspace / "cassettes/d.json") in action.paths
    assert action.mode == "check" and action.target.startup_timeout == 30.0


def test_old_and_new_gate_spellings_agree(workspace: Path) -> None:
    base = {"server": "x", "cassettes": "cassettes/a.jsonl"}
    old = action_plan({**base, "fail-on-regression": "true"}, workspace)
    new = cli_plan(["--server", "x", "--cassette", "cassettes/a.jsonl", "--fail-on-regression",
                    "--cwd", str(workspace)], workspace)  # fmt: skip
    assert old.gate == new.gate == GatePolicy(fail_on="any")
    with pytest.raises(ConfigError, match="no file matches"):
        cli_plan(["--server", "x", "--cassette", "nothing/*.jsonl"], workspace)


def test_redact_env_given_through_the_action_env_input_is_redacted_and_matched(tmp_path: Path) -> None:
    server = f"{sys.executable} {FAKES / 'env_echo_server.py'}"
    cassette = tmp_path / "token.jsonl"
    record(cassette, "--redact-env", "SERVICE_TOKEN", env={"SERVICE_TOKEN": VALUE}, server=server)
    assert VALUE not in cassette.read_text()
    ws = make_workspace(tmp_path, {"cassettes/token.jsonl": cassette})
    rotated = "rotated-token-value-77"
    # The value reaches the server only through the action's env input, never our environment.
    run = run_action(
        ws,
        event_name="push",
        event=push(),
        inputs={"server": server, "env": f"SERVICE_TOKEN={rotated}", "fail-on": "any"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((ws / "mcp-replay-report.json").read_text())
    assert (report["grade"], report["failed"], report["missing"]) == ("A", 0, 0)
    assert rotated not in run.stdout + run.stderr + run.summary + (ws / "mcp-replay-report.json").read_text()


def test_an_ignore_rule_that_matches_nothing_is_warned_by_the_action_too(tmp_path: Path, demo_cassette: Path) -> None:
    """The unused-rule warning comes back in the run's ``Outcome``: the action gives it as a
    warning annotation, naming the input, and a rule that matched something is not named."""
    ws = make_workspace(tmp_path, {"cassettes/demo.jsonl": demo_cassette})
    run = run_action(
        ws,
        event_name="push",
        event=push(),
        inputs={
            "server": f"{sys.executable} -m mcp_replay_action.samples.calc_server",
            "ignore-keys": "ehcoed\njobId",
            "ignore-paths": "result.contnet[].text",
        },
    )
    assert run.returncode == 0, run.stdout + run.stderr
    warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning")]
    assert "::warning title=mcp-replay::input ignore-keys: 'ehcoed' matched nothing in this run" in warnings
    assert "::warning title=mcp-replay::input ignore-paths: 'result.contnet[].text' matched nothing in this run" in warnings
    assert not [line for line in warnings if "jobId" in line]
