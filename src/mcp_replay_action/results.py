"""The plain data a replay produces and every report renders: findings, per-interaction results,
per-cassette results, the score and the whole report. Frozen dataclasses, no behaviour beyond
simple derived properties."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from mcp_replay_action.gate import Gate

# Regression kinds, worst first (the order annotations and summaries sort by).
FindingKind = Literal[
    "missing-response", "error-status-change", "structure-change", "ordering-change", "value-change", "latency"
]
KIND_ORDER: tuple[str, ...] = (
    "missing-response",
    "error-status-change",
    "structure-change",
    "ordering-change",
    "value-change",
    "latency",  # only with --max-slowdown: the answer came, the same, but much slower
)
# Impact classes, worst first.
FindingClass = Literal["breaking", "additive", "cosmetic"]
CLASS_ORDER: tuple[str, ...] = ("breaking", "additive", "cosmetic")
Status = Literal["pass", "fail", "missing", "skipped"]

REPORT_SCHEMA = "mcp-replay/report@1"


@dataclass(frozen=True)
class Finding:
    """One difference between a recorded and a live response.

    ``path`` is JSONPath-like (``$.result.tools[name=add].inputSchema.required``);
    ``before``/``after`` are short renderings (capped, never multi-kilobyte); ``diff`` is a capped
    unified diff for long text changes, else empty.
    """

    kind: FindingKind
    cls: FindingClass
    path: str
    message: str
    before: Any = None
    after: Any = None
    diff: str = ""

    def to_json(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "class": self.cls,
            "path": self.path,
            "message": self.message,
            "before": self.before,
            "after": self.after,
        }
        if self.diff:
            out["diff"] = self.diff
        return out


@dataclass(frozen=True)
class Substitution:
    """A value the live server minted afresh, sent in place of the recorded one (``carry.py``)."""

    recorded: str
    live: str


@dataclass(frozen=True)
class InteractionResult:
    """The verdict for one recorded request."""

    seq: int
    line: int
    method: str
    name: str | None
    status: Status
    findings: tuple[Finding, ...] = ()
    latency_ms: float | None = None  # the live answer's
    recorded_latency_ms: float | None = None  # the cassette's, when it kept one
    recorded_error: bool = False
    live_error: bool | None = None  # None when no live response arrived
    substitutions: tuple[Substitution, ...] = ()  # what was sent in place of recorded values
    # Differences that also differ between two live runs of the same build (``noise.py``):
    # reported, never gating.
    noise: tuple[Finding, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.method} {self.name}" if self.name else self.method

    @property
    def kind(self) -> str | None:
        """The worst finding kind, or None."""
        kinds = [f.kind for f in self.findings if f.cls != "cosmetic"] or [f.kind for f in self.findings]
        return min(kinds, key=KIND_ORDER.index) if kinds else None

    @property
    def cls(self) -> str | None:
        """The worst finding class, or None."""
        classes = [f.cls for f in self.findings]
        return min(classes, key=CLASS_ORDER.index) if classes else None


@dataclass(frozen=True)
class Score:
    """The 0-100 score and its four dimensions, each a fraction in [0, 1]."""

    score: float
    grade: str
    responsiveness: float
    match_rate: float
    error_parity: float
    structural_stability: float
    capped: bool = False  # True when a missing response capped the grade at D
    breaking_capped: bool = False  # True when a breaking finding lowered the letter to B (``grade.py``)


@dataclass(frozen=True)
class CassetteResult:
    """Everything one cassette's replay produced."""

    path: str
    results: tuple[InteractionResult, ...]
    score: Score
    era: str = ""
    protocol_version: str = ""
    duration_s: float = 0.0
    error: str = ""  # an infrastructure failure that stopped the replay early (one line)
    stderr_tail: str = ""
    non_json_lines: int = 0

    @property
    def passed(self) -> int:
        return sum(1 for r in self.results if r.status == "pass")

    @property
    def failed(self) -> int:
        return sum(1 for r in self.results if r.status == "fail")

    @property
    def missing(self) -> int:
        return sum(1 for r in self.results if r.status == "missing")


@dataclass(frozen=True)
class Report:
    """A finished replay over one or more cassettes. Reports render this and never re-compute it."""

    cassettes: tuple[CassetteResult, ...]
    score: Score
    target: str = ""
    tool_version: str = ""
    gate: Gate = field(default_factory=Gate)

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.cassettes)

    @property
    def failed(self) -> int:
        return sum(c.failed for c in self.cassettes)

    @property
    def missing(self) -> int:
        return sum(c.missing for c in self.cassettes)

    @property
    def total(self) -> int:
        return sum(len(c.results) for c in self.cassettes)
