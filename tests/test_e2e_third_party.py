"""Third-party MCP servers nobody here wrote, with volatile output, recorded with the official SDK.

* ``mcp-server-sqlite`` (PyPI): rows with ``CURRENT_TIMESTAMP`` defaults and ``datetime('now')``
  printed through Python ``repr`` of a list of dicts, a stored historical date, an insights memo.
* ``mcp-server-duckdb`` (PyPI): ``now()`` printed as ``datetime.datetime(2026, 11, 30, ...,
  tzinfo=zoneinfo.ZoneInfo(...))``, epoch milliseconds, a stored historical date.
* ``mcp-server-git`` (PyPI): a repository made here (commits dated now, a staged and an unstaged
  change), read through status, log, diffs, show and branch.

Each is recorded once per module through ``mcp-replay record`` with the ``mcp`` SDK as the client,
then replayed three times against a fresh start with no options at all: not one finding. A real
change in the same answers (a changed historical date, a changed row) is still caught.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, VENV_BIN, command, passed, record_through_proxy, replay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPLAYS = 3
SDK1_BIN = SERVERS / ".venv-sdk1" / "bin"  # tests/run.sh: servers still on the 1.x SDK
SQLITE = SDK1_BIN / "mcp-server-sqlite"
DUCKDB = SDK1_BIN / "mcp-server-duckdb"
GIT = VENV_BIN / "mcp-server-git"
HISTORICAL = "2024-03-01"  # a stored row's date: data, more than a year from any run


def _ok(result: Any) -> Any:
    assert not result.is_error, result
    assert "error" not in str(result.content).lower(), result  # these servers report SQL errors as text
    return result


async def sqlite_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.list_resources()
    _ok(
        await client.call_tool(
            "create_table",
            {
                "query": "CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT, due TEXT,"
                " created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
            },
        )
    )
    _ok(
        await client.call_tool(
            "write_query",
            {"query": f"INSERT INTO events (title, due) VALUES ('launch', '{HISTORICAL}'), ('retro', '2024-04-15')"},
        )
    )
    _ok(await client.call_tool("read_query", {"query": "SELECT id, title, due, created_at FROM events ORDER BY id"}))
    _ok(
        await client.call_tool(
            "read_query",
            {"query": "SELECT datetime('now') AS now, CAST(strftime('%s','now') AS INTEGER) AS epoch, 42 AS answer"},
        )
    )
    _ok(await client.call_tool("list_tables", {}))
    _ok(await client.call_tool("describe_table", {"table_name": "events"}))
    _ok(await client.call_tool("append_insight", {"insight": "launch is the oldest event"}))
    await client.read_resource("memo://insights")
    return {}


async def duckdb_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    _ok(await client.call_tool("query", {"query": "CREATE TABLE runs (name VARCHAR, due DATE, ran_at TIMESTAMP)"}))
    _ok(
        await client.call_tool(
            "query", {"query": f"INSERT INTO runs VALUES ('nightly', DATE '{HISTORICAL}', now()::TIMESTAMP)"}
        )
    )
    _ok(await client.call_tool("query", {"query": "SELECT name, due, ran_at FROM runs"}))
    _ok(await client.call_tool("query", {"query": "SELECT now() AS ran_at, current_date AS today"}))
    _ok(await client.call_tool("query", {"query": "SELECT count(*) AS n, 'ok' AS status FROM runs"}))
    return {}


def git_session(repo: Path) -> Any:
    async def session(client: Client) -> dict[str, Any]:
        await client.list_tools()
        path = {"repo_path": str(repo)}
        _ok(await client.call_tool("git_status", path))
        _ok(await client.call_tool("git_log", {**path, "max_count": 5}))
        _ok(await client.call_tool("git_diff_unstaged", path))
        _ok(await client.call_tool("git_diff_staged", path))
        _ok(await client.call_tool("git_show", {**path, "revision": "HEAD"}))
        _ok(await client.call_tool("git_branch", {**path, "branch_type": "local"}))
        return {}

    return session


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        timeout=30,
    )


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("third-party")


@pytest.fixture(scope="module")
def repo(workdir: Path) -> Path:
    """A fixed repository: two commits dated now, one staged and one unstaged change."""
    root = workdir / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    _git(root, "add", "README.md")
    _git(root, "commit", "-q", "-m", "first commit")
    (root / "notes.txt").write_text("one\ntwo\n", encoding="utf-8")
    _git(root, "add", "notes.txt")
    _git(root, "commit", "-q", "-m", "add notes")
    (root / "notes.txt").write_text("one\ntwo\nthree\n", encoding="utf-8")
    (root / "staged.txt").write_text("staged\n", encoding="utf-8")
    _git(root, "add", "staged.txt")
    return root.resolve()


def sqlite_server(db: Path) -> str:
    return command(SQLITE, "--db-path", db)


def duckdb_server(db: Path) -> str:
    return command(DUCKDB, "--db-path", db)


@pytest.fixture(scope="module")
def sqlite_cassette(workdir: Path) -> Path:
    cassette = workdir / "sqlite.jsonl"
    record_through_proxy(sqlite_server(workdir / "record.sqlite"), cassette, sqlite_session)
    return cassette


@pytest.fixture(scope="module")
def duckdb_cassette(workdir: Path) -> Path:
    cassette = workdir / "duckdb.jsonl"
    record_through_proxy(duckdb_server(workdir / "record.duckdb"), cassette, duckdb_session)
    return cassette


@pytest.fixture(scope="module")
def git_cassette(workdir: Path, repo: Path) -> Path:
    cassette = workdir / "git.jsonl"
    record_through_proxy(command(GIT, "--repository", repo), cassette, git_session(repo))
    return cassette


def _assert_no_findings(run: Any) -> None:
    assert run.report is not None, run.describe()
    assert run.findings() == [], run.describe()
    assert all(passed(i) for i in run.interactions()), run.describe()
    assert run.code == 0, run.describe()


def test_sqlite_server_replays_clean_three_times(sqlite_cassette: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        db = workdir / f"replay-{attempt}.sqlite"  # each replay starts from an empty database
        run = replay(sqlite_server(db), sqlite_cassette, report=workdir / f"sqlite-{attempt}.json", gate=False)
        _assert_no_findings(run)


def test_duckdb_server_replays_clean_three_times(duckdb_cassette: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        db = workdir / f"replay-{attempt}.duckdb"
        run = replay(duckdb_server(db), duckdb_cassette, report=workdir / f"duckdb-{attempt}.json", gate=False)
        _assert_no_findings(run)


def test_git_server_replays_clean_three_times(git_cassette: Path, repo: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        run = replay(
            command(GIT, "--repository", repo), git_cassette, report=workdir / f"git-{attempt}.json", gate=False
        )
        _assert_no_findings(run)


def _tampered(cassette: Path, old: str, new: str, into: Path) -> Path:
    """The cassette with ``old`` replaced by ``new`` in recorded responses only (a 'previous build')."""
    lines = []
    for text in cassette.read_text("utf-8").splitlines():
        entry = json.loads(text)
        if entry.get("response") is not None and old in json.dumps(entry["response"]):
            entry["response"] = json.loads(json.dumps(entry["response"]).replace(old, new))
        lines.append(json.dumps(entry))
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


@pytest.mark.parametrize(
    ("server", "old", "new"),
    [
        ("sqlite", HISTORICAL, "2024-03-02"),  # a stored date is data, not a clock
        ("sqlite", "'launch'", "'lunch'"),
        ("duckdb", "datetime.date(2024, 3, 1)", "datetime.date(2024, 3, 2)"),
        ("duckdb", "'nightly'", "'weekly'"),
    ],
)
def test_a_real_change_in_volatile_answers_is_caught(
    server: str, old: str, new: str, sqlite_cassette: Path, duckdb_cassette: Path, workdir: Path
) -> None:
    cassette = sqlite_cassette if server == "sqlite" else duckdb_cassette
    marker = len(list(workdir.glob("tampered-*")))
    tampered = _tampered(cassette, old, new, workdir / f"tampered-{marker}.jsonl")
    db = workdir / f"tampered-{marker}.{server}"
    target = sqlite_server(db) if server == "sqlite" else duckdb_server(db)
    run = replay(target, tampered, report=workdir / f"tampered-{marker}.json", gate=False)
    assert run.report is not None, run.describe()
    changed = [f for f in run.findings() if f["kind"] == "value-change"]
    assert changed, run.describe()


def test_a_stateless_cassette_against_a_handshake_only_server_is_one_era_message(workdir: Path) -> None:
    """The 2.x SDK records the stateless era (server/discover); mcp-server-sqlite (1.x SDK) speaks
    only the handshake era. One finding naming both eras, the rest skipped, not a cascade."""
    from test_noise import NOISY, noisy_session

    stateless = workdir / "stateless.jsonl"
    record_through_proxy(NOISY, stateless, noisy_session)
    run = replay(sqlite_server(workdir / "era.sqlite"), stateless, report=workdir / "era.json", gate=False)
    assert run.code == 1, run.describe()
    findings = run.findings()
    assert len(findings) == 1, run.describe()
    message = findings[0]["message"]
    assert "recorded in the stateless era" in message and "only the handshake era" in message, message
    assert [i["status"] for i in run.interactions()][1:] == ["skipped"] * (len(run.interactions()) - 1)
    assert "protocol era mismatch" in run.stdout, run.describe()
