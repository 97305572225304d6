"""End to end over Streamable HTTP, through the real CLI, against real MCP servers on 127.0.0.1.

``@modelcontextprotocol/server-everything`` (``streamableHttp``) and the SDK's ``MCPServer``
(FastMCP) task server are recorded through ``mcp-replay record --url ... --listen ...`` with the
official ``mcp`` SDK as the client, then replayed three times with ``mcp-replay replay --url``:
clean every time, including a tool whose answer streams progress notifications before its result.
Cassettes are transport-neutral: one recorded over HTTP replays over stdio and one recorded over
stdio replays over HTTP. Faults over HTTP (connection refused, 500, a stream that stops mid-answer,
a server that never answers) each end within their timeout with a classified result.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import (
    CliRun,
    accept_elicitation,
    cassette_lines,
    command,
    ignore_progress,
    python_server,
    record_through_proxy,
    replay,
    roots_for,
    run_cli,
)
from http_helpers import (
    EVERYTHING,
    FAKES,
    FAST_HTTP,
    FAST_STDIO,
    PYTHON,
    everything_env,
    everything_http,
    fast_http,
    free_port,
    record_via_cli,
    running,
    sdk_session,
)
from mcp_replay_action.record.http_proxy import RecordingProxy
from mcp_replay_action.transport.http_client import HttpTransport
from test_e2e_real_servers import assert_clean, everything_session, fast_session

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPLAYS = 3
STATELESS = "2026-07-28"
GATE = ("--fail-on-regression", "--min-grade", "A")

needs_node = pytest.mark.skipif(
    not EVERYTHING.exists() or shutil.which("node") is None,
    reason="npm test servers not installed (run: npm ci --prefix tests/servers)",
)


def replay_url(url: str, cassette: Path, report: Path, *extra: str) -> CliRun:
    if report.exists():
        report.unlink()
    return run_cli("replay", "--url", url, "--cassette", cassette, *extra, report=report)


def replay_clean_over_http(url: str, cassette: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        assert_clean(replay_url(url, cassette, workdir / f"{cassette.stem}-http-{attempt}.json", *GATE))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http-e2e")


# -- server-everything over Streamable HTTP --------------------------------------------------------


@pytest.fixture(scope="module")
def everything_url() -> Any:
    if not EVERYTHING.exists() or shutil.which("node") is None:
        pytest.skip("npm test servers not installed")
    with everything_http() as url:
        yield url


@pytest.fixture(scope="module")
def everything_cassette(everything_url: str, workdir: Path) -> Path:
    cassette = workdir / "everything-http.jsonl"
    record_via_cli(
        everything_url, cassette, everything_session, elicitation=accept_elicitation, roots=roots_for(workdir)
    )
    return cassette


@needs_node
def test_everything_over_http_records_and_replays_clean(
    everything_url: str, everything_cassette: Path, workdir: Path
) -> None:
    lines = cassette_lines(everything_cassette)
    assert lines[0]["meta"]["transport"] == "http"
    # The long-running tool streamed its progress before its result: the notifications were teed
    # right after the request, and the answer travelled over SSE.
    kinds = [(e["kind"], e["message"].get("method"), (e["message"].get("params") or {}).get("name")) for e in lines[1:]]
    call = kinds.index(("request", "tools/call", "trigger-long-running-operation"))
    following = []
    for kind, method, _ in kinds[call + 1 :]:
        if kind in ("request", "notification"):
            break
        following.append(method)
    assert following.count("notifications/progress") == 2, following
    assert lines[1 + call]["transport"]["sse"] is True
    replay_clean_over_http(everything_url, everything_cassette, workdir)


@needs_node
def test_everything_http_cassette_replays_over_stdio(everything_cassette: Path, workdir: Path) -> None:
    run = replay(command(EVERYTHING, "stdio"), everything_cassette, report=workdir / "everything-http-on-stdio.json")
    assert_clean(run)


@needs_node
def test_a_notification_the_http_recording_could_not_hear_is_not_compared(
    everything_cassette: Path, workdir: Path
) -> None:
    """server-everything announces ``notifications/tools/list_changed`` as the handshake ends,
    mostly before the SDK client's standalone GET stream is up: the HTTP recording then never hears
    it, while stdio hears it inline. The recording without it (taken out when this one was in time
    to hear it) replays clean under its own header (http), and under a header saying stdio (a
    recording that heard everything) it is the one finding: the transport, not the server."""
    changed = "notifications/tools/list_changed"
    lines = [e for e in cassette_lines(everything_cassette) if e.get("message", {}).get("method") != changed]
    runs = {}
    for transport in ("http", "stdio"):
        lines[0]["meta"]["transport"] = transport
        deaf = workdir / f"everything-without-list-changed-{transport}.jsonl"
        deaf.write_text("".join(json.dumps(e) + "\n" for e in lines), "utf-8")
        runs[transport] = replay(
            command(EVERYTHING, "stdio"), deaf, report=workdir / f"deaf-{transport}.json", gate=False
        )
    assert runs["http"].code == 0 and runs["http"].findings() == [], runs["http"].describe()
    found = [(f["rule"], f["class"], f["path"]) for f in runs["stdio"].findings()]
    assert found == [("notification-added", "additive", f"$.notifications[method={changed}]")], runs["stdio"].describe()


@needs_node
def test_a_notice_sent_as_the_handshake_ends_is_heard_by_every_http_replay(
    everything_url: str, everything_cassette: Path, workdir: Path
) -> None:
    """The mirror of the test above: when the recording was in time to hear server-everything's
    ``notifications/tools/list_changed`` (sent on ``notifications/initialized``, on the GET
    stream), every replay over HTTP must hear it too. The replay opens its GET stream before it
    posts ``notifications/initialized``, so it is never late for it (it was, about one replay in
    three, and the replay failed on a dropped notification). The cassette is made to hold the
    notice, as a recording in time would, whether or not this one was."""
    changed = "notifications/tools/list_changed"
    lines = cassette_lines(everything_cassette)
    if not any(e.get("message", {}).get("method") == changed for e in lines[1:]):
        after = next(
            i for i, e in enumerate(lines) if e.get("message", {}).get("method") == "notifications/initialized"
        )
        notice = {
            "kind": "server-notification",
            "ts": lines[after]["ts"],
            "message": {"jsonrpc": "2.0", "method": changed},
        }
        lines.insert(after + 1, notice)
        for seq, entry in enumerate(lines[1:]):
            entry["seq"] = seq
    heard = workdir / "everything-heard-list-changed.jsonl"
    heard.write_text("".join(json.dumps(e) + "\n" for e in lines), "utf-8")
    for attempt in range(5):
        assert_clean(replay_url(everything_url, heard, workdir / f"heard-{attempt}.json", *GATE))


@needs_node
def test_legacy_http_sse_server_records_and_replays_clean(workdir: Path) -> None:
    """The 2024-11-05 HTTP+SSE transport: server-everything's ``sse`` mode, recorded through the
    proxy with the SDK's SSE client, replayed with ``--url .../sse``."""
    from mcp.client.sse import sse_client

    async def session(client: Client) -> dict[str, Any]:
        await client.list_tools()
        await client.call_tool("get-sum", {"a": 20, "b": 22})
        await client.call_tool(
            "trigger-long-running-operation", {"duration": 1, "steps": 2}, progress_callback=ignore_progress
        )
        return {}

    port = free_port()
    cassette = workdir / "everything-sse.jsonl"
    with running([str(EVERYTHING), "sse"], f"http://127.0.0.1:{port}/sse", env=everything_env(port)) as url:
        with RecordingProxy(url, cassette_path=str(cassette)) as proxy:
            sdk_session(sse_client(proxy.url), session, mode="legacy")
        proxy.save(force=True)
        lines = cassette_lines(cassette)
        assert lines[0]["meta"]["transport"] == "sse"
        assert [e["message"].get("method") for e in lines[1:]].count("notifications/progress") == 2
        assert_clean(replay_url(url, cassette, workdir / "everything-sse.json", *GATE))


# -- the SDK's MCPServer (FastMCP) over Streamable HTTP --------------------------------------------


@pytest.fixture(scope="module")
def fast_url() -> Any:
    with fast_http() as url:
        yield url


@pytest.fixture(scope="module")
def fast_http_modern(fast_url: str, workdir: Path) -> Path:
    cassette = workdir / "fast-http-modern.jsonl"
    seen = record_via_cli(fast_url, cassette, fast_session, elicitation=accept_elicitation)
    assert seen["protocol_version"] == STATELESS
    return cassette


@pytest.fixture(scope="module")
def fast_http_legacy(fast_url: str, workdir: Path) -> Path:
    cassette = workdir / "fast-http-legacy.jsonl"
    seen = record_via_cli(fast_url, cassette, fast_session, mode="legacy", elicitation=accept_elicitation)
    assert seen["protocol_version"] != STATELESS
    return cassette


def test_fast_server_stateless_era_over_http_replays_clean(
    fast_url: str, fast_http_modern: Path, workdir: Path
) -> None:
    entries = cassette_lines(fast_http_modern)[1:]
    assert entries[0]["message"]["method"] == "server/discover"
    count = next(i for i, e in enumerate(entries) if (e["message"].get("params") or {}).get("name") == "count")
    assert entries[count + 1]["message"]["method"] == "notifications/progress"
    replay_clean_over_http(fast_url, fast_http_modern, workdir)


def test_fast_server_handshake_era_over_http_replays_clean(
    fast_url: str, fast_http_legacy: Path, workdir: Path
) -> None:
    methods = [e["message"].get("method") for e in cassette_lines(fast_http_legacy)[1:]]
    assert methods[0] == "initialize" and "elicitation/create" in methods  # a server request mid-call
    replay_clean_over_http(fast_url, fast_http_legacy, workdir)


def test_server_command_with_url_starts_and_stops_the_server(fast_http_modern: Path, workdir: Path) -> None:
    port = free_port()
    run = run_cli(
        "replay",
        "--server",
        command(PYTHON, FAST_HTTP, str(port)),
        "--url",
        f"http://127.0.0.1:{port}/mcp",
        "--cassette",
        fast_http_modern,
        *GATE,
        report=workdir / "fast-server-and-url.json",
    )
    assert_clean(run)  # run_cli also fails the test if the server outlived mcp-replay


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_http_recording_replays_over_stdio(era: str, request: pytest.FixtureRequest, workdir: Path) -> None:
    cassette = request.getfixturevalue(f"fast_http_{era}")
    assert_clean(replay(python_server(FAST_STDIO), cassette, report=workdir / f"fast-http-{era}-on-stdio.json"))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_stdio_recording_replays_over_http(mode: str, fast_url: str, workdir: Path) -> None:
    cassette = workdir / f"fast-stdio-{mode}.jsonl"
    record_through_proxy(python_server(FAST_STDIO), cassette, fast_session, mode=mode, elicitation=accept_elicitation)
    assert cassette_lines(cassette)[0]["meta"].get("transport") in (None, "stdio")
    replay_clean_over_http(fast_url, cassette, workdir)


# -- faults over HTTP ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fake_cassette(workdir: Path) -> Path:
    """A small session with the fake server, recorded through the proxy."""
    from fakes.http_fake_server import FakeHttpServer

    path = workdir / "fake.jsonl"
    with FakeHttpServer("json") as fake, RecordingProxy(fake.url, cassette_path=str(path)) as proxy:
        t = HttpTransport(proxy.url, listen=False)
        t.start()
        try:
            t.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}})
            t.receive(10)
            t.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            for n in (2, 3, 4):
                t.send(
                    {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "t", "arguments": {"n": n}}}
                )
                t.receive(10)
        finally:
            t.close()
        proxy.save(force=True)
    return path


def fault_run(behaviour: str, cassette: Path, workdir: Path, *extra: str) -> CliRun:
    port = free_port()
    return run_cli(
        "replay",
        "--server",
        command(PYTHON, FAKES / "http_fake_server.py", behaviour, str(port)),
        "--url",
        f"http://127.0.0.1:{port}/mcp",
        "--cassette",
        cassette,
        "--fail-on-regression",
        *extra,
        report=workdir / f"fault-{behaviour}.json",
    )


def test_fake_cassette_replays_clean_against_the_healthy_fake(fake_cassette: Path, workdir: Path) -> None:
    assert_clean(fault_run("json", fake_cassette, workdir, "--min-grade", "A"))


def test_connection_refused_is_an_infrastructure_error(fake_cassette: Path) -> None:
    run = run_cli(
        "replay", "--url", f"http://127.0.0.1:{free_port()}/mcp", "--cassette", fake_cassette, "--startup-timeout", "3"
    )
    assert run.code == 3, run.describe()
    message = run.stderr.strip().splitlines()[-1]
    assert "connection refused" in message.lower() or "cannot connect" in message, run.describe()
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("behaviour", ["status500", "truncate", "hang"])
def test_fault_mid_session_is_missing_and_gated(behaviour: str, fake_cassette: Path, workdir: Path) -> None:
    run = fault_run(behaviour, fake_cassette, workdir, "--timeout", "2")
    assert run.code == 1, run.describe()
    assert run.report is not None
    calls = [i for i in run.interactions() if i["method"] == "tools/call"]
    # The first request the fault hits is missing; the rest are missing too, or skipped (never
    # sent) once the server is known to be gone or hung.
    got = [i["status"] for i in calls]
    assert got[0] == "missing" and set(got[1:]) <= {"missing", "skipped"}, run.describe()
    assert all(f["kind"] == "missing-response" for i in calls for f in i["findings"]), run.describe()
    assert run.report["grade"] in ("D", "F"), run.describe()


async def list_tools(client: Any) -> dict[str, Any]:
    await client.list_tools()
    return {}


def test_stdio_and_http_recorders_write_the_same_header_for_a_stateless_session(workdir: Path) -> None:
    """One header builder: the same SDK session with the same server, recorded over stdio and over
    HTTP, gets the same era, protocol version, server info and timestamp spelling (the HTTP
    recorder used to write no era and no server info for a stateless session)."""
    from e2e_helpers import record_through_proxy

    stdio, http = workdir / "agree-stdio.jsonl", workdir / "agree-http.jsonl"
    record_through_proxy(python_server(FAST_STDIO), stdio, list_tools)
    with fast_http() as url:
        record_via_cli(url, http, list_tools)
    one, other = cassette_lines(stdio)[0]["meta"], cassette_lines(http)[0]["meta"]
    for key in ("era", "protocol_version", "server_info"):
        assert one[key] == other[key], (key, one[key], other[key])
    assert one["era"] == "stateless" and one["protocol_version"] == STATELESS
    assert one["server_info"] and one["server_info"]["name"] == "fast-tasks"
    assert one["recorded_at"].endswith("Z") and other["recorded_at"].endswith("Z")
    assert (one["transport"], other["transport"]) == ("stdio", "http")
