"""The gate's data: the policy a run is held to (``GatePolicy``) and the verdict a report carries
(``Gate``), with its JSON form. Deciding it is ``grade/gate.py``'s ``evaluate_gate``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from mcp_replay_action.model import JSON, JSONObject

FailOn = Literal["breaking", "any", "none"]
FAIL_ON: tuple[FailOn, ...] = ("breaking", "any", "none")
DEFAULT_FAIL_ON: FailOn = "breaking"


@dataclass(frozen=True)
class GatePolicy:
    """What fails a run: findings of a class (``fail_on``), a grade below ``min_grade`` and a
    coverage below ``min_coverage`` percent."""

    fail_on: FailOn = DEFAULT_FAIL_ON
    min_grade: str | None = None
    min_coverage: float | None = None

    def describe(self) -> str:
        """``fail on breaking, min grade B, min coverage 80%``: the conditions, in words."""
        parts = [f"fail on {self.fail_on}" if self.fail_on != "none" else "report only"]
        if self.min_grade:
            parts.append(f"min grade {self.min_grade}")
        if self.min_coverage is not None:
            parts.append(f"min coverage {self.min_coverage:g}%")
        return ", ".join(parts)


@dataclass(frozen=True)
class Gate:
    """The gate as applied to one report: passed or not, why not, and how many interactions
    changed without failing it (``accepted``: accept them with a refresh), by their worst class
    (``accepted_classes``: ``(("additive", 1), ("cosmetic", 2))``, worst first). With
    ``min_coverage``, ``coverage_held`` says whether the coverage met it (its reason is the last)."""

    passed: bool = True
    reasons: tuple[str, ...] = ()
    policy: GatePolicy = field(default_factory=GatePolicy)
    accepted: int = 0
    accepted_classes: tuple[tuple[str, int], ...] = ()
    coverage_held: bool = True

    def to_json(self) -> JSONObject:
        coverage = {"min_coverage": self.policy.min_coverage, "coverage_held": self.coverage_held}
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "fail_on": self.policy.fail_on,
            "min_grade": self.policy.min_grade,
            "fail_on_regression": self.policy.fail_on == "any",
            "accepted": self.accepted,
            "accepted_classes": dict(self.accepted_classes),
            **(coverage if self.policy.min_coverage is not None else {}),  # only when gated on
        }


def gate_from_json(data: Mapping[str, JSON]) -> Gate:
    """A ``Gate`` from a report's ``gate`` object, already checked against the report schema
    (which requires ``passed`` and ``reasons``). A report from before ``fail_on`` existed says
    ``fail_on_regression`` instead."""
    fail_on = data.get("fail_on")
    if fail_on not in FAIL_ON:
        fail_on = "any" if data.get("fail_on_regression") else DEFAULT_FAIL_ON
    min_grade = data.get("min_grade")
    min_coverage = data.get("min_coverage")
    return Gate(
        passed=bool(data["passed"]),
        reasons=tuple(str(r) for r in data["reasons"]),
        policy=GatePolicy(
            fail_on=fail_on,
            min_grade=min_grade if isinstance(min_grade, str) else None,
            min_coverage=float(min_coverage) if isinstance(min_coverage, int | float) else None,
        ),
        accepted=int(data.get("accepted") or 0),
        accepted_classes=tuple((str(c), int(n)) for c, n in (data.get("accepted_classes") or {}).items()),
        coverage_held=bool(data.get("coverage_held", True)),
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
