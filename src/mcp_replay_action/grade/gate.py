"""The gate: whether a finished replay passes, decided by the class of what changed and the grade.

``fail_on`` says which findings fail the run:

- ``breaking`` (the default, for the CLI and the action alike): an interaction with a breaking
  finding fails it; a missing response is breaking. Additive and cosmetic changes are reported,
  and accepted by refreshing the cassette.
- ``any``: any interaction that did not pass (a non-cosmetic finding or a missing response)
  fails it. ``--fail-on-regression`` is this.
- ``none``: findings are only reported.

``min_grade`` applies on top of any of them. Every report carries a ``Gate``: there is one
default, here, and no reader guesses a missing one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp_replay_action.model.results import CassetteResult, Score

FailOn = Literal["breaking", "any", "none"]
FAIL_ON: tuple[FailOn, ...] = ("breaking", "any", "none")
DEFAULT_FAIL_ON: FailOn = "breaking"
# The finding classes that fail the run under each ``fail_on`` (a missing response is breaking).
GATING: dict[str, frozenset[str]] = {
    "breaking": frozenset({"breaking"}),
    "any": frozenset({"breaking", "additive"}),
    "none": frozenset(),
}


@dataclass(frozen=True)
class GatePolicy:
    """What fails a run: findings of a class (``fail_on``) and a grade below ``min_grade``."""

    fail_on: FailOn = DEFAULT_FAIL_ON
    min_grade: str | None = None

    def describe(self) -> str:
        """``fail on breaking, min grade B``: the conditions, in words."""
        parts = [f"fail on {self.fail_on}" if self.fail_on != "none" else "report only"]
        if self.min_grade:
            parts.append(f"min grade {self.min_grade}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Gate:
    """The gate as applied to one report: passed or not, why not, and how many interactions
    changed without failing it (``accepted``: accept them with a refresh), by their worst class
    (``accepted_classes``: ``(("additive", 1), ("cosmetic", 2))``, worst first)."""

    passed: bool = True
    reasons: tuple[str, ...] = ()
    policy: GatePolicy = field(default_factory=GatePolicy)
    accepted: int = 0
    accepted_classes: tuple[tuple[str, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "fail_on": self.policy.fail_on,
            "min_grade": self.policy.min_grade,
            "fail_on_regression": self.policy.fail_on == "any",
            "accepted": self.accepted,
            "accepted_classes": dict(self.accepted_classes),
        }


def gate_from_json(data: Mapping[str, Any]) -> Gate:
    """A ``Gate`` from a report's ``gate`` object, already checked against the report schema
    (which requires ``passed`` and ``reasons``). A report from before ``fail_on`` existed says
    ``fail_on_regression`` instead."""
    fail_on = data.get("fail_on")
    if fail_on not in FAIL_ON:
        fail_on = "any" if data.get("fail_on_regression") else DEFAULT_FAIL_ON
    min_grade = data.get("min_grade")
    return Gate(
        passed=bool(data["passed"]),
        reasons=tuple(str(r) for r in data["reasons"]),
        policy=GatePolicy(fail_on=fail_on, min_grade=min_grade if isinstance(min_grade, str) else None),
        accepted=int(data.get("accepted") or 0),
        accepted_classes=tuple((str(c), int(n)) for c, n in (data.get("accepted_classes") or {}).items()),
    )


def fail_on_from_flags(fail_on: str | None, fail_on_regression: bool) -> FailOn:
    """One ``fail_on`` from the two ways of saying it (``--fail-on`` and the older
    ``--fail-on-regression``, which means ``any``). Raises ConfigError when they disagree."""
    from mcp_replay_action.errors import ConfigError

    if fail_on is not None and fail_on not in FAIL_ON:
        raise ConfigError(f"--fail-on expects one of {', '.join(FAIL_ON)}, got {fail_on!r}")
    if fail_on_regression:
        if fail_on not in (None, "any"):
            raise ConfigError(f"--fail-on-regression means --fail-on any; it contradicts --fail-on {fail_on}")
        return "any"
    return fail_on if fail_on is not None else DEFAULT_FAIL_ON  # type: ignore[return-value]


def evaluate_gate(cassettes: Sequence[CassetteResult], score: Score, policy: GatePolicy) -> Gate:
    """Apply ``policy`` to finished results. Raises ValueError on an unknown grade."""
    from mcp_replay_action.grade.score import GRADES, meets
    from mcp_replay_action.model.results import CLASS_ORDER, weighted

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
    accepted = tuple((cls, n) for cls, n in classes.items() if n and cls not in gates)
    return Gate(
        passed=not reasons,
        reasons=tuple(reasons),
        policy=policy,
        accepted=sum(n for _, n in accepted),
        accepted_classes=accepted,
    )
