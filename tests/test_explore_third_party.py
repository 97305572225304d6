"""``mcp-replay explore`` on servers nobody here wrote, from the registries: the official npm
servers (everything, memory, filesystem) and PyPI's mcp-server-time and mcp-server-git. Each
explored cassette holds tool calls (only the tools marked read-only) and replays clean three times
against a fresh start of the same build, with no options at all."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from e2e_helpers import VENV_BIN, cassette_lines, command, requests, run_cli
from test_e2e_real_servers import EVERYTHING, FILESYSTEM, MEMORY, TIME, needs_node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPLAYS = 3
GIT = VENV_BIN / "mcp-server-git"


def _git(repo: Path, *args: str) -> None:
    env = {
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
        "GIT_AUTHOR_DATE": "2024-03-01T12:00:00Z",
        "GIT_COMMITTER_DATE": "2024-03-01T12:00:00Z",
        "PATH": "/usr/bin:/bin",
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, timeout=30)


def _server(name: str, tmp_path: Path) -> str:
    if name == "everything":
        return command(EVERYTHING, "stdio")
    if name == "memory":
        return command("env", f"MEMORY_FILE_PATH={tmp_path / 'memory.jsonl'}", MEMORY)
    if name == "filesystem":
        root = tmp_path / "files"
        (root / "notes").mkdir(parents=True)
        (root / "notes" / "a.txt").write_text("alpha\n")
        (root / "b.md").write_text("# beta\n")
        return command(FILESYSTEM, root)
    if name == "time":
        return command(TIME, "--local-timezone", "UTC")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "first")
    (repo / "a.txt").write_text("one\ntwo\n")
    return command(GIT, "--repository", repo)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("everything", marks=needs_node),
        pytest.param("memory", marks=needs_node),
        pytest.param("filesystem", marks=needs_node),
        "time",
        "git",
    ],
)
def test_an_explored_third_party_server_replays_clean_three_times(tmp_path: Path, name: str) -> None:
    server = _server(name, tmp_path)
    cassette = tmp_path / f"{name}.jsonl"
    # everything's trigger-long-running-operation is marked read-only and runs 10 s: --timeout
    # bounds it (cancelled, left out, named), as it bounds any call that hangs.
    explored = run_cli("explore", "--server", server, "--cassette", cassette, "--timeout", "5")
    assert explored.code == 0, explored.describe()
    meta = cassette_lines(cassette)[0]["meta"]
    called = meta["explored"]["called"]
    assert called, explored.describe()
    assert len(requests(cassette, "tools/call")) == len(called)
    # Nothing that is not marked read-only was called.
    listed = {t["name"]: t for r in requests(cassette, "tools/list") for t in r["response"]["result"]["tools"]}
    for tool in called:
        hints = listed[tool].get("annotations") or {}
        assert hints.get("readOnlyHint") is True and hints.get("destructiveHint") is not True, tool
    for attempt in range(REPLAYS):
        run = run_cli("replay", "--server", server, "--cassette", cassette, report=tmp_path / f"r{attempt}.json")
        assert run.code == 0, run.describe()
        assert run.findings() == [], run.describe()


@needs_node
def test_explore_over_streamable_http_replays_clean(tmp_path: Path) -> None:
    # server-everything's streamableHttp mode on 127.0.0.1: explore --url, replay --url.
    from http_helpers import everything_http

    cassette = tmp_path / "everything-http.jsonl"
    with everything_http() as url:
        explored = run_cli("explore", "--url", url, "--cassette", cassette, "--timeout", "5")
        assert explored.code == 0, explored.describe()
        meta = cassette_lines(cassette)[0]["meta"]
        assert meta["transport"] == "http" and meta["explored"]["called"], meta
        run = run_cli("replay", "--url", url, "--cassette", cassette, report=tmp_path / "r.json")
        assert run.code == 0, run.describe()
        assert run.findings() == [], run.describe()
