"""``mcp-replay record --redact-env VAR`` through the real command line: the variable's value is
scrubbed from requests, responses and the header; only its name is kept, and replay redacts the
live value the same way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_replay_action.demo import demo_answer
from mcp_replay_action.transport.session import ClientSession
from mcp_replay_action.transport.stdio import StdioTransport

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits")]

FAKES = Path(__file__).parent / "fakes"
VALUE = "hunter2-deploy-value-42"
# The value is also on the server's command line, which the header records.
ECHO = f"{sys.executable} {FAKES / 'echo_server.py'} --label {VALUE}"


def record(cassette: Path, *options: str, env: dict[str, str], server: str = ECHO) -> str:
    """Record one session through ``mcp-replay record``; returns what the recorder said on stderr."""
    argv = [sys.executable, "-m", "mcp_replay_action", "record", "--server", server, "--cassette", str(cassette)]
    transport = StdioTransport([*argv, *options], env=env)
    transport.start()
    try:
        client = ClientSession(transport, answer=demo_answer)
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        client.call("initialize", init)
        client.notify("notifications/initialized")
        reply = client.call("tools/call", {"name": "echo", "arguments": {"text": f"deploy with {VALUE} now"}})
        assert VALUE in json.dumps(reply)  # the client itself sees the real value
    finally:
        transport.close()
    return str(transport.diagnostics().get("stderr_tail", ""))


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **env},
    )


def test_the_value_of_a_named_variable_never_reaches_the_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "echo.jsonl"
    record(cassette, "--redact-env", "DEPLOY_VALUE", env={"DEPLOY_VALUE": VALUE})
    text = cassette.read_text()
    assert VALUE not in text
    header, *interactions = (json.loads(line) for line in text.splitlines())
    assert header["meta"]["redaction"]["env"] == ["DEPLOY_VALUE"]
    assert "[REDACTED]" in " ".join(header["meta"]["server"])
    call = interactions[-1]
    assert call["message"]["params"]["arguments"]["text"] == "deploy with [REDACTED] now"
    assert call["response"]["result"]["structuredContent"]["text"] == "deploy with [REDACTED] now"

    # Replay redacts the live echo of the recorded placeholder and of the value alike: a clean pass.
    done = cli("replay", "--server", ECHO, "--cassette", str(cassette), "--json", env={"DEPLOY_VALUE": VALUE})
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["grade"] == "A"


def test_the_value_may_come_from_env_and_an_unset_name_only_warns(tmp_path: Path) -> None:
    cassette = tmp_path / "echo.jsonl"
    said = record(
        cassette,
        "--env",
        f"DEPLOY_VALUE={VALUE}",
        "--redact-env",
        "DEPLOY_VALUE",
        "--redact-env",
        "NOT_SET_ANYWHERE",
        env={},
    )
    text = cassette.read_text()
    assert VALUE not in text
    assert json.loads(text.splitlines()[0])["meta"]["redaction"]["env"] == ["DEPLOY_VALUE"]
    assert "--redact-env NOT_SET_ANYWHERE is not set" in said


def test_replay_redacts_a_rotated_value_the_server_emits_by_itself(tmp_path: Path) -> None:
    cassette = tmp_path / "token.jsonl"
    env_echo = f"{sys.executable} {FAKES / 'env_echo_server.py'}"
    record(cassette, "--redact-env", "SERVICE_TOKEN", env={"SERVICE_TOKEN": VALUE}, server=env_echo)
    text = cassette.read_text()
    assert VALUE not in text and "token [REDACTED]" in text
    rotated = {"SERVICE_TOKEN": "rotated-token-value-77"}
    done = cli("replay", "--server", env_echo, "--cassette", str(cassette), "--json", env=rotated)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["grade"] == "A" and report["failed"] == 0


def test_without_redact_env_the_value_is_recorded(tmp_path: Path) -> None:
    cassette = tmp_path / "echo.jsonl"
    record(cassette, env={"DEPLOY_VALUE": VALUE})
    assert VALUE in cassette.read_text()  # the test above would see a leak
