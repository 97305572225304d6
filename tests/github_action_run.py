"""Run the action's entrypoint the way the runner does: ``python -m mcp_replay_action.github`` as a
subprocess, in a workspace, with INPUT_* variables (hyphens kept), an event file, temp
GITHUB_OUTPUT / GITHUB_STEP_SUMMARY, and GITHUB_API_URL pointing at the fake GitHub API.
Also records cassettes through the real recording proxy (``mcp-replay record``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_replay_action.demo import demo_answer
from mcp_replay_action.transport.session import ClientSession
from mcp_replay_action.transport.stdio import StdioTransport
from runner_parse import Cmd, parse_commands, read_outputs

PY = sys.executable
FAKES = Path(__file__).parent / "fakes"
CALC = f"{PY} -m mcp_replay_action.samples.calc_server"
CALC_REGRESSED = f"{PY} -m mcp_replay_action.samples.calc_server_regressed"
HOSTILE = f"{PY} {FAKES / 'hostile_server.py'}"
BENIGN = f"{PY} {FAKES / 'hostile_server.py'} --benign"
RUN_TIMEOUT = 120


@dataclass
class ActionRun:
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def commands(self) -> list[Cmd]:
        return parse_commands(self.stdout)

    def annotations(self, level: str | None = None) -> list[Cmd]:
        levels = (level,) if level else ("error", "warning", "notice")
        return [c for c in self.commands if c.name in levels]


def make_workspace(root: Path, cassettes: dict[str, Path]) -> Path:
    """A workspace with the given cassettes copied in (name relative to the workspace -> source)."""
    ws = root / "workspace"
    for name, source in cassettes.items():
        target = ws / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    ws.mkdir(exist_ok=True)
    return ws


def run_action(
    ws: Path,
    *,
    event_name: str,
    event: dict[str, Any] | None,
    inputs: dict[str, str],
    api_url: str = "",
    extra_env: dict[str, str] | None = None,
) -> ActionRun:
    """One step: fresh GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, the entrypoint as a subprocess."""
    commands_dir = ws.parent / "file_commands"
    commands_dir.mkdir(exist_ok=True)
    output = commands_dir / "output"
    summary = commands_dir / "summary.md"
    output.write_text("")
    summary.write_text("")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "ACTIONS_"))}
    env.update(
        {
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(ws),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_REPOSITORY": "octo/demo",
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_SHA": "1" * 40,
            "PYTHONUNBUFFERED": "1",
        }
    )
    if api_url:
        env["GITHUB_API_URL"] = api_url
    if event is not None:
        event_path = ws.parent / "event.json"
        event_path.write_text(json.dumps(event))
        env["GITHUB_EVENT_PATH"] = str(event_path)
    for name, value in inputs.items():
        env["INPUT_" + name.upper()] = value  # hyphens kept, as the runner does
    env.update(extra_env or {})
    proc = subprocess.run(
        [PY, "-I", "-m", "mcp_replay_action.github"],  # as the image and the composite action run it
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    return ActionRun(proc.returncode, proc.stdout, proc.stderr, read_outputs(output), summary.read_text())


def record_session(
    cassette: Path,
    server: str,
    calls: list[tuple[str, dict[str, Any] | None]],
    *,
    options: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> None:
    """Record one handshake-era session through the real recording proxy (``mcp-replay record``):
    initialize, initialized, then each (method, params) request in ``calls``."""
    proxy = [PY, "-m", "mcp_replay_action", "record", "--server", server, "--cassette", str(cassette), *options]
    transport = StdioTransport(proxy, env=env)
    transport.start()
    try:
        client = ClientSession(transport, answer=demo_answer)
        client.call(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
        )
        client.notify("notifications/initialized")
        for method, params in calls:
            client.call(method, params)
    finally:
        transport.close()


def record_hostile_twin(cassette: Path) -> None:
    """Record a cassette against the benign twin of the hostile server, through the real proxy."""
    record_session(
        cassette,
        BENIGN,
        [
            ("tools/list", None),
            ("tools/call", {"name": "fetch", "arguments": {"url": "https://example.com"}}),
            ("tools/call", {"name": "lookup", "arguments": {"q": "x"}}),
            ("tools/call", {"name": "meta", "arguments": {}}),
        ],
    )
