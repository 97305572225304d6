"""``mcp-replay replay --update`` through the real command line, against real sample servers and
fault-injecting fakes: what changed is re-recorded (redacted), everything else stays put."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import load, save
from mcp_replay_action.cassette.convert import convert_file
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.redact import Redactor
from mcp_replay_action.replay.update import update_cassette

pytestmark = pytest.mark.integration

REGRESSED = f"{sys.executable} -m mcp_replay_action.samples.calc_server_regressed"
FAKES = Path(__file__).parent / "fakes"
CRASH = f"{sys.executable} {FAKES / 'crash_server.py'}"
ENV_ECHO = f"{sys.executable} {FAKES / 'env_echo_server.py'}"
SECRET = "s3cr3t-service-value-91"
GH_SECRET = "ghp_" + "A1b2C3d4E5" * 4


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def recorded(calc_cassette: Path) -> Path:
    return calc_cassette


@pytest.fixture
def demo(recorded: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "cassettes" / "demo.jsonl"
    copy.parent.mkdir()
    shutil.copy(recorded, copy)
    return copy


def _report(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _findings(report: dict[str, Any]) -> int:
    return sum(len(r["findings"]) for c in report["cassettes"] for r in c["interactions"])


def test_update_rewrites_the_regressions_and_the_next_replay_is_clean(demo: Path) -> None:
    before = lines(demo)
    done = cli("replay", "--server", REGRESSED, "--cassette", str(demo), "--update", "--fail-on-regression")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"updated {demo}: 2 interactions" in done.stdout
    assert "[FAIL]" in done.stdout  # the report shown is the replay's, from before the update

    after = lines(demo)
    assert len(after) == len(before)
    assert after[0]["meta"].pop("updated_at").endswith("Z")
    assert after[0] == before[0]
    changed = []
    for old, new in zip(before[1:], after[1:], strict=True):
        assert (new["seq"], new["kind"], new["message"], new["ts"]) == (
            old["seq"],
            old["kind"],
            old["message"],
            old["ts"],
        )
        if new != old:
            changed.append(new["message"]["params"]["name"])
            assert set(new) == set(old) and new["response"] != old["response"]
            assert new["response"]["id"] == old["response"]["id"]
    assert sorted(changed) == ["add", "echo"]

    again = cli("replay", "--server", REGRESSED, "--cassette", str(demo), "--json", "--fail-on-regression")
    assert again.returncode == 0, again.stdout + again.stderr
    report = _report(again)
    assert report["grade"] == "A"
    assert _findings(report) == 0


def test_update_of_a_cassette_that_still_matches_leaves_the_file_alone(demo: Path) -> None:
    healthy = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
    text = demo.read_bytes()
    done = cli("replay", "--server", healthy, "--cassette", str(demo), "--update")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "updated" not in done.stdout
    assert demo.read_bytes() == text


def test_update_keeps_the_original_text_of_every_unchanged_line(demo: Path) -> None:
    # A cassette written with other spacing (a hand edit, another tool): only the changed lines
    # may be re-serialized, so the review diff of a refresh shows nothing else.
    spaced = [json.dumps(doc, indent=None, separators=(", ", ": ")) for doc in lines(demo)]
    demo.write_text("\n".join(spaced) + "\n")
    done = cli("replay", "--server", REGRESSED, "--cassette", str(demo), "--update")
    assert done.returncode == 0, done.stdout + done.stderr
    after = demo.read_text().splitlines()
    kept = [a for a, b in zip(spaced, after, strict=True) if a == b]
    assert len(kept) == len(spaced) - 3  # the header (updated_at) and the two changed answers


def test_update_keeps_a_recorded_mcp_recorder_json_cassette_in_its_own_format(demo: Path) -> None:
    foreign = demo.with_suffix(".json")
    convert_file(demo, foreign, to="recorder-json")
    done = cli("replay", "--server", REGRESSED, "--cassette", str(foreign), "--update", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert _report(done)["failed"] == 2  # --json stays parseable: the update lines went to stderr
    assert f"updated {foreign}: 2 interactions" in done.stderr
    doc = json.loads(foreign.read_text())
    assert doc["version"] == "1.0" and isinstance(doc["interactions"], list)
    assert "updated_at" in doc["x_mcp_replay"]["meta"]
    reread = load(foreign)
    assert reread.source_format == "mcp-recorder-json"
    assert [i.message for i in reread.interactions] == [i.message for i in load(demo).interactions]

    again = cli("replay", "--server", REGRESSED, "--cassette", str(foreign), "--json", "--fail-on-regression")
    assert again.returncode == 0, again.stdout + again.stderr
    assert _report(again)["grade"] == "A" and _findings(_report(again)) == 0


# --------------------------------------------------------------------------- hand-made cassettes

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}


def _fake_cassette(path: Path, server_name: str, calls: list[dict[str, Any] | None], meta: dict[str, Any]) -> None:
    """initialize (answered as the fake answers it), initialized, tools/list, then one tools/call
    per entry of ``calls`` with that recorded result."""
    init_result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": server_name, "version": "1.0.0"},
    }
    tool = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
    inters = [
        Interaction(
            0,
            "request",
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
            {"jsonrpc": "2.0", "id": 0, "result": init_result},
        ),
        Interaction(1, "notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Interaction(
            2,
            "request",
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}},
        ),
    ]
    for n, recorded in enumerate(calls):
        rid = n + 2
        message = {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {"name": "echo", "arguments": {}}}
        inters.append(Interaction(len(inters), "request", message, {"jsonrpc": "2.0", "id": rid, "result": recorded}))
    save(Cassette(meta={"transport": "stdio", **meta}, interactions=tuple(inters)), path)


def _text_result(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def test_a_crashing_server_never_erases_the_recording(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    _fake_cassette(path, "crash", [_text_result("one"), _text_result("two")], {})
    text = path.read_bytes()
    done = cli("replay", "--server", CRASH, "--cassette", str(path), "--update", "--fail-on-regression")
    assert done.returncode == 1, done.stdout + done.stderr  # nothing could be rewritten: the gate stands
    assert "missing" in done.stdout
    assert f"not updated in {path}: 2 interactions without a live response" in done.stdout
    assert path.read_bytes() == text


def test_a_crash_after_a_change_rewrites_the_change_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "crash.jsonl"
    # Recorded under another server name: initialize differs (and is answered), the calls crash it.
    _fake_cassette(path, "crash-old", [_text_result("one")], {})
    before = lines(path)
    done = cli("replay", "--server", CRASH, "--cassette", str(path), "--update", "--fail-on-regression")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"updated {path}: 1 interaction" in done.stdout
    assert f"not updated in {path}: 1 interaction without" in done.stdout
    after = lines(path)
    assert after[1]["response"]["result"]["serverInfo"]["name"] == "crash"
    assert after[2:] == before[2:]


@pytest.mark.parametrize("via", ["environment", "--env"])
def test_a_secret_in_the_live_response_stays_redacted_on_disk(tmp_path: Path, via: str) -> None:
    path = tmp_path / "secret.jsonl"
    recorded = _text_result("build 1 token [REDACTED] gh [REDACTED]")
    _fake_cassette(
        path, "envecho", [recorded], {"redaction": {"defaults": ["known-prefixes"], "env": ["SERVICE_TOKEN"]}}
    )
    secrets = {"SERVICE_TOKEN": SECRET, "FAKE_GH_TOKEN": GH_SECRET, "BUILD": "2"}
    if via == "environment":
        done = cli("replay", "--server", ENV_ECHO, "--cassette", str(path), "--update", env=secrets)
    else:
        pairs = [arg for name, value in secrets.items() for arg in ("--env", f"{name}={value}")]
        done = cli("replay", "--server", ENV_ECHO, "--cassette", str(path), "--update", *pairs)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"updated {path}: 1 interaction" in done.stdout
    text = path.read_text()
    assert SECRET not in text and GH_SECRET not in text
    assert lines(path)[-1]["response"]["result"]["content"][0]["text"] == "build 2 token [REDACTED] gh [REDACTED]"


# --------------------------------------------------------------------------- the pure function


def test_update_cassette_writes_minted_values_back_as_the_recorded_ones_later_requests_quote() -> None:
    start = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "start_job", "arguments": {}}}
    status = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "job_status", "arguments": {"jobId": "job-7f3a9c21"}},
    }
    cassette = Cassette(
        meta={"server": ["srv"], "keep": {"me": 1}},
        interactions=(
            Interaction(0, "request", start, {"jsonrpc": "2.0", "id": 1, "result": {"jobId": "job-7f3a9c21"}}),
            Interaction(
                1, "request", status, {"jsonrpc": "2.0", "id": 2, "result": {"state": "queued"}}, latency_ms=5.0
            ),
        ),
    )
    live = {
        0: {"jsonrpc": "2.0", "id": 1, "result": {"jobId": "job-0b88e6d4", "eta": 3}},
        1: {"jsonrpc": "2.0", "id": 2, "result": {"state": "done", "token": "hunter2hunter2"}},
    }
    new = update_cassette(cassette, live, Redactor(), latency_ms={0: 1.5, 1: 2.5}, updated_at="2026-01-01T00:00:00Z")
    assert new.meta == {"server": ["srv"], "keep": {"me": 1}, "updated_at": "2026-01-01T00:00:00Z"}
    first, second = new.interactions
    # The next replay threads job-7f3a9c21 -> whatever is minted then; the chain stays intact.
    assert first.response == {"jsonrpc": "2.0", "id": 1, "result": {"jobId": "job-7f3a9c21", "eta": 3}}
    assert second.response == {"jsonrpc": "2.0", "id": 2, "result": {"state": "done", "token": "[REDACTED]"}}
    assert (first.latency_ms, second.latency_ms) == (1.5, 2.5)
    assert [i.message for i in new.interactions] == [start, status]
    assert cassette.interactions[0].response == {"jsonrpc": "2.0", "id": 1, "result": {"jobId": "job-7f3a9c21"}}

    only_second = update_cassette(cassette, live, Redactor(), seqs=[1])
    assert only_second.interactions[0] is cassette.interactions[0]
    assert update_cassette(cassette, {}, Redactor()) is cassette
