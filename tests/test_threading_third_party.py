"""Servers nobody here wrote that mint ids, each replayed 5 times unchanged: no failure, no noise,
the id threaded, and the server started once per replay (a wrapper appends a line per start).

PyPI's ``mcp-server-git`` answers ``git_commit`` with
the new commit's hash in prose (``Changes committed successfully with hash 9cea9f5e...``), which a
later ``git_show`` quotes; the hash depends on the second the commit was made, so every start
mints another one. Recorded with the official Python SDK client through ``mcp-replay record`` (as
docs/recording.md says), replayed with ``--setup`` restoring the repository.

npm's ``server-everything`` runs ``simulate-research-query`` as a task (2025-11-25 Tasks): its
task id is minted afresh by every start and quoted by every ``tasks/get`` and ``tasks/result``.
Recorded with the official 1.x SDK client (``tests/servers/tasks_client.py``), which kills the
recording proxy 2 s after closing its stdin while the server's task timers still run: the
recording must still hold the whole session."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import (
    MCP_REPLAY,
    SERVERS,
    VENV_BIN,
    cassette_lines,
    record_through_proxy,
    run_cli,
    run_tagged,
)

pytestmark = pytest.mark.integration

GIT_SERVER = VENV_BIN / "mcp-server-git"
REPLAYS = 5


def _git(*args: str | Path) -> None:
    subprocess.run(["git", *map(str, args)], check=True, capture_output=True, timeout=30)


@pytest.mark.skipif(not GIT_SERVER.exists(), reason="mcp-server-git is not installed in the venv")
def test_a_commit_hash_minted_by_mcp_server_git_is_threaded_with_one_start_per_replay(tmp_path: Path) -> None:
    seed, repo, starts = tmp_path / "seed", tmp_path / "repo", tmp_path / "starts"
    _git("init", "-q", "-b", "main", seed)
    _git("-C", seed, "config", "user.name", "Ada")
    _git("-C", seed, "config", "user.email", "ada@example.org")
    (seed / "README").write_text("seed\n")
    _git("-C", seed, "add", "README")
    _git("-C", seed, "commit", "-q", "-m", "seed")
    (seed / "notes.txt").write_text("buy milk\n")
    restore = "sh -c " + shlex.quote(f"rm -rf {repo} && cp -a {seed} {repo}")
    subprocess.run(shlex.split(restore), check=True, timeout=30)
    server = "sh -c " + shlex.quote(f"echo start >> {starts}; exec {GIT_SERVER}")

    async def session(client: Client) -> dict[str, Any]:
        await client.list_tools()
        where = str(repo)
        await client.call_tool("git_add", {"repo_path": where, "files": ["notes.txt"]})
        done = await client.call_tool("git_commit", {"repo_path": where, "message": "add notes"})
        found = re.search(r"[0-9a-f]{40}", "".join(getattr(c, "text", "") for c in done.content))
        assert found, done
        shown = await client.call_tool("git_show", {"repo_path": where, "revision": found[0]})
        assert not shown.is_error, shown
        await client.call_tool("git_log", {"repo_path": where, "max_count": 5})
        return {"sha": found[0]}

    cassette = tmp_path / "git.jsonl"
    sha = record_through_proxy(server, cassette, session)["sha"]
    for n in range(REPLAYS):
        starts.unlink(missing_ok=True)
        run = run_cli(
            "replay", "--server", server, "--cassette", cassette, "--setup", restore, report=tmp_path / "r.json"
        )
        assert run.code == 0, run.describe()
        inters = run.interactions()
        assert all(i["status"] == "pass" and not i["noise"] for i in inters), run.describe()
        assert len(starts.read_text().splitlines()) == 1, (n, run.describe())
        by_name = {i["name"]: i for i in inters}
        for name in ("git_commit", "git_show"):
            [threaded] = by_name[name]["substitutions"]
            assert threaded["recorded"] == sha and re.fullmatch(r"[0-9a-f]{40}", threaded["live"]), by_name[name]


EVERYTHING = SERVERS / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
SDK1_PYTHON = SERVERS / ".venv-sdk1/bin/python"


@pytest.mark.skipif(not (EVERYTHING.exists() and SDK1_PYTHON.exists()), reason="server-everything or the 1.x SDK")
def test_a_task_id_minted_by_server_everything_is_threaded_with_one_start_per_replay(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    server = "sh -c " + shlex.quote(f"echo start >> {starts}; exec node {EVERYTHING} stdio")
    cassette = tmp_path / "everything.jsonl"
    record = [str(MCP_REPLAY), "record", "--server", server, "--cassette", str(cassette)]
    client = [str(SDK1_PYTHON), str(SERVERS / "tasks_client.py"), "--poll-ms", "500"]
    seen, strays = run_tagged(
        [*client, "--tool", "simulate-research-query", "--echo-key", "message", "--", *record], 90
    )
    assert seen.returncode == 0 and not strays, seen.stderr[-3000:]
    # The whole session reached the cassette, though the client killed the proxy on its way out.
    methods = [line["message"].get("method") for line in cassette_lines(cassette)[1:] if line["kind"] == "request"]
    assert methods[-2:] == ["tasks/result", "tools/call"], methods
    for n in range(REPLAYS):
        starts.unlink(missing_ok=True)
        run = run_cli("replay", "--server", server, "--cassette", cassette, report=tmp_path / "r.json")
        assert run.code == 0, run.describe()
        inters = run.interactions()
        assert all(i["status"] == "pass" and not i["noise"] for i in inters), run.describe()
        assert len(starts.read_text().splitlines()) == 1, (n, run.describe())
        quoting = [i for i in inters if i["method"] in ("tasks/get", "tasks/result")]
        assert quoting and all(len(i["substitutions"]) == 1 for i in quoting), run.describe()
