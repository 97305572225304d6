"""The repository's own sample cassettes (replayed by the dogfood workflow) stay in step with the
bundled sample servers: clean against the healthy build, caught against the regressed twin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_replay_action.cassette import load
from mcp_replay_action.plan import Plan
from mcp_replay_action.replay.engine import replay_cassette
from mcp_replay_action.scenarios import load_scenarios
from mcp_replay_action.transport.stdio import StdioTransport

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
CASSETTES = sorted((ROOT / "cassettes").glob("**/*.jsonl"))
HEALTHY = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]


def test_there_are_sample_cassettes_in_both_eras() -> None:
    eras = {load(path).meta.get("era") for path in CASSETTES}
    assert {"handshake", "stateless"} <= eras


@pytest.mark.parametrize("path", CASSETTES, ids=lambda p: p.name)
def test_sample_cassette_replays_clean_and_catches_the_twin(path: Path) -> None:
    cassette = load(path)
    options = Plan(timeout=10.0)
    healthy = replay_cassette(cassette, StdioTransport(HEALTHY), options)
    assert healthy.score.grade == "A" and healthy.failed == 0 and healthy.missing == 0, healthy.results
    regressed = replay_cassette(cassette, StdioTransport([*HEALTHY, "--regressed"]), options)
    assert "value-change" in {r.kind for r in regressed.results}


def test_the_scenarios_file_is_valid() -> None:
    scenarios = load_scenarios(ROOT / "cassettes" / "calc" / "scenarios.yml")
    assert {s.name for s in scenarios.scenarios} == {"handshake", "stateless"}


def test_a_streamed_cassette_is_read_once_per_live_run(tmp_path: Path) -> None:
    """A cassette too big to hold is read from disk on every pass over it: a replay that fails
    and confirms reads it once for each of its two live runs (and up to the handshake for the
    era), not once more for every list it used to gather."""
    from dataclasses import replace as with_

    from mcp_replay_action.cassette.jsonl import StreamedInteractions

    class Counted(StreamedInteractions):
        whole = 0

        def __iter__(self):  # type: ignore[no-untyped-def]
            yield from super().__iter__()
            Counted.whole += 1  # only a pass that read every line gets here

    path = next(p for p in CASSETTES if "handshake" in p.name)
    held = load(path)
    streamed = with_(held, interactions=Counted(str(path), len(held.interactions)))
    result = replay_cassette(
        streamed,
        StdioTransport([*HEALTHY, "--regressed"]),
        Plan(timeout=10.0),
        confirm=lambda: StdioTransport([*HEALTHY, "--regressed"]),
    )
    assert result.failed, result.results
    assert Counted.whole <= 2
