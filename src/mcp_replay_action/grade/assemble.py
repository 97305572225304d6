"""Report assembly: per-cassette results into one ``Report``, scored over every interaction and
gated. The one place a ``Report`` is put together, for replay, diff, the demo and the pytest
plugin alike."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_replay_action import __version__
from mcp_replay_action.grade.coverage import measure
from mcp_replay_action.grade.gate import evaluate_gate
from mcp_replay_action.grade.score import weighted_score
from mcp_replay_action.model.gate import GatePolicy
from mcp_replay_action.model.results import CassetteResult, Report, weighted


def build_report(results: Sequence[CassetteResult], *, target: str = "", policy: GatePolicy | None = None) -> Report:
    """Combine per-cassette results into one report, scored over every interaction, and gate it
    (``policy`` None: the default gate), with the coverage of what the live server listed."""
    overall = weighted_score(pair for c in results for pair in weighted(c.results))
    coverage = measure(results)
    gate = evaluate_gate(results, overall, policy or GatePolicy(), coverage)
    return Report(
        cassettes=tuple(results),
        score=overall,
        target=target,
        tool_version=__version__,
        gate=gate,
        coverage=coverage,
    )
