"""A session-wide notification that varies between two fresh starts of the same build is noise
(issue 27: "the rule applies to every message a session holds"), as a varying answer is.

Found with the Go mcp-cron server (npm ``mcp-cron-linux-amd64``): its
``notifications/tools/list_changed`` is missing on some starts; a replay of an unchanged build
then failed with "did not arrive", though its confirmation pass had heard it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import python_server, record_through_proxy, replay, run_cli

pytestmark = pytest.mark.integration

RACY = Path(__file__).parent / "servers" / "racy_notice_server.py"


async def _session(client: Client) -> dict[str, Any]:
    await client.call_tool("refresh", {})
    return {}


def test_a_notice_one_start_sends_and_another_does_not_is_noise(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    server = f"env STARTS_FILE={starts} {python_server(RACY)}"
    cassette = tmp_path / "racy.jsonl"
    record_through_proxy(server, cassette, _session, mode="legacy")  # the handshake era, as mcp-cron
    assert "notifications/tools/list_changed" in cassette.read_text("utf-8")
    run = replay(server, cassette, report=tmp_path / "r.json", gate=False)
    assert len(starts.read_text().splitlines()) == 3, run.describe()  # recording, first pass, confirmation
    assert run.code == 0 and run.findings() == [], run.describe()
    noise = [n for i in run.interactions() for n in i["noise"]]
    assert [n["path"] for n in noise] == ["$.notifications[method=notifications/tools/list_changed]"], run.describe()


def test_a_notice_both_live_starts_dropped_stays_a_finding_beside_one_that_varied(tmp_path: Path) -> None:
    # resources/list_changed on the recording's start only; tools/list_changed on even starts.
    starts = tmp_path / "starts"
    server = f"env STARTS_FILE={starts} DROPPED=1 {python_server(RACY)}"
    cassette = tmp_path / "racy.jsonl"
    record_through_proxy(server, cassette, _session, mode="legacy")
    assert "notifications/resources/list_changed" in cassette.read_text("utf-8")
    run = replay(server, cassette, report=tmp_path / "r.json")
    assert len(starts.read_text().splitlines()) == 3, run.describe()
    assert run.code == 1, run.describe()  # the gate fails on the dropped notice alone
    found = [(f["path"], f["class"]) for f in run.findings()]
    assert found == [("$.notifications[method=notifications/resources/list_changed]", "breaking")], run.describe()
    noise = [n["path"] for i in run.interactions() for n in i["noise"]]
    assert noise == ["$.notifications[method=notifications/tools/list_changed]"], run.describe()


def test_calibrate_learns_a_notice_some_starts_send_and_keeps_one_every_start_dropped(tmp_path: Path) -> None:
    """``calibrate`` (starts 1 to 4) hears ``tools/list_changed`` on starts 2 and 4 only: one rule
    for that one notice, so a replay passes on either kind of start without a second one. The
    ``resources/list_changed`` the recording heard is dropped by every start alike: no rule, and
    it still fails."""
    starts = tmp_path / "starts"
    server = f"env STARTS_FILE={starts} DROPPED=1 {python_server(RACY)}"
    cassette = tmp_path / "racy.jsonl"
    record_through_proxy(server, cassette, _session, mode="legacy")
    done = run_cli("calibrate", "--server", server, "--cassette", cassette, "--runs", "4")
    assert done.code == 0 and len(starts.read_text().splitlines()) == 5, done.describe()
    rules = json.loads(cassette.read_text("utf-8").splitlines()[0])["meta"]["noise"]
    changed = "$.notifications[method=notifications/tools/list_changed]"
    assert [(r["path"], "pattern" in r) for r in rules] == [(changed, False)], rules
    for start in (5, 6):  # one start that sends the notice and one that does not
        run = replay(server, cassette, "--no-confirm", report=tmp_path / f"r{start}.json", gate=False)
        assert len(starts.read_text().splitlines()) == start + 1, run.describe()
        found = [f["path"] for f in run.findings()]
        assert found == ["$.notifications[method=notifications/resources/list_changed]"], run.describe()
        assert [n["path"] for i in run.interactions() for n in i["noise"]] == ([changed] if start % 2 else [])
