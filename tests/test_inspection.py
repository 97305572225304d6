"""``inspect``: summarising cassettes of both formats and both protocol eras."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_replay_action import cassette
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.report.inspection import interaction_line, render_summary, summarize

pytestmark = pytest.mark.integration

DATA = Path(__file__).parent / "data"


def test_handshake_cassette_summary() -> None:
    s = summarize(cassette.load(DATA / "summary_handshake.jsonl"))
    assert (s.server_name, s.server_version) == ("calc", "1.4.0")
    assert (s.protocol_version, s.era, s.transport) == ("2025-11-25", "handshake", "stdio")
    assert s.target == "python -m 'calc server'"
    assert s.tool_version == "0.1.0"
    assert [i.line for i in s.interactions] == list(range(2, 12))
    outcomes = [(i.method, i.outcome, i.error_code) for i in s.interactions]
    assert outcomes[7] == ("tools/call", "error", -32602)
    assert outcomes[8] == ("tools/call", "tool-error", None)
    assert outcomes[1] == ("notifications/initialized", "notification", None)
    t = s.totals
    # initialize, notifications/initialized and ping are lifecycle; each interaction counted once
    assert (t.requests, t.notifications, t.server_requests, t.server_notifications, t.lifecycle) == (5, 0, 1, 1, 3)
    assert t.requests + t.notifications + t.server_requests + t.server_notifications + t.lifecycle == 10
    assert t.errors == 2
    assert s.redaction == (
        "keys: authorization, token",
        "patterns: sk-[A-Za-z0-9]+",
        "env: API_KEY",
        "server_url",
        "bearer",
    )


def test_handshake_rendering() -> None:
    text = render_summary(summarize(cassette.load(DATA / "summary_handshake.jsonl")))
    lines = text.splitlines()
    assert lines[0].endswith("summary_handshake.jsonl  [mcp-replay JSONL]")
    assert "  Server:    calc v1.4.0" in lines
    assert "  Protocol:  2025-11-25 (handshake era)" in lines
    assert "    #3 line 5  tools/call [add] -> ok (7 ms)" in lines
    assert "    #7 line 9  tools/call [nope] -> error -32602 (1 ms)" in lines
    assert "    #5 line 7  server: roots/list -> answered ok" in lines
    assert "    #1 line 3  notifications/initialized (notification)" in lines
    assert (
        "  Summary: 5 requests, 0 notifications, 1 server request, 1 server notification, 3 lifecycle; 2 errors"
        in lines
    )
    assert "    env: API_KEY" in lines


def test_stateless_cassette_takes_identity_and_era_from_traffic() -> None:
    s = summarize(cassette.load(DATA / "summary_stateless.jsonl"))
    assert (s.server_name, s.server_version) == ("calc", "2.0.0")  # from result _meta serverInfo
    assert (s.protocol_version, s.era) == ("2026-07-28", "stateless")
    assert s.target == "http://127.0.0.1:9000/mcp"
    assert [i.outcome for i in s.interactions] == ["ok", "input-required", "ok"]
    assert s.totals.lifecycle == 1 and s.totals.requests == 2
    text = render_summary(s)
    assert "#1 line 3  tools/call [confirm] -> input-required (200 SSE, 4 ms)" in text
    assert "Redaction: none recorded" in text


def test_recorder_json_summary_lists_http_lifecycle() -> None:
    s = summarize(cassette.load(DATA / "recorder_http.json"))
    assert s.source_format == "mcp-recorder-json"
    assert [(e.method, e.status, e.sse) for e in s.http_lifecycle] == [("GET", 200, True), ("DELETE", 200, False)]
    assert s.totals.lifecycle == 4  # initialize, initialized, GET, DELETE
    text = render_summary(s)
    assert "[mcp-recorder JSON]" in text.splitlines()[0]
    assert "    #3 line 110  tools/call [km_to_miles] -> ok (200 SSE, 7 ms)" in text.splitlines()
    assert "    GET /mcp -> 200 SSE (40 ms)" in text.splitlines()


def test_http_target_started_by_a_command() -> None:
    meta = {"url": "http://127.0.0.1:8080", "server": ["node", "server.js"], "transport": "http"}
    assert summarize(Cassette(meta=meta)).target == "http://127.0.0.1:8080 (started by: node server.js)"


def test_empty_cassette_and_missing_facts() -> None:
    s = summarize(Cassette(meta={}, path="x.jsonl"))
    text = render_summary(s)
    assert "Server:    unknown" in text
    assert "(none)" in text
    assert s.totals.errors == 0


def test_hostile_server_text_stays_on_one_line() -> None:
    inter = Interaction(
        seq=0,
        kind="request",
        message={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "evil\n::error::x" + "y" * 200}},
        response={"jsonrpc": "2.0", "id": 1, "result": {}},
        line=2,
    )
    line = interaction_line(summarize(Cassette(interactions=(inter,))).interactions[0])
    assert "\n" not in line
    assert len(line) < 140


def test_inspect_command_prints_the_summary() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "inspect", str(DATA / "summary_stateless.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Protocol:  2026-07-28 (stateless era)" in proc.stdout


def test_inspect_command_bad_cassette_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "mcp-replay/cassette@9"}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "inspect", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert f"{bad}:1:" in proc.stderr
