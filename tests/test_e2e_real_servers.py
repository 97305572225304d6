"""End to end, through the real CLI, against real MCP servers.

Each real server is recorded once per module: the official ``mcp`` SDK (2.3.0) is the client, and
it launches ``mcp-replay record --server CMD --cassette FILE`` as if that were the server. Each
cassette is then replayed three times against the unchanged server with no comparison options and
must come back clean (grade A, no findings, exit 0 with the strictest gate). Drifted builds of the
FastMCP test server, the bundled regressed sample, a crashing, a hanging and a missing server, and
malformed cassettes must each be caught and reported the way the CLI promises.

Nothing here is marked slow: it all runs in CI, every wait is bounded (pytest-timeout plus a
timeout on every subprocess), and every server is stopped by the tool under test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import (
    FAST_SERVER,
    NODE_BIN,
    PYTHON,
    REPO,
    VENV_BIN,
    CliRun,
    accept_elicitation,
    cassette_lines,
    command,
    ignore_progress,
    passed,
    python_server,
    record_through_proxy,
    replay,
    requests,
    roots_for,
    run_cli,
    tool_call,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

META_VERSION = "io.modelcontextprotocol/protocolVersion"
STATELESS = "2026-07-28"
REPLAYS = 3

EVERYTHING = NODE_BIN / "mcp-server-everything"
MEMORY = NODE_BIN / "mcp-server-memory"
FILESYSTEM = NODE_BIN / "mcp-server-filesystem"
TIME = VENV_BIN / "mcp-server-time"

# tests/run.sh installs the npm servers; only a bare local checkout may lack them. In CI a missing
# server must fail the run, never skip it quietly.
needs_node = pytest.mark.skipif(
    not os.environ.get("CI") and (not EVERYTHING.exists() or shutil.which("node") is None),
    reason="npm test servers not installed (run: tests/run.sh, or npm ci in tests/servers)",
)


def assert_clean(run: CliRun) -> None:
    """Exit 0 under ``--fail-on-regression --min-grade A``, grade A, not one finding."""
    assert run.code == 0, run.describe()
    assert run.report is not None, run.describe()
    assert run.report["grade"] == "A", run.describe()
    assert run.report["failed"] == 0 and run.report["missing"] == 0, run.describe()
    assert run.findings() == [], run.describe()
    assert re.search(r"GRADE A\b", run.stdout), run.describe()
    assert all(passed(i) for i in run.interactions()), run.describe()


def finding_kinds(run: CliRun) -> set[str]:
    return {f["kind"] for f in run.findings()}


def result_of(run: CliRun, tool: str) -> list[dict[str, Any]]:
    """The report's interactions for ``tools/call`` of one tool."""
    return [i for i in run.interactions() if i["method"] == "tools/call" and i["name"] == tool]


# ---------------------------------------------------------------------------------------------
# Recording scripts: what a user's client does in one session
# ---------------------------------------------------------------------------------------------


async def fast_session(client: Client) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    await client.list_tools()
    await client.list_resources()
    await client.list_prompts()
    assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
    await client.call_tool("greet", {"name": "Ada"})
    await client.call_tool("now", {})
    await client.call_tool("stamp", {"label": "build"})
    created = await client.call_tool("create_task", {"title": "write e2e tests"})
    assert created.structured_content is not None
    task_id = created.structured_content["id"]
    seen["task_id"] = task_id
    got = await client.call_tool("get_task", {"task_id": task_id})
    assert not got.is_error, got
    exported = await client.call_tool("export_task", {"task_id": task_id})
    assert not exported.is_error, exported
    counted = await client.call_tool("count", {"n": 3}, progress_callback=ignore_progress)
    assert not counted.is_error, counted
    deleted = await client.call_tool("delete_task", {"task_id": task_id})
    assert not deleted.is_error and f"deleted {task_id}" in str(deleted.content), deleted
    gone = await client.call_tool("get_task", {"task_id": task_id})
    assert gone.is_error, gone  # an error recorded as an error: error parity, not a finding
    await client.read_resource("notes://readme")
    await client.read_resource("notes://today")
    await client.get_prompt("plan", {"goal": "ship"})
    return seen


async def everything_session(client: Client) -> dict[str, Any]:
    tools = {t.name for t in (await client.list_tools()).tools}
    await client.list_resources()
    await client.list_resource_templates()
    await client.list_prompts()
    await client.call_tool("echo", {"message": "hello through the proxy"})
    total = await client.call_tool("get-sum", {"a": 2, "b": 40})
    assert "42" in str(total.content), total
    image = await client.call_tool("get-tiny-image", {})
    assert any(getattr(c, "type", "") == "image" for c in image.content), image
    await client.call_tool("get-structured-content", {"location": "Chicago"})
    await client.call_tool("get-annotated-message", {"messageType": "success", "includeImage": True})
    await client.call_tool("get-resource-links", {"count": 2})
    await client.call_tool("get-resource-reference", {"resourceType": "Blob", "resourceId": 2})
    # Progress notifications arrive before this result.
    await client.call_tool(
        "trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=ignore_progress
    )
    if "trigger-elicitation-request" in tools:  # a server-to-client elicitation/create mid-call
        await client.call_tool("trigger-elicitation-request", {})
    if "get-roots-list" in tools:  # a server-to-client roots/list mid-call
        await client.call_tool("get-roots-list", {})
    await client.read_resource("demo://resource/static/document/architecture.md")
    await client.read_resource("demo://resource/dynamic/text/1")  # a clock time in the text
    await client.read_resource("demo://resource/dynamic/blob/2")  # base64 of text with a clock time
    await client.get_prompt("simple-prompt")
    await client.get_prompt("args-prompt", {"city": "Paris", "state": "Ile-de-France"})
    return {"tools": sorted(tools)}


async def memory_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    entities = [
        {"entityType": "person", "name": "Ada", "observations": ["wrote the first program"]},
        {"entityType": "machine", "name": "Analytical Engine", "observations": ["never finished"]},
    ]
    created = await client.call_tool("create_entities", {"entities": entities})
    assert not created.is_error, created
    relation = {"from": "Ada", "to": "Analytical Engine", "relationType": "programmed"}
    await client.call_tool("create_relations", {"relations": [relation]})
    await client.call_tool("add_observations", {"observations": [{"entityName": "Ada", "contents": ["born 1815"]}]})
    graph = await client.call_tool("read_graph", {})
    assert "Analytical Engine" in str(graph.content), graph
    await client.call_tool("search_nodes", {"query": "Ada"})
    await client.call_tool("open_nodes", {"names": ["Analytical Engine"]})
    return {}


def filesystem_session(root: Path) -> Any:
    async def session(client: Client) -> dict[str, Any]:
        await client.list_tools()
        notes = str(root / "notes.txt")
        await client.call_tool("list_allowed_directories", {})
        wrote = await client.call_tool("write_file", {"path": notes, "content": "first line\nsecond line\n"})
        assert not wrote.is_error, wrote
        read = await client.call_tool("read_text_file", {"path": notes})
        assert "second line" in str(read.content), read
        await client.call_tool("create_directory", {"path": str(root / "sub")})
        await client.call_tool("list_directory", {"path": str(root)})
        await client.call_tool("get_file_info", {"path": notes})  # created/modified/accessed times
        await client.call_tool(
            "edit_file",
            {"path": notes, "edits": [{"oldText": "first line", "newText": "1st line"}], "dryRun": True},
        )
        await client.call_tool("search_files", {"path": str(root), "pattern": "*.txt"})
        missing = await client.call_tool("read_text_file", {"path": str(root / "absent.txt")})
        assert missing.is_error, missing
        return {}

    return session


async def time_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    utc = await client.call_tool("get_current_time", {"timezone": "UTC"})
    assert not utc.is_error, utc
    await client.call_tool("get_current_time", {"timezone": "Asia/Tokyo"})
    await client.call_tool(
        "convert_time", {"source_timezone": "America/New_York", "time": "14:30", "target_timezone": "Asia/Tokyo"}
    )
    bad = await client.call_tool("get_current_time", {"timezone": "Mars/Olympus_Mons"})
    assert bad.is_error, bad
    return {}


async def calc_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.call_tool("add", {"a": 2, "b": 3})
    await client.call_tool("echo", {"message": "hello"})
    await client.call_tool("now", {})
    job = await client.call_tool("start_job", {"size": 3})
    assert job.structured_content is not None
    status = await client.call_tool("job_status", {"jobId": job.structured_content["jobId"]})
    assert not status.is_error, status
    await client.read_resource("memo://readme")
    return {}


# ---------------------------------------------------------------------------------------------
# Recordings, once per module
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


FAST = python_server(FAST_SERVER)


@pytest.fixture(scope="module")
def fast_modern(workdir: Path) -> tuple[Path, dict[str, Any]]:
    """The FastMCP server recorded in the stateless 2026-07-28 era (what the 2.x SDK negotiates)."""
    cassette = workdir / "fast-modern.jsonl"
    seen = record_through_proxy(FAST, cassette, fast_session, elicitation=accept_elicitation)
    assert seen["protocol_version"] == STATELESS
    return cassette, seen


@pytest.fixture(scope="module")
def fast_legacy(workdir: Path) -> tuple[Path, dict[str, Any]]:
    """The same server recorded in the handshake era (the SDK forced to ``initialize``)."""
    cassette = workdir / "fast-legacy.jsonl"
    seen = record_through_proxy(FAST, cassette, fast_session, mode="legacy", elicitation=accept_elicitation)
    assert seen["protocol_version"] == "2025-11-25"
    return cassette, seen


@pytest.fixture(scope="module")
def everything(workdir: Path) -> Path:
    cassette = workdir / "everything.jsonl"
    record_through_proxy(
        command(EVERYTHING, "stdio"),
        cassette,
        everything_session,
        elicitation=accept_elicitation,
        roots=roots_for(workdir),
        # Opted in to log messages as a user who wants them is: the server logs from background
        # work (its roots sync after the handshake), compared over the session (replay/heard.py).
        log_level="debug",
    )
    return cassette


@pytest.fixture(scope="module")
def memory(workdir: Path) -> Path:
    cassette = workdir / "memory.jsonl"
    store = workdir / "memory-record" / "memory.jsonl"
    store.parent.mkdir()
    record_through_proxy(command(MEMORY), cassette, memory_session, proxy_args=["--env", f"MEMORY_FILE_PATH={store}"])
    assert store.exists(), "the memory server did not get MEMORY_FILE_PATH through --env"
    return cassette


@pytest.fixture(scope="module")
def fs_root(workdir: Path) -> Path:
    root = workdir / "fs-root"
    root.mkdir()
    return root.resolve()


@pytest.fixture(scope="module")
def filesystem(workdir: Path, fs_root: Path) -> Path:
    cassette = workdir / "filesystem.jsonl"
    record_through_proxy(command(FILESYSTEM, fs_root), cassette, filesystem_session(fs_root), roots=roots_for(fs_root))
    return cassette


@pytest.fixture(scope="module")
def time_server(workdir: Path) -> Path:
    cassette = workdir / "time.jsonl"
    seen = record_through_proxy(command(TIME, "--local-timezone", "UTC"), cassette, time_session)
    # mcp-server-time is built on the 2.x SDK too: a second server recorded in the stateless era.
    assert seen["protocol_version"] == STATELESS
    return cassette


CALC = command(PYTHON, "-m", "mcp_replay_action.samples.calc_server")
CALC_REGRESSED = command(PYTHON, "-m", "mcp_replay_action.samples.calc_server_regressed")


@pytest.fixture(scope="module")
def calc(workdir: Path) -> Path:
    cassette = workdir / "calc.jsonl"
    record_through_proxy(CALC, cassette, calc_session, mode="legacy")
    return cassette


# ---------------------------------------------------------------------------------------------
# Recorded through the proxy, replayed clean three times with no options
# ---------------------------------------------------------------------------------------------


def replay_clean_three_times(server: str, cassette: Path, workdir: Path, *extra: str) -> None:
    for attempt in range(REPLAYS):
        run = replay(server, cassette, *extra, report=workdir / f"{cassette.stem}-replay-{attempt}.json")
        assert_clean(run)


def test_fast_server_stateless_era_replays_clean(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    replay_clean_three_times(FAST, cassette, workdir)


def test_fast_server_handshake_era_replays_clean(fast_legacy: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_legacy
    replay_clean_three_times(FAST, cassette, workdir)


@needs_node
def test_everything_server_replays_clean(everything: Path, workdir: Path) -> None:
    replay_clean_three_times(command(EVERYTHING, "stdio"), everything, workdir)


@needs_node
def test_memory_server_replays_clean(memory: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        # Each replay gets the fresh store the recording started from, as a CI job would.
        store = workdir / f"memory-replay-{attempt}" / "memory.jsonl"
        store.parent.mkdir()
        run = replay(
            command(MEMORY),
            memory,
            "--env",
            f"MEMORY_FILE_PATH={store}",
            report=workdir / f"memory-replay-{attempt}.json",
        )
        assert_clean(run)
        assert store.exists()


@needs_node
def test_filesystem_server_replays_clean(filesystem: Path, fs_root: Path, workdir: Path) -> None:
    replay_clean_three_times(command(FILESYSTEM, fs_root), filesystem, workdir)


def test_time_server_replays_clean(time_server: Path, workdir: Path) -> None:
    replay_clean_three_times(command(TIME, "--local-timezone", "UTC"), time_server, workdir)


# ---------------------------------------------------------------------------------------------
# What the cassettes hold: both eras, the values replay has to cope with
# ---------------------------------------------------------------------------------------------


def test_stateless_cassette_has_discover_and_per_request_meta(fast_modern: tuple[Path, dict[str, Any]]) -> None:
    cassette, _ = fast_modern
    methods = [r["message"]["method"] for r in requests(cassette)]
    assert "server/discover" in methods, methods
    assert "initialize" not in methods, methods
    calls = requests(cassette, "tools/call")
    assert calls
    for entry in calls:
        meta = entry["message"]["params"].get("_meta") or {}
        assert meta.get(META_VERSION) == STATELESS, entry
        assert entry["response"]["result"].get("resultType") in ("complete", "input_required"), entry
    # The multi round-trip: input_required with an opaque requestState, then the retry carrying it.
    deletes = tool_call(cassette, "delete_task")
    assert [d["response"]["result"]["resultType"] for d in deletes] == ["input_required", "complete"], deletes
    state = deletes[0]["response"]["result"]["requestState"]
    assert deletes[1]["message"]["params"]["requestState"] == state


def test_handshake_cassette_has_initialize_and_server_request(fast_legacy: tuple[Path, dict[str, Any]]) -> None:
    cassette, _ = fast_legacy
    header, *lines = cassette_lines(cassette)
    assert header["meta"].get("protocol_version") in (None, "2025-11-25"), header
    methods = [r["message"]["method"] for r in requests(cassette)]
    assert methods[0] == "initialize", methods
    assert lines[0]["message"]["params"]["protocolVersion"] == "2025-11-25"
    assert any(e["kind"] == "notification" and e["message"]["method"] == "notifications/initialized" for e in lines)
    # Before 2026-07-28 the confirmation is a server-to-client elicitation/create mid-call.
    asked = [e for e in lines if e.get("kind") == "server-request"]
    assert [e["message"]["method"] for e in asked] == ["elicitation/create"], asked
    assert asked[0]["response"]["result"]["action"] == "accept"
    # Progress notifications from the server were recorded before the count result.
    assert any(
        e.get("kind") == "server-notification" and e["message"]["method"] == "notifications/progress" for e in lines
    )


def test_time_server_cassette_is_stateless(time_server: Path) -> None:
    methods = [r["message"]["method"] for r in requests(time_server)]
    assert methods[0] == "server/discover" and "initialize" not in methods, methods
    assert all(
        (r["message"]["params"].get("_meta") or {}).get(META_VERSION) == STATELESS
        for r in requests(time_server, "tools/call")
    )


@needs_node
def test_everything_cassette_holds_server_requests_and_progress(everything: Path) -> None:
    """What replay must answer from the cassette (roots, elicitation) and keep apart from the
    responses it awaits (progress notifications) was really recorded."""
    header, *lines = cassette_lines(everything)
    asked = {e["message"]["method"] for e in lines if e["kind"] == "server-request"}
    assert {"roots/list", "elicitation/create"} <= asked, asked
    told = [e["message"]["method"] for e in lines if e["kind"] == "server-notification"]
    assert told.count("notifications/progress") == 2, told
    dynamic = [r for r in requests(everything, "resources/read") if "dynamic" in r["message"]["params"]["uri"]]
    assert [bool(r["response"]["result"]["contents"][0].get("blob")) for r in dynamic] == [False, True]


def test_minted_task_id_is_recorded_in_later_calls(fast_modern: tuple[Path, dict[str, Any]]) -> None:
    cassette, seen = fast_modern
    task_id = seen["task_id"]
    assert tool_call(cassette, "create_task")[0]["response"]["result"]["structuredContent"]["id"] == task_id
    for tool in ("get_task", "export_task", "delete_task"):
        assert all(c["message"]["params"]["arguments"]["task_id"] == task_id for c in tool_call(cassette, tool)), tool


def test_chained_calls_replay_only_with_the_live_id(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    """The live server never saw the recorded id: get_task/export_task/delete_task pass only
    because replay sent the id the live create_task minted."""
    cassette, seen = fast_modern
    run = replay(FAST, cassette, report=workdir / "chain.json")
    assert_clean(run)
    # Found, then (after the delete) not found: both as recorded, so both pass.
    recorded = [c["response"]["result"].get("isError", False) for c in tool_call(cassette, "get_task")]
    assert recorded == [False, True], recorded
    assert [g["status"] for g in result_of(run, "get_task")] == ["pass", "pass"]
    assert [d["status"] for d in result_of(run, "delete_task")] == ["pass", "pass"]
    # Every substitution is in the report: recorded id -> the id the live server minted.
    threaded = {s["recorded"] for g in result_of(run, "get_task") for s in g["substitutions"]}
    assert threaded == {seen["task_id"]}, run.describe()
    assert all(s["live"] != seen["task_id"] for g in result_of(run, "get_task") for s in g["substitutions"])


def test_unthreaded_id_is_caught(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    """Negative control for the chain: with the link between create_task's answer and the later
    calls broken in the cassette, the recorded id reaches the live server, which never minted it."""
    cassette, seen = fast_modern
    decoy = "00000000-0000-4000-8000-000000000000"
    broken = workdir / "fast-modern-unthreaded.jsonl"
    lines = cassette.read_text("utf-8").splitlines()
    for number, text in enumerate(lines):
        entry = json.loads(text)
        if entry.get("kind") == "request" and entry["message"].get("params", {}).get("name") == "create_task":
            lines[number] = text.replace(seen["task_id"], decoy)
    broken.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = replay(FAST, broken, report=workdir / "unthreaded.json")
    assert run.code == 1, run.describe()
    first_get = result_of(run, "get_task")[0]
    assert first_get["kind"] == "error-status-change", run.describe()


def test_recording_is_redacted_but_content_is_not(everything: Path) -> None:
    header = cassette_lines(everything)[0]
    assert header["schema"] == "mcp-replay/cassette@1"
    assert header["meta"].get("redaction"), header  # the rules that ran are in the header
    image = tool_call(everything, "get-tiny-image")[0]["response"]["result"]["content"]
    data = next(c["data"] for c in image if c["type"] == "image")
    assert len(data) > 100 and "REDACTED" not in data.upper()  # base64 content is content


# ---------------------------------------------------------------------------------------------
# Real changes, caught and classified
# ---------------------------------------------------------------------------------------------


def variant(name: str) -> tuple[str, ...]:
    return ("--env", f"FAST_SERVER_VARIANT={name}")


def test_changed_tool_result_is_a_value_change(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    run = replay(FAST, cassette, *variant("value"), report=workdir / "value.json")
    assert run.code == 1, run.describe()
    findings = run.findings()
    assert findings and {(f["name"], f["kind"]) for f in findings} == {("add", "value-change")}, run.describe()
    assert run.report is not None and run.report["score"] < 100
    assert "[FAIL]" in run.stdout and "add" in run.stdout, run.describe()


def test_added_key_is_an_additive_structure_change(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    run = replay(FAST, cassette, *variant("added-key"), report=workdir / "added-key.json")
    assert run.code == 1, run.describe()
    findings = run.findings()
    assert findings and all(f["name"] == "get_task" for f in findings), run.describe()
    assert {f["kind"] for f in findings} == {"structure-change"}, run.describe()
    assert {f["class"] for f in findings} == {"additive"}, run.describe()
    assert any("priority" in f["path"] or "priority" in json.dumps(f["after"]) for f in findings), run.describe()


def test_removed_tool_is_one_finding_naming_it(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    run = replay(FAST, cassette, *variant("remove-tool"), report=workdir / "remove-tool.json")
    assert run.code == 1, run.describe()
    findings = run.findings()
    assert len(findings) == 1, run.describe()  # not a cascade of index-shifted diffs
    (finding,) = findings
    assert finding["method"] == "tools/list"
    assert finding["class"] == "breaking"
    assert "legacy_sum" in finding["path"] + finding["message"], finding


def test_error_flip_is_an_error_status_change(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    run = replay(FAST, cassette, *variant("error-flip"), report=workdir / "error-flip.json")
    assert run.code == 1, run.describe()
    (greet,) = result_of(run, "greet")
    assert greet["status"] == "fail" and greet["kind"] == "error-status-change", greet
    assert greet["class"] == "breaking"
    others = [f for f in run.findings() if f["name"] != "greet"]
    assert others == [], run.describe()


def test_error_flip_costs_error_parity(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    run = replay(FAST, cassette, *variant("error-flip"), report=workdir / "error-flip-parity.json")
    (greet,) = result_of(run, "greet")
    assert (greet["recorded_error"], greet["live_error"]) == (False, True), greet
    assert run.report is not None
    assert run.report["dimensions"]["error_parity"] < 1.0, run.report["dimensions"]


@pytest.mark.parametrize("era", ["fast_modern", "fast_legacy"])
def test_crash_mid_session_is_missing_capped_at_d(era: str, request: pytest.FixtureRequest, workdir: Path) -> None:
    cassette, _ = request.getfixturevalue(era)
    run = replay(FAST, cassette, *variant("crash-on-get"), report=workdir / f"crash-{era}.json")
    assert run.code == 1, run.describe()
    assert run.report is not None
    assert run.report["capped"] is True and run.report["grade"] in ("D", "F"), run.describe()
    first_get = result_of(run, "get_task")[0]
    assert first_get["status"] == "missing" and first_get["kind"] == "missing-response", first_get
    assert "task store corrupted" in first_get["findings"][0]["message"], first_get
    assert "task store corrupted" in run.report["cassettes"][0]["stderr_tail"]
    # Everything recorded before the crash still passed.
    before = [i for i in run.interactions() if i["seq"] < first_get["seq"]]
    assert before and all(passed(i) for i in before), run.describe()
    assert "missing-response" in run.stdout, run.describe()


def test_hanging_server_ends_within_its_timeout(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    # subprocess timeout well above what --timeout allows: the tool must stop by itself.
    run = replay(FAST, cassette, *variant("hang-on-get"), "--timeout", "2", report=workdir / "hang.json", timeout=90)
    assert run.code == 1, run.describe()
    first_get = result_of(run, "get_task")[0]
    assert first_get["status"] == "missing", first_get
    after = [i for i in run.interactions() if i["seq"] > first_get["seq"]]
    assert after and all(i["status"] in ("missing", "skipped") for i in after), run.describe()
    assert run.report is not None and run.report["capped"] is True


def test_regressed_sample_is_caught_with_identical_tools_list(calc: Path, workdir: Path) -> None:
    healthy = replay(CALC, calc, report=workdir / "calc-healthy.json")
    assert_clean(healthy)
    run = replay(CALC_REGRESSED, calc, report=workdir / "calc-regressed.json")
    assert run.code == 1, run.describe()
    kinds = finding_kinds(run)
    assert {"value-change", "structure-change"} <= kinds, run.describe()
    (tools_list,) = [i for i in run.interactions() if i["method"] == "tools/list"]
    assert tools_list["status"] == "pass" and tools_list["findings"] == [], tools_list
    assert {(i["name"], i["kind"]) for i in run.interactions() if i["status"] != "pass"} == {
        ("add", "value-change"),
        ("echo", "structure-change"),
    }, run.describe()


def raw_tools_list(module: str) -> bytes:
    """The bytes a sample server writes for ``tools/list``, over a plain pipe."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    proc = subprocess.run(
        [PYTHON, "-m", module],
        input="".join(json.dumps(m) + "\n" for m in lines).encode(),
        capture_output=True,
        timeout=30,
        check=True,
    )
    (answer,) = [line for line in proc.stdout.splitlines() if json.loads(line).get("id") == 2]
    return answer


def test_sample_twins_tools_list_is_byte_identical() -> None:
    """So a schema diff sees nothing: only replaying behaviour catches the regressed twin."""
    healthy = raw_tools_list("mcp_replay_action.samples.calc_server")
    assert b'"add"' in healthy
    assert raw_tools_list("mcp_replay_action.samples.calc_server_regressed") == healthy


# ---------------------------------------------------------------------------------------------
# Infrastructure and input errors: exit codes and one-line messages
# ---------------------------------------------------------------------------------------------


def assert_one_line_error(run: CliRun, code: int) -> str:
    assert run.code == code, run.describe()
    assert "Traceback" not in run.stderr + run.stdout, run.describe()
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.describe()
    return lines[0]


def test_missing_server_binary_exits_3(fast_modern: tuple[Path, dict[str, Any]], workdir: Path) -> None:
    cassette, _ = fast_modern
    missing = workdir / "no-such-dir" / "no-such-server"
    run = replay(str(missing), cassette, report=workdir / "missing-binary.json")
    line = assert_one_line_error(run, 3)
    assert "no-such-server" in line, line


def test_record_with_missing_server_binary_exits_3(workdir: Path) -> None:
    run = run_cli("record", "--server", "definitely-not-an-mcp-server-xyz", "--cassette", workdir / "never.jsonl")
    line = assert_one_line_error(run, 3)
    assert "definitely-not-an-mcp-server-xyz" in line, line
    assert not (workdir / "never.jsonl").exists()


HEADER = '{"schema": "mcp-replay/cassette@1", "meta": {}}'
GOOD_REQUEST = (
    '{"seq": 0, "kind": "request", "ts": 0, "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, '
    '"response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}}'
)
MALFORMED: dict[str, tuple[str, int]] = {
    "bad-json": (f'{HEADER}\n{GOOD_REQUEST}\n{{"seq": 1, "kind": \n', 3),
    "unknown-schema": ('{"schema": "mcp-replay/cassette@99", "meta": {}}\n' + GOOD_REQUEST + "\n", 1),
    "no-header": (GOOD_REQUEST + "\n", 1),
    "missing-field": (HEADER + '\n{"seq": 0, "kind": "request", "ts": 0}\n', 2),
    "unknown-kind": (HEADER + "\n" + GOOD_REQUEST.replace('"request"', '"telepathy"') + "\n", 2),
    "request-without-response": (
        HEADER + '\n{"seq": 0, "kind": "request", "ts": 0, "message": {"jsonrpc": "2.0", "id": 1, "method": "x"}}\n',
        2,
    ),
    "not-an-object": (HEADER + "\n" + GOOD_REQUEST + "\n[1, 2, 3]\n", 3),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_cassette_exits_2_naming_file_and_line(case: str, workdir: Path) -> None:
    text, line_no = MALFORMED[case]
    path = workdir / f"malformed-{case}.jsonl"
    path.write_text(text, encoding="utf-8")
    # The server is never started for a bad cassette, so a real one costs nothing here.
    run = replay(FAST, path, report=workdir / f"malformed-{case}.json")
    line = assert_one_line_error(run, 2)
    assert f"{path}:{line_no}" in line, line


def test_empty_and_absent_cassettes_exit_2(workdir: Path) -> None:
    empty = workdir / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    for path in (empty, workdir / "absent.jsonl"):
        run = replay(FAST, path, report=workdir / "empty.json")
        line = assert_one_line_error(run, 2)
        assert str(path) in line, line


# ---------------------------------------------------------------------------------------------
# The demo
# ---------------------------------------------------------------------------------------------


def test_demo_shows_grade_a_then_the_regressions() -> None:
    run = run_cli("demo")
    assert run.code == 0, run.describe()
    out = run.stdout
    assert re.search(r"GRADE A\b", out), run.describe()
    assert "value-change" in out and "structure-change" in out, run.describe()
    # The healthy build is graded A before the regressed twin's findings are shown.
    assert out.index("GRADE A") < out.index("value-change"), run.describe()
    # The README shows this output: each of its lines is the demo's (the breaking change reads
    # [FAIL], the additive one [DIFF]).
    readme = (REPO / "README.md").read_text("utf-8")
    block = readme.split("## 30-second demo", 1)[1].split("```", 2)[1]
    shown = [ln for ln in block.splitlines()[1:] if ln.strip() and ln.strip() != "..."]
    assert "  [DIFF] #4 tools/call echo  additive structure-change" in shown
    assert [ln for ln in shown if ln not in out.splitlines()] == [], run.describe()
