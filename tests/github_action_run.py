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
# A python3 another user can run (this test run's own may live under /root).
SYSTEM_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
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


def copy_package_sources(ws: Path) -> None:
    """The package's source in ``ws/src``, as a user's server would be: a ``python3`` without the
    package (``SYSTEM_PYTHON``) runs the sample servers from there (``working-directory: src``)."""
    shutil.copytree(Path(__file__).resolve().parent.parent / "src" / "mcp_replay_action", ws / "src" / "mcp_replay_action",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip


def probe_workspace(where: Path, probe: str) -> tuple[Path, Path]:
    """(workspace, seen file) for a probe of the code under test run as another user: the
    calculator's cassette, the package's source (the sample server's), ``tests/fakes/<probe>``
    copied in as ``probe.py``, and the empty ``seen.jsonl`` it reports to."""
    from mcp_replay_action.demo import record_demo_session

    ws = where / "workspace"
    (ws / "cassettes").mkdir(parents=True)
    record_demo_session(ws / "cassettes" / "calc.jsonl")
    copy_package_sources(ws)
    shutil.copyfile(FAKES / probe, ws / "probe.py")
    seen = ws / "seen.jsonl"
    seen.write_text("", encoding="utf-8")
    return ws, seen


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


def run_as_the_image(
    ws: Path, inputs: dict[str, str], *, token: str = "app-token", event: bool = True, extra_env: dict[str, str] | None = None
) -> tuple[ActionRun, list[dict[str, Any]]]:
    """One pull request run of the entrypoint as the image runs it: as root, with
    ``MCP_REPLAY_RUN_AS=workspace-owner``, so ``install``, ``setup`` and the server drop to the
    workspace's owner (the caller makes the workspace theirs). ``event=False``: the caller names
    the event file in ``extra_env``. Returns the run and the comments posted on pull request 7."""
    from fakegithub import BOT, FakeGitHub
    from github_events import pull_request

    sha = "c" * 40
    with FakeGitHub() as fake:
        fake.add_token(token, BOT)
        fake.add_pull("octo/demo", 7, head_sha=sha, head_ref="feature")
        run = run_action(
            ws,
            event_name="pull_request",
            event=pull_request(7, sha) if event else None,
            inputs={"github-token": token, **inputs},
            api_url=fake.url,
            extra_env={"MCP_REPLAY_RUN_AS": "workspace-owner", **(extra_env or {})},
        )
        posted = [comment for thread in fake.comments.values() for comment in thread]
    return run, posted


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
