"""The gate: whether a finished replay passes, decided by the class of what changed and the grade.

``fail_on`` says which findings fail the run:

- ``breaking`` (the default, for the CLI and the action alike): an interaction with a breaking
  finding fails it; a missing response is breaking. Additive and cosmetic changes are reported,
  and accepted by refreshing the cassette.
- ``any``: any interaction that did not pass (a non-cosmetic finding or a missing response)
  fails it. ``--fail-on-regression`` is this.
- ``none``: findings are only reported.

``min_grade`` applies on top of any of them, and ``min_coverage`` (percent of the tools, prompts
and resource templates the live server lists that some cassette calls, ``grade/coverage.py``) too. Every report carries a ``Gate``: there is one
default, here, and no reader guesses a missing one.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_replay_action.grade.score import GRADES, meets
from mcp_replay_action.model.coverage import GATED, Coverage, percent_text
from mcp_replay_action.model.gate import Gate, GatePolicy
from mcp_replay_action.model.results import CLASS_ORDER, CassetteResult, Score, weighted

# The finding classes that fail the run under each ``fail_on`` (a missing response is breaking).
GATING: dict[str, frozenset[str]] = {
    "breaking": frozenset({"breaking"}),
    "any": frozenset({"breaking", "additive"}),
    "none": frozenset(),
}


def evaluate_gate(
    cassettes: Sequence[CassetteResult], score: Score, policy: GatePolicy, coverage: Coverage | None = None
) -> Gate:
    """Apply ``policy`` to finished results and their ``coverage``. Raises ValueError on an
    unknown grade."""
    # A skipped request was never sent (the server was already gone): the missing response
    # that stopped the replay is what gates, once.
    missing = 0
    classes = dict.fromkeys(CLASS_ORDER, 0)  # interactions that changed, by their worst class
    for c in cassettes:
        for r, n in weighted(c.results):  # a replay's packed results counted, not built
            if r.status == "skipped":
                continue
            missing += n * (r.status == "missing")
            if r.cls is not None:
                classes[r.cls] += n
    breaking, additive = classes["breaking"], classes["additive"]
    reasons: list[str] = []
    gates = GATING[policy.fail_on]
    if policy.fail_on == "breaking" and breaking:
        reasons.append(f"{breaking - missing} breaking change(s) and {missing} missing response(s)")
    elif policy.fail_on == "any" and (breaking or additive):
        changes = f"{breaking - missing} breaking and {additive} additive change(s)"
        reasons.append(f"{changes} and {missing} missing response(s)")
    if policy.min_grade is not None:
        if policy.min_grade not in GRADES:
            raise ValueError(f"unknown grade {policy.min_grade!r}")
        if not meets(score.grade, policy.min_grade):
            reasons.append(f"grade {score.grade} is below the minimum {policy.min_grade}")
    coverage_reason = _coverage_reason(policy.min_coverage, coverage)
    if coverage_reason:
        reasons.append(coverage_reason)
    accepted = tuple((cls, n) for cls, n in classes.items() if n and cls not in gates)
    return Gate(
        passed=not reasons,
        reasons=tuple(reasons),
        policy=policy,
        accepted=sum(n for _, n in accepted),
        accepted_classes=accepted,
        coverage_held=not coverage_reason,
    )


NAMES_IN_REASON = 10  # uncovered names a gate reason spells out


def _coverage_reason(minimum: float | None, coverage: Coverage | None) -> str:
    """Why ``coverage`` fails ``minimum`` (naming what no cassette calls), empty when it holds.
    A coverage nothing proves (no cassette listed tools, prompts or templates) fails: a minimum
    asked for and not shown to hold is not met."""
    if minimum is None:
        return ""
    percent = coverage.percent if coverage is not None else None
    if coverage is None or percent is None:
        return (
            f"coverage unknown (min {minimum:g}%): no cassette lists tools, prompts or resource templates"
            " (tools/list, prompts/list, resources/templates/list) to measure it by"
        )
    if percent >= minimum:
        return ""
    parts = []
    for kind in coverage.kinds:
        if kind.kind in GATED and kind.uncovered:
            names = ", ".join(kind.uncovered[:NAMES_IN_REASON])
            more = len(kind.uncovered) - NAMES_IN_REASON
            parts.append(f"{kind.kind} {names}" + (f" and {more} more" if more > 0 else ""))
    return f"coverage {percent_text(percent)} is below the minimum {minimum:g}%; never called: " + "; ".join(parts)
