"""A cassette recorded in one protocol era, replayed against a server that speaks only the other
(issue 9 section 4): one finding naming both eras on the opening request, the rest skipped; never
a cascade of refusals, a crash or a silent pass.

The servers are the official ``mcp`` SDK's own serving loops driven one era at a time
(``tests/servers/era_server.py``); the cassettes are recorded through ``mcp-replay record`` with
the SDK client, which probes ``server/discover`` first and falls back to ``initialize`` when a
handshake-only server refuses the probe, so a handshake cassette starts with a refused probe.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, python_server, record_through_proxy, replay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ERAS = ("handshake", "stateless")


def era_server(era: str) -> str:
    return python_server(SERVERS / "era_server.py", "--era", era)


async def session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    assert not (await client.call_tool("echo", {"text": "hi"})).is_error
    assert not (await client.call_tool("add", {"a": 2, "b": 3})).is_error
    return {}


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("eras")
    recorded = {}
    for era in ERAS:
        recorded[era] = out / f"{era}.jsonl"
        record_through_proxy(era_server(era), recorded[era], session)
    return recorded


@pytest.mark.parametrize("era", ERAS)
def test_each_cassette_replays_clean_against_its_own_era(era: str, cassettes: dict[str, Path]) -> None:
    run = replay(era_server(era), cassettes[era], report=cassettes[era].with_suffix(f".{era}.json"))
    assert run.code == 0 and run.findings() == [], run.describe()
    assert run.report is not None and run.report["cassettes"][0]["era"] == era, run.describe()


@pytest.mark.parametrize("era", ERAS)
def test_each_cassette_replays_clean_against_a_server_of_both_eras(era: str, cassettes: dict[str, Path]) -> None:
    """A server that gained the stateless era (the SDK's default ``run``, as after an upgrade from
    a 1.x SDK) still passes a handshake cassette: the refused ``server/discover`` probe the SDK
    client sent first is not replayed (the server would accept it and open a stateless
    connection, and refuse the recorded ``initialize``), and shows as skipped."""
    run = replay(era_server("both"), cassettes[era], report=cassettes[era].with_suffix(f".{era}-both.json"))
    assert run.code == 0 and run.findings() == [], run.describe()
    statuses = [(i["method"], i["status"]) for i in run.interactions()]
    probe = [("server/discover", "skipped")] if era == "handshake" else [("server/discover", "pass")]
    assert statuses[:1] == probe and all(s == "pass" for _, s in statuses[1:]), statuses


@pytest.mark.parametrize(("recorded", "live"), [("handshake", "stateless"), ("stateless", "handshake")])
def test_the_other_era_is_one_finding_naming_both_eras(recorded: str, live: str, cassettes: dict[str, Path]) -> None:
    cassette = cassettes[recorded]
    run = replay(era_server(live), cassette, report=cassette.with_suffix(f".vs-{live}.json"), gate=False)
    assert run.code == 1, run.describe()
    assert "Traceback" not in run.stderr, run.describe()
    [finding] = run.findings()
    opener = "initialize" if recorded == "handshake" else "server/discover"
    assert finding["method"] == opener and finding["kind"] == "error-status-change", finding
    message = finding["message"]
    assert f"recorded in the {recorded} era" in message and f"only the {live} era" in message, message
    statuses = {i["method"]: i["status"] for i in run.interactions()}
    assert statuses.pop(opener) == "fail" and set(statuses.values()) == {"skipped"}, statuses
    assert run.report is not None and "protocol era mismatch" in run.report["cassettes"][0]["error"]
    assert "protocol era mismatch" in run.stdout, run.describe()
