"""A session-wide notification that varies between two fresh starts of the same build is noise
(issue 27: "the rule applies to every message a session holds"), as a varying answer is.

Found with the Go mcp-cron server (npm ``mcp-cron-linux-amd64``): its
``notifications/tools/list_changed`` is missing on some starts; a replay of an unchanged build
then failed with "did not arrive", though its confirmation pass had heard it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import python_server, record_through_proxy, replay

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
