"""The recipes of docs/recording.md, run exactly as the page writes them: the Python SDK client
(with the mcp 2.x of this venv and, when it is there, the mcp 1.x of tests/servers/.venv-sdk1),
the TypeScript SDK client with node against tests/servers/node_modules/@modelcontextprotocol/sdk,
and the MCP Inspector CLI when MCP_REPLAY_INSPECTOR names an installed ``mcp-inspector`` (it is not
among the test servers: ``npm install @modelcontextprotocol/inspector``). Each recording is then
replayed against the same server and must pass."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_replay_action.cassette import load

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "recording.md"
SERVERS = ROOT / "tests" / "servers"
SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
BIN = Path(sys.executable).parent

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def block(lang: str, index: int = 0) -> str:
    return re.findall(rf"```{lang}\n(.*?)```", PAGE.read_text(encoding="utf-8"), flags=re.DOTALL)[index]


def env() -> dict[str, str]:
    # ``mcp-replay`` and the ``python`` that runs the sample server: this venv's, first on PATH.
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env(), capture_output=True, text=True, timeout=150, stdin=subprocess.DEVNULL
    )


def replays_clean(cwd: Path, cassette: str) -> None:
    server = "python -m mcp_replay_action.samples.calc_server"
    done = run(["mcp-replay", "replay", "--server", server, "--cassette", cassette], cwd)
    assert done.returncode == 0, done.stdout + done.stderr


def recorded_session(cwd: Path, done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stdout + done.stderr
    assert "mcp-replay: 5 interactions recorded to cassettes/session.jsonl (handshake era," in done.stderr
    inters = load(cwd / "cassettes" / "session.jsonl").interactions
    assert [i.method for i in inters] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "tools/call",
    ]
    started, status = inters[3], inters[4]
    job = started.response["result"]["structuredContent"]["jobId"]
    assert status.message["params"]["arguments"] == {"jobId": job}
    assert status.response["result"].get("isError") is not True  # the server knew the job
    replays_clean(cwd, "cassettes/session.jsonl")


@pytest.mark.parametrize("python", ["mcp2", "mcp1"])
def test_the_python_sdk_recipe_records_a_session_that_replays(python: str, tmp_path: Path) -> None:
    interpreter = sys.executable if python == "mcp2" else str(SDK1_PYTHON)
    if python == "mcp1" and not SDK1_PYTHON.exists():
        pytest.skip("tests/servers/.venv-sdk1 (mcp 1.x) is not installed")
    recipe = block("python")
    if python == "mcp1":  # the one change the page names for mcp 1.x
        recipe = recipe.replace('job.structured_content["jobId"]', 'job.structuredContent["jobId"]', 1)
    (tmp_path / "record_session.py").write_text(recipe, encoding="utf-8")
    recorded_session(tmp_path, run([interpreter, "record_session.py"], tmp_path))


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_typescript_sdk_recipe_records_a_session_that_replays(tmp_path: Path) -> None:
    sdk = SERVERS / "node_modules" / "@modelcontextprotocol" / "sdk"
    if not sdk.exists():
        pytest.skip("the npm test servers are not installed")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "@modelcontextprotocol").mkdir()
    # The SDK's own dependencies resolve from the test servers' node_modules, where it lives.
    os.symlink(sdk.resolve(), tmp_path / "node_modules" / "@modelcontextprotocol" / "sdk")
    (tmp_path / "record-session.mjs").write_text(block("js"), encoding="utf-8")
    recorded_session(tmp_path, run(["node", "--preserve-symlinks-main", "record-session.mjs"], tmp_path))


def test_the_inspector_recipe_records_one_call(tmp_path: Path) -> None:
    inspector = os.environ.get("MCP_REPLAY_INSPECTOR")
    if not inspector:
        pytest.skip("set MCP_REPLAY_INSPECTOR to an installed mcp-inspector (npm @modelcontextprotocol/inspector)")
    argv = shlex.split(block("sh").replace("\\\n", " "))
    assert argv[:3] == ["npx", "@modelcontextprotocol/inspector", "--cli"]
    done = run([inspector, *argv[2:]], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert '"text": "5"' in done.stdout  # the Inspector printed the answer the proxy passed through
    assert "mcp-replay: 4 interactions recorded to cassettes/add.jsonl (handshake era," in done.stderr
    methods = [i.method for i in load(tmp_path / "cassettes" / "add.jsonl").interactions]
    assert methods == ["initialize", "notifications/initialized", "tools/list", "tools/call"]
    replays_clean(tmp_path, "cassettes/add.jsonl")
