"""``replay --max-slowdown X``: an answer much slower than its recorded latency is a ``latency``
finding; fast calls and answers that kept their speed are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from e2e_helpers import python_server, run_cli
from http_helpers import FAKES
from mcp_replay_action.replay.measures import LATENCY_FLOOR_MS, slowdown
from mcp_replay_action.report.json_report import from_dict, to_dict

pytestmark = pytest.mark.integration


def cassette(path: Path) -> Path:
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    lines = [
        {"schema": "mcp-replay/cassette@1", "meta": {"server": ["echo"]}},
        {
            "seq": 0,
            "kind": "request",
            "message": init,
            "response": {"jsonrpc": "2.0", "id": 1, "result": {}},
            "latency_ms": 1.0,
        },
        {"seq": 1, "kind": "notification", "message": {"jsonrpc": "2.0", "method": "notifications/initialized"}},
    ]
    for seq, recorded_ms in ((2, 1.0), (3, 5000.0)):
        call = {
            "jsonrpc": "2.0",
            "id": seq,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"n": seq}},
        }
        answer = {
            "jsonrpc": "2.0",
            "id": seq,
            "result": {"content": [{"type": "text", "text": json.dumps({"n": seq})}], "structuredContent": {"n": seq}},
        }
        lines.append({"seq": seq, "kind": "request", "message": call, "response": answer, "latency_ms": recorded_ms})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def latency_findings(report: dict) -> dict[int, str]:
    return {
        i["seq"]: f["message"]
        for c in report["cassettes"]
        for i in c["interactions"]
        for f in i["findings"]
        if f["kind"] == "latency"
    }


def test_an_answer_far_slower_than_recorded_is_a_latency_finding(tmp_path: Path) -> None:
    path = cassette(tmp_path / "slow.jsonl")
    server = python_server(FAKES / "echo_server.py", "--delay", "0.3")
    markdown = tmp_path / "r.md"
    flagged = run_cli(
        "replay",
        "--server",
        server,
        "--cassette",
        path,
        "--max-slowdown",
        "3",
        "--markdown",
        markdown,
        report=tmp_path / "r.json",
    )
    assert flagged.report is not None, flagged.describe()
    found = latency_findings(flagged.report)
    # seq 2 was recorded at 1 ms and now takes >= 300 ms; seq 3 was recorded at 5 s.
    assert list(found) == [2], flagged.describe()
    assert "x slower than recorded: live " in found[2] and "recorded 1 ms (limit 3x)" in found[2]
    # Every interaction carries its recorded latency beside the live one.
    (interactions,) = [c["interactions"] for c in flagged.report["cassettes"]]
    recorded = {i["seq"]: i["recorded_latency_ms"] for i in interactions}
    assert recorded == {0: 1.0, 2: 1.0, 3: 5000.0}
    live = {i["seq"]: i["latency_ms"] for i in interactions}
    finding = next(f for i in interactions for f in i["findings"] if f["kind"] == "latency")
    assert (finding["before"], finding["after"]) == (1.0, live[2])
    # A shard's report read back for ``mcp-replay merge`` keeps it.
    again = to_dict(from_dict(flagged.report))
    assert [i["recorded_latency_ms"] for c in again["cassettes"] for i in c["interactions"]] == [1.0, 1.0, 5000.0]
    text = markdown.read_text("utf-8")
    assert "**latency** (breaking)" in text and "recorded 1 ms (limit 3x)" in text and "live " in text
    assert flagged.code == 1  # a latency finding is breaking: the default gate fails
    unflagged = run_cli("replay", "--server", server, "--cassette", path, report=tmp_path / "r2.json")
    assert unflagged.report is not None and latency_findings(unflagged.report) == {}


def test_the_floor_and_the_factor() -> None:
    assert slowdown(1.0, LATENCY_FLOOR_MS - 1, 3) is None  # 1 ms -> 49 ms: scheduling noise
    assert slowdown(20.0, 59.0, 3) is None  # under 3x
    assert slowdown(None, 900.0, 3) is None  # no recorded latency to compare with
    assert slowdown(20.0, 900.0, None) is None  # not asked for
    finding = slowdown(20.0, 900.0, 3)
    assert finding is not None and (finding.kind, finding.cls, finding.before, finding.after) == (
        "latency",
        "breaking",
        20.0,
        900.0,
    )


def test_which_requests_are_sent_again_for_timing() -> None:
    from mcp_replay_action.model.cassette import Interaction
    from mcp_replay_action.replay.repeat import read_only_tools, side_effect_free

    tools = [
        {"name": "get", "annotations": {"readOnlyHint": True}},
        {"name": "put", "annotations": {"readOnlyHint": False}},
        {"name": "rm"},
    ]
    listing = Interaction(
        seq=0,
        kind="request",
        message={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        response={"jsonrpc": "2.0", "id": 1, "result": {"tools": tools}},
    )
    read_only = read_only_tools([listing])
    assert read_only == frozenset({"get"})

    def call(name: str) -> dict:
        return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": name}}

    assert side_effect_free({"method": "tools/list"}, read_only)
    assert side_effect_free({"method": "resources/read", "params": {"uri": "x"}}, read_only)
    assert side_effect_free(call("get"), read_only)
    assert not side_effect_free(call("put"), read_only) and not side_effect_free(call("rm"), read_only)


def test_repeat_times_side_effect_free_requests_without_changing_the_verdict(tmp_path: Path) -> None:
    from e2e_helpers import PYTHON, REPO, command

    server = command(PYTHON, "-m", "mcp_replay_action.samples.calc_server")
    cassettes = str(REPO / "cassettes/calc/*.jsonl")
    once = run_cli("replay", "--server", server, "--cassette", cassettes, report=tmp_path / "1.json")
    thrice = run_cli("replay", "--server", server, "--cassette", cassettes, "--repeat", "3", report=tmp_path / "3.json")
    assert once.report is not None and thrice.report is not None, thrice.describe()
    statuses = [[i["status"] for i in c["interactions"]] for c in once.report["cassettes"]]
    assert [[i["status"] for i in c["interactions"]] for c in thrice.report["cassettes"]] == statuses
    assert thrice.code == once.code == 0
