"""The README's quick start, followed by a new user in a fresh project outside this repository:
the package installed from the built wheel into a fresh virtual environment (what ``pipx install``
does), the server explored and compared with its main branch's build (no cassette yet), a session recorded by an official-SDK client through the README's ``mcp-replay record``
line, the README's replay line passing, a changed server failing it, the README's ``--update``
line accepting the change, and the replay passing again. Every ``mcp-replay`` command is taken
from the README's "Quick start" section and run as written, by a shell, in the project directory;
the only thing the test provides is the user's ``server.py`` (an official-SDK server) and
``python`` on PATH (the project's environment, which has the SDK).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from http_helpers import sdk_session

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.release, pytest.mark.timeout(900)]

SERVER = '''\
"""The user's MCP server: two tools, on the official SDK."""
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

server = MCPServer("greeter", version="1.0.0", log_level="WARNING")
GREETING = "Hello"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def greet(name: str) -> str:
    """Greet someone."""
    return f"{GREETING}, {name}!"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


if __name__ == "__main__":
    server.run()
'''


def quick_start_commands() -> list[str]:
    """The ``mcp-replay`` command lines of the README's Quick start section, in order."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Quick start\n(.*?)(?=^## )", text, re.M | re.S)
    assert section, "the README has no '## Quick start' section"
    blocks = re.findall(r"```(?:sh|bash|console)\n(.*?)```", section.group(1), re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith(("mcp-replay ", "git "))]


def test_the_quick_start_is_on_the_first_screen_and_opens_with_install() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[:2] == ["Install", "Quick start"], headings[:4]
    assert text.index("## Quick start") < 2500, "the quick start is not on the first screen"
    install = text[text.index("## Install") : text.index("## Quick start")]
    for line in (
        "pipx install mcp-replay-action",
        "uv tool install mcp-replay-action",
        "pipx install git+https://github.com/mcp-replay/mcp-replay-action",
    ):
        assert line in install, line


def build_wheel(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(ROOT)], check=True,
                   capture_output=True, timeout=600)  # fmt: skip
    wheels = sorted(out.glob("mcp_replay_action-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_a_new_user_follows_the_quick_start_end_to_end(tmp_path: Path) -> None:
    commands = quick_start_commands()
    records = [c for c in commands if c.startswith("mcp-replay record ")]
    replays = [c for c in commands if c.startswith("mcp-replay replay ") and "--update" not in c]
    updates = [c for c in commands if c.startswith("mcp-replay replay ") and "--update" in c]
    explores = [c for c in commands if c.startswith("mcp-replay explore ")]
    compares = [c for c in commands if c.startswith("mcp-replay compare-builds ")]
    worktrees = [c for c in commands if c.startswith("git worktree ")]
    assert len(records) == 1 and len(replays) == 1 and len(updates) == 1, commands
    assert len(explores) == 1 and len(compares) == 1 and len(worktrees) == 1, commands
    assert commands.index(explores[0]) < commands.index(records[0]), "exploring is not the first step"

    # Install: the built wheel into a fresh venv, nothing of this checkout beside it.
    tool = tmp_path / "tool"
    subprocess.run([sys.executable, "-m", "venv", str(tool)], check=True, timeout=120)
    wheel = build_wheel(tmp_path / "dist")
    subprocess.run([str(tool / "bin" / "pip"), "install", "--quiet", str(wheel)], check=True, timeout=600,
                   capture_output=True)  # fmt: skip

    # The user's project, outside this repository, a git repository of its own.
    project = tmp_path / "my-server"
    project.mkdir()
    (project / "server.py").write_text(SERVER, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=60)
    shims = tmp_path / "project-env"
    shims.mkdir()
    # The project's Python, with the SDK (a wrapper: a symlink out of its venv loses the venv).
    (shims / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    (shims / "python").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env["PATH"] = os.pathsep.join([str(shims), str(tool / "bin"), "/usr/bin", "/bin"])

    which = subprocess.run(["bash", "-c", "command -v mcp-replay"], env=env, capture_output=True, text=True, timeout=30)
    assert which.stdout.strip() == str(tool / "bin" / "mcp-replay"), which.stdout

    def shell(line: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", line], cwd=project, env=env, capture_output=True, text=True,
                              timeout=300, check=False, stdin=subprocess.DEVNULL)  # fmt: skip

    # 1. No cassette yet: explore (the read-only tool is called, add is named and left alone),
    # then compare the working tree with main's build, checked out beside it as the README says.
    explored = shell(explores[0])
    assert explored.returncode == 0, explored.stdout + explored.stderr
    assert "skipped tool add: not marked read-only" in explored.stderr
    assert '"name":"greet"' in (project / "cassettes" / "explored.jsonl").read_text(encoding="utf-8")
    for line in ("git add server.py", "git -c user.name=U -c user.email=u@example.com commit -qm first",
                 "git branch -M main", worktrees[0].split("#")[0]):
        assert shell(line).returncode == 0, line
    same = shell(compares[0])
    assert same.returncode == 0, same.stdout + same.stderr
    (project / "server.py").write_text(SERVER.replace('GREETING = "Hello"', 'GREETING = "Hey"'), encoding="utf-8")
    changed = shell(compares[0])
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "tools/call greet  breaking value-change" in changed.stdout, changed.stdout
    (project / "server.py").write_text(SERVER, encoding="utf-8")

    # 2. Record: the SDK client launches the README's record line in place of the server.
    argv = shlex.split(records[0])
    assert argv[0] == "mcp-replay"
    params = StdioServerParameters(command=str(tool / "bin" / "mcp-replay"), args=argv[1:], cwd=str(project), env=env)

    async def use_it(client: Client) -> dict[str, object]:
        await client.list_tools()
        greeted = await client.call_tool("greet", {"name": "Ada"})
        added = await client.call_tool("add", {"a": 2, "b": 3})
        return {"greet": greeted.content[0].text, "add": added.content[0].text}  # type: ignore[union-attr]

    seen = sdk_session(params, use_it)
    assert seen["greet"] == "Hello, Ada!" and seen["add"] == "5"
    cassettes = sorted(p for p in (project / "cassettes").glob("*.jsonl") if p.name != "explored.jsonl")
    assert len(cassettes) == 1, sorted(project.rglob("*"))
    recorded = cassettes[0].read_text(encoding="utf-8")

    # 3. Replay against the same build (both cassettes): passes.
    passed = shell(replays[0])
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "GRADE A" in passed.stdout

    # A changed server: the replay fails on the changed answer.
    (project / "server.py").write_text(SERVER.replace('GREETING = "Hello"', 'GREETING = "Hi"'), encoding="utf-8")
    failed = shell(replays[0])
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert '"Hello, Ada!" -> "Hi, Ada!"' in failed.stdout, failed.stdout

    # 6. Accept the change with the README's --update line; the replay passes again.
    accepted = shell(updates[0])
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "updated " in accepted.stdout + accepted.stderr
    rewritten = cassettes[0].read_text(encoding="utf-8")
    assert rewritten != recorded and "Hi, Ada!" in rewritten
    again = shell(replays[0])
    assert again.returncode == 0, again.stdout + again.stderr
