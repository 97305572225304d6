"""mcp-recorder JSON cassettes <-> ours: mapping, line numbers, round trips, errors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_replay_action import cassette
from mcp_replay_action.cassette import convert, recorder_json
from mcp_replay_action.errors import CassetteError, ConfigError
from mcp_replay_action.model.cassette import Cassette, Interaction

pytestmark = pytest.mark.integration

DATA = Path(__file__).parent / "data"
HTTP = DATA / "recorder_http.json"
STDIO = DATA / "recorder_stdio.json"


def _object_lines(path: Path) -> list[int]:
    """Lines where an interaction object opens: the line before each 6-space-indented "type"."""
    lines = path.read_text().splitlines()
    return [n for n, text in enumerate(lines, start=1) if text.startswith('      "type": ')]


def _strip_lines(c: Cassette) -> tuple[Interaction, ...]:
    return tuple(replace(i, line=0) for i in c.interactions)


def test_reads_http_recording_with_lines_transport_and_meta() -> None:
    c = cassette.load(HTTP)
    assert c.source_format == "mcp-recorder-json"
    assert [i.kind for i in c.interactions] == ["request", "notification", "request", "request", "request"]
    assert [i.seq for i in c.interactions] == [0, 1, 2, 3, 4]
    # lifecycle entries are not interactions, so skip theirs when matching lines
    text = HTTP.read_text().splitlines()
    lifecycle = {n for n in _object_lines(HTTP) if "lifecycle" in text[n - 1]}
    assert [i.line for i in c.interactions] == [n - 1 for n in _object_lines(HTTP) if n not in lifecycle]
    for inter in c.interactions:
        assert text[inter.line - 1].strip() == "{"
    call = c.interactions[3]
    assert call.label == "tools/call km_to_miles"
    assert call.transport == {"http_status": 200, "sse": True}
    assert call.latency_ms == 7
    assert c.interactions[1].transport == {"http_status": 202, "sse": False}
    assert c.interactions[1].response is None
    assert c.interactions[4].response == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32602, "message": "Unknown tool: furlongs"},
    }
    assert c.meta["url"] == "http://127.0.0.1:8931"
    assert c.meta["transport"] == "http"
    assert c.meta["protocol_version"] == "2025-11-25"
    assert c.meta["era"] == "handshake"
    assert c.meta["server_info"] == {"name": "Unit Converter", "version": "0.9.1"}
    assert [(e["http_method"], e["position"]) for e in c.meta["http_lifecycle"]] == [("GET", 2), ("DELETE", 5)]


def test_reads_stdio_recording_without_http_facts() -> None:
    c = cassette.load(STDIO)
    assert c.meta["server"] == "node build/index.js"
    assert c.meta["transport"] == "stdio"
    assert "url" not in c.meta
    assert all(i.transport is None for i in c.interactions)
    assert c.interactions[2].label == "resources/read note://shopping"
    assert "http_lifecycle" not in c.meta


def test_theirs_to_ours_to_theirs_keeps_their_document(tmp_path: Path) -> None:
    ours = tmp_path / "session.jsonl"
    back = tmp_path / "back.json"
    first = convert.convert_file(HTTP, ours)
    assert first.to == "jsonl" and first.interactions == 5
    assert ours.read_text().startswith('{"schema":"mcp-replay/cassette@1"')
    assert cassette.load(ours).source_format == "jsonl"
    second = convert.convert_file(ours, back)
    assert second.to == "recorder-json"
    original = json.loads(HTTP.read_text())
    written = json.loads(back.read_text())
    assert written["version"] == "1.0"
    assert written["metadata"] == original["metadata"]
    items = [{k: v for k, v in item.items() if k != recorder_json.EXTENSION_KEY} for item in written["interactions"]]
    assert items == original["interactions"]


def test_ours_to_theirs_to_ours_loses_nothing(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
    c = Cassette(
        meta={
            "server": ["python", "-m", "calc"],
            "transport": "stdio",
            "recorded_at": "2026-05-01T10:00:00+00:00",
            "protocol_version": "2025-11-25",
            "era": "handshake",
            "server_info": {"name": "calc", "version": "1"},
            "tool_version": "0.1.0",
            "redaction": {"keys": ["token"]},
        },
        interactions=(
            Interaction(0, "request", init, {"jsonrpc": "2.0", "id": 1, "result": {}}, ts=0.0, latency_ms=3.25),
            Interaction(1, "notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}, ts=0.01),
            Interaction(
                2,
                "request",
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "roots"}},
                {"jsonrpc": "2.0", "id": 2, "result": {"content": []}},
                ts=0.02,
                latency_ms=9.5,
            ),
            Interaction(
                3,
                "server-request",
                {"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"},
                {"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}},
                ts=0.021,
            ),
            Interaction(
                4,
                "server-notification",
                {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
                ts=0.03,
            ),
            Interaction(
                5,
                "request",
                {"jsonrpc": "2.0", "id": 3, "method": "ping"},
                {"jsonrpc": "2.0", "id": 3, "result": {}},
                ts=0.04,
                transport={"http_status": 200, "sse": True},
            ),
        ),
    )
    src = tmp_path / "ours.jsonl"
    cassette.save(c, src)
    theirs = tmp_path / "theirs.json"
    convert.convert_file(src, theirs)
    doc = json.loads(theirs.read_text())
    # their loader sees only what it knows: client-side traffic, typed their way
    assert [item["type"] for item in doc["interactions"]] == ["jsonrpc_request", "notification"] + [
        "jsonrpc_request"
    ] * 2
    assert all(isinstance(item["latency_ms"], int) for item in doc["interactions"])
    assert doc["metadata"]["server_url"] == "python -m calc"
    assert doc["metadata"]["transport_type"] == "stdio"
    assert doc["interactions"][3]["response_status"] == 200 and doc["interactions"][3]["response_is_sse"]
    again = tmp_path / "again.jsonl"
    convert.convert_file(theirs, again)
    loaded = cassette.load(again)
    assert loaded.meta == c.meta
    assert _strip_lines(loaded) == c.interactions


def test_lifecycle_entries_survive_a_round_trip_in_place(tmp_path: Path) -> None:
    c = cassette.load(HTTP)
    doc = recorder_json.to_recorder_json(c)
    assert [item["type"] for item in doc["interactions"]] == [
        "jsonrpc_request",
        "notification",
        "lifecycle",
        "jsonrpc_request",
        "jsonrpc_request",
        "jsonrpc_request",
        "lifecycle",
    ]
    assert doc["interactions"][2]["http_method"] == "GET"


def test_written_recorder_json_reads_back_with_its_own_lines(tmp_path: Path) -> None:
    out = tmp_path / "x.json"
    convert.convert_file(STDIO, out)
    text = out.read_text().splitlines()
    loaded = cassette.load(out)
    for inter in loaded.interactions:
        assert text[inter.line - 1].strip() == "{"
        assert '"type"' in text[inter.line]


def _write(tmp_path: Path, doc: object, name: str = "bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def _doc(*items: object) -> dict[str, object]:
    return {"version": "1.0", "metadata": {}, "interactions": list(items)}


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def _item(n: int, method: str) -> dict[str, object]:
    request = {"jsonrpc": "2.0", "id": n, "method": method}
    return {"type": "jsonrpc_request", "request": request, "response": {"jsonrpc": "2.0", "id": n, "result": {}}}


def test_unknown_type_names_the_file_and_the_interactions_line(tmp_path: Path) -> None:
    good = {"type": "jsonrpc_request", "request": PING, "response": {"jsonrpc": "2.0", "id": 1, "result": {}}}
    bad = {"type": "websocket_frame", "request": PING, "response": None}
    path = _write(tmp_path, _doc(good, bad))
    with pytest.raises(CassetteError) as info:
        cassette.load(path)
    lines = path.read_text().splitlines()
    expected = next(n for n, t in enumerate(lines, 1) if "websocket_frame" in t) - 1
    assert info.value.line == expected
    assert str(info.value).startswith(f"{path}:{expected}: ")
    assert "unknown type 'websocket_frame'" in str(info.value)


@pytest.mark.parametrize(
    ("item", "reason"),
    [
        ({"request": PING, "response": None}, 'missing "type"'),
        ({"type": "jsonrpc_request", "request": None, "response": None}, "must be a JSON-RPC message"),
        (
            {"type": "notification", "request": {"jsonrpc": "2.0", "id": 4, "method": "x"}, "response": None},
            "invalid interaction",
        ),
        ({"type": "jsonrpc_request", "request": {"id": 1, "method": "ping"}, "response": None}, '"jsonrpc": "2.0"'),
        ("not an object", "expected an object"),
        (
            {"type": "jsonrpc_request", "request": PING, "response": None},
            'a recorded request needs its response, but "response" is null',
        ),
    ],
)
def test_bad_interactions_point_at_their_line(tmp_path: Path, item: object, reason: str) -> None:
    path = _write(tmp_path, _doc(item))
    with pytest.raises(CassetteError) as info:
        recorder_json.from_recorder_json(path)
    assert info.value.line == 5  # {, "version", "metadata", "interactions": [, then the item
    assert reason in info.value.reason


def test_bad_json_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "version": "1.0",\n  "interactions": [\n    {"type": "notification",,}\n  ]\n}\n')
    with pytest.raises(CassetteError) as info:
        cassette.load(path)
    assert info.value.line == 4
    assert "invalid JSON" in info.value.reason


def test_unknown_version_points_at_the_version_key(tmp_path: Path) -> None:
    path = tmp_path / "v2.json"
    path.write_text('{\n  "metadata": {},\n  "version": "2.0",\n  "interactions": []\n}\n')
    with pytest.raises(CassetteError) as info:
        cassette.load(path)
    assert info.value.line == 3
    assert "version '2.0'" in info.value.reason


def test_interactions_must_be_a_list(tmp_path: Path) -> None:
    path = _write(tmp_path, {"version": "1.0", "interactions": {"a": 1}})
    with pytest.raises(CassetteError, match='"interactions" must be an array'):
        cassette.load(path)


def test_a_pretty_printed_jsonl_header_is_explained(tmp_path: Path) -> None:
    path = _write(tmp_path, {"schema": "mcp-replay/cassette@1", "meta": {}}, name="pretty.jsonl")
    with pytest.raises(CassetteError, match="one JSON document per line"):
        cassette.load(path)


def test_request_filed_without_an_id_becomes_a_notification(tmp_path: Path) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    path = _write(tmp_path, _doc({"type": "jsonrpc_request", "request": note, "response": None}))
    (inter,) = cassette.load(path).interactions
    assert inter.kind == "notification" and inter.response is None


@pytest.mark.parametrize("spelling", ["jsonrpc_notification", "JSONRPC-NOTIFICATION", "notification"])
def test_type_spellings(tmp_path: Path, spelling: str) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    path = _write(tmp_path, _doc({"type": spelling, "request": note, "response": None}))
    assert cassette.load(path).interactions[0].kind == "notification"


def test_a_file_of_theirs_that_holds_the_servers_messages_keeps_them_when_rewritten(tmp_path: Path) -> None:
    """A file with no key of ours (``--update``, ``calibrate`` and refresh write it back with
    none) that files the server's messages as items of their own keeps them, in place: a rewrite
    never drops a line it cannot put under our extension."""
    from mcp_replay_action.replay.update import write_cassette

    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
    roots = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    items = [
        _item(1, "tools/call"),
        {"type": "server_notification", "request": log, "response": None},
        {"type": "jsonrpc_server_request", "request": roots, "response": {"jsonrpc": "2.0", "id": "s1", "result": {}}},
        _item(2, "tools/list"),
    ]
    path = _write(tmp_path, _doc(*items))
    before = cassette.load(path)
    write_cassette(replace(before, meta={**before.meta, "noise": []}))
    doc = json.loads(path.read_text("utf-8"))
    assert recorder_json.EXTENSION_KEY not in doc
    assert [i["type"] for i in doc["interactions"]] == [
        "jsonrpc_request",
        "server_notification",
        "server_request",
        "jsonrpc_request",
    ]
    after = cassette.load(path)
    assert [(i.kind, i.message, i.response) for i in after.interactions] == [
        (i.kind, i.message, i.response) for i in before.interactions
    ]


def test_format_is_inferred_from_the_extension_or_given(tmp_path: Path) -> None:
    assert convert.target_format("a.jsonl") == "jsonl"
    assert convert.target_format("a.JSON") == "recorder-json"
    assert convert.target_format("a.txt", "jsonl") == "jsonl"
    with pytest.raises(ConfigError, match="--to"):
        convert.target_format("a.cassette")
    with pytest.raises(ConfigError, match="unknown cassette format"):
        convert.target_format("a.json", "yaml")
    out = tmp_path / "forced.json"
    result = convert.convert_file(STDIO, out, to="jsonl")
    assert result.to == "jsonl"
    assert cassette.load(out).source_format == "jsonl"


def test_a_failed_conversion_writes_nothing(tmp_path: Path) -> None:
    bad = _write(tmp_path, _doc({"type": "mystery", "request": PING}))
    dst = tmp_path / "out.jsonl"
    with pytest.raises(CassetteError):
        convert.convert_file(bad, dst)
    assert not dst.exists()
    assert list(tmp_path.iterdir()) == [bad]


def test_missing_file() -> None:
    with pytest.raises(CassetteError, match="no such file"):
        recorder_json.from_recorder_json("/nonexistent/cassette.json")


def test_convert_command_both_ways(tmp_path: Path) -> None:
    import subprocess
    import sys

    ours = tmp_path / "ours.jsonl"
    back = tmp_path / "back.json"
    for src, dst in ((HTTP, ours), (ours, back)):
        proc = subprocess.run(
            [sys.executable, "-m", "mcp_replay_action", "convert", str(src), str(dst)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
    assert cassette.load(ours).source_format == "jsonl"
    assert cassette.load(back).source_format == "mcp-recorder-json"
    bad = _write(tmp_path, _doc({"type": "mystery", "request": PING}))
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "convert", str(bad), str(tmp_path / "x.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and f"{bad}:5:" in proc.stderr
