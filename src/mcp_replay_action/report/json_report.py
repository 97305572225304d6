"""The JSON report: the versioned, machine-readable contract (``"schema": "mcp-replay/report@1"``),
documented in ``docs/report-format.md`` and described by ``schemas/report-1.schema.json``.

Named ``json_report``, not ``json``: no module of the package shares a name with the standard
library (``tests/test_layout.py``).

Compatibility rule for ``@1``: fields are only ever added. Removing or renaming a field, or
changing its type or meaning, bumps the schema to ``@2``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING

from mcp_replay_action import __version__
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.coverage import Coverage, Listed
from mcp_replay_action.model.gate import gate_from_json
from mcp_replay_action.model.results import (
    REPORT_SCHEMA,
    CassetteResult,
    Finding,
    InteractionResult,
    Report,
    Score,
    Substitution,
)
from mcp_replay_action.report import _format
from mcp_replay_action.values.safe import text_of
from mcp_replay_action.values.size import tokens

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

SCHEMA_FILE = "report-1.schema.json"


def to_dict(report: Report) -> JSONObject:
    """The report as plain JSON data following ``mcp-replay/report@1``. Every value is
    JSON-serialisable and strictly valid (no NaN, no lone surrogates)."""
    return _document(report, lazy=False)


def stream(report: Report) -> Iterator[str]:
    """``dumps(report)`` in pieces, each interaction made into JSON only as its turn comes, so a
    report of 100,000 interactions is written without being held whole."""
    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, allow_nan=False)
    # The pure-Python encoder (what dumps uses with an indent) reads a list by iterating it.
    yield from encoder.iterencode(_document(report, lazy=True))
    yield "\n"


class _Interactions(list):  # type: ignore[type-arg]
    """The interactions of one cassette as the JSON encoder iterates them: made one at a time."""

    def __init__(self, results: Sequence[InteractionResult]) -> None:
        super().__init__()
        self.results = results

    def __iter__(self) -> Iterator[JSONObject]:  # type: ignore[override]
        return (_interaction(r) for r in self.results)

    def __len__(self) -> int:
        return len(self.results)


def _document(report: Report, *, lazy: bool) -> JSONObject:
    return {
        "schema": REPORT_SCHEMA,
        "tool_version": report.tool_version or __version__,
        "target": text_of(_format.public_target(report.target)),
        **_score_fields(report.score),
        "passed": report.passed,
        "failed": report.failed,
        "missing": report.missing,
        "skipped": _format.skipped(report),
        "total": report.total,
        "gate": _plain(report.gate.to_json()),
        **({"coverage": _plain(report.coverage.to_json())} if report.coverage is not None else {}),
        "cassettes": [_cassette(c, lazy) for c in report.cassettes],
    }


def dumps(report: Report, *, indent: int | None = 2) -> str:
    """The report as JSON text (UTF-8 safe, ends with a newline)."""
    return json.dumps(to_dict(report), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


@lru_cache(maxsize=1)
def schema() -> JSONObject:
    """The JSON Schema of the report (``schemas/report-1.schema.json``)."""
    text = resources.files("mcp_replay_action").joinpath("schemas", SCHEMA_FILE).read_text("utf-8")
    loaded: JSONObject = json.loads(text)
    return loaded


def _score_fields(score: Score) -> JSONObject:
    return {
        "grade": score.grade,
        "score": round(score.score, 2),
        "capped": score.capped,
        "breaking_capped": score.breaking_capped,
        "dimensions": {
            "responsiveness": round(score.responsiveness, 4),
            "match_rate": round(score.match_rate, 4),
            "error_parity": round(score.error_parity, 4),
            "structural_stability": round(score.structural_stability, 4),
        },
    }


def _cassette(cassette: CassetteResult, lazy: bool = False) -> JSONObject:
    return {
        "path": text_of(cassette.path),
        **_score_fields(cassette.score),
        "era": cassette.era,
        "protocol_version": text_of(cassette.protocol_version),
        "replayed_era": cassette.replayed_era,
        "era_skipped": [text_of(s) for s in cassette.era_skipped],
        "notes": [text_of(s) for s in cassette.notes],
        "duration_s": round(cassette.duration_s, 3),
        "passed": cassette.passed,
        "failed": cassette.failed,
        "missing": cassette.missing,
        "skipped": _format.skipped(cassette),
        "total": len(cassette.results),
        "error": text_of(cassette.error),
        "stderr_tail": text_of(cassette.stderr_tail),
        "non_json_lines": cassette.non_json_lines,
        **({"listed": _plain(cassette.listed.to_json())} if cassette.listed is not None else {}),
        "interactions": _Interactions(cassette.results) if lazy else [_interaction(r) for r in cassette.results],
    }


def _interaction(result: InteractionResult) -> JSONObject:
    return {
        "seq": result.seq,
        "line": result.line,
        "method": text_of(result.method),
        "name": None if result.name is None else text_of(result.name),
        "status": result.status,
        "kind": result.kind,
        "class": result.cls,
        "latency_ms": _number(result.latency_ms),
        "recorded_latency_ms": _number(result.recorded_latency_ms),
        "recorded_error": result.recorded_error,
        "live_error": result.live_error,
        "recorded_bytes": result.recorded_bytes,
        "recorded_tokens": None if result.recorded_bytes is None else tokens(result.recorded_bytes),
        "live_bytes": result.live_bytes,
        "live_tokens": None if result.live_bytes is None else tokens(result.live_bytes),
        "findings": [_finding(f) for f in result.findings],
        "substitutions": [{"recorded": text_of(x.recorded), "live": text_of(x.live)} for x in result.substitutions],
        "noise": [_finding(f) for f in result.noise],
    }


def _finding(finding: Finding) -> JSONObject:
    return {
        "kind": finding.kind,
        "class": finding.cls,
        "path": text_of(finding.path),
        "message": text_of(finding.message),
        "before": _plain(finding.before),
        "after": _plain(finding.after),
        "diff": text_of(finding.diff),
        "rule": finding.rule,
        "also": [text_of(place) for place in finding.also],
    }


def _number(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, 3)


def _plain(value: JSON) -> JSON:
    """``value`` as strictly valid JSON data: non-string keys become strings, tuples lists,
    non-finite floats and unknown objects their text, lone surrogates escaped."""
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, str):
        return text_of(value)
    if isinstance(value, dict):
        return {("null" if k is None else text_of(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return text_of(repr(value))


def from_dict(data: JSON, where: str = "report") -> Report:
    """A Report from JSON data that may come from untrusted code (the comment file a fork's run
    uploads): checked against the report's JSON Schema first, so every field read below has the
    type the schema promises. Raises ConfigError naming ``where`` and the first violation."""
    from mcp_replay_action.errors import ConfigError

    errors = sorted(_validator().iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        first = errors[0]
        at = "/".join(str(p) for p in first.absolute_path) or "the top"
        raise ConfigError(f"{where}: not a valid report at {at}: {first.message[:200]}")
    return Report(
        cassettes=tuple(_cassette_from(c) for c in data["cassettes"]),
        score=_score_from(data),
        target=str(data.get("target") or ""),
        tool_version=str(data.get("tool_version") or ""),
        gate=gate_from_json(data["gate"]),
        coverage=Coverage.from_json(data["coverage"]) if "coverage" in data else None,
    )


@lru_cache(maxsize=1)
def _validator() -> Validator:
    import jsonschema

    return jsonschema.Draft202012Validator(schema())


def _score_from(data: JSONObject) -> Score:
    dims = data.get("dimensions") or {}
    return Score(
        score=float(data["score"]),
        grade=str(data["grade"]),
        responsiveness=float(dims.get("responsiveness", 0.0)),
        match_rate=float(dims.get("match_rate", 0.0)),
        error_parity=float(dims.get("error_parity", 0.0)),
        structural_stability=float(dims.get("structural_stability", 0.0)),
        capped=bool(data.get("capped", False)),
        breaking_capped=bool(data.get("breaking_capped", False)),
    )


def _cassette_from(data: JSONObject) -> CassetteResult:
    return CassetteResult(
        path=str(data["path"]),
        results=tuple(_interaction_from(i) for i in data.get("interactions") or ()),
        score=_score_from(data),
        era=str(data.get("era") or ""),
        protocol_version=str(data.get("protocol_version") or ""),
        replayed_era=str(data.get("replayed_era") or ""),
        era_skipped=tuple(str(s) for s in data.get("era_skipped") or ()),
        notes=tuple(str(s) for s in data.get("notes") or ()),
        duration_s=float(data.get("duration_s") or 0.0),
        error=str(data.get("error") or ""),
        stderr_tail=str(data.get("stderr_tail") or ""),
        non_json_lines=int(data.get("non_json_lines") or 0),
        listed=Listed.from_json(data["listed"]) if "listed" in data else None,
    )


def _interaction_from(data: JSONObject) -> InteractionResult:
    latency = data.get("latency_ms")
    recorded_latency = data.get("recorded_latency_ms")
    live_error = data.get("live_error")
    recorded_bytes, live_bytes = data.get("recorded_bytes"), data.get("live_bytes")
    return InteractionResult(
        seq=int(data["seq"]),
        line=int(data["line"]),
        method=str(data["method"]),
        name=None if data.get("name") is None else str(data["name"]),
        status=data["status"],
        findings=tuple(_finding_from(f) for f in data.get("findings") or ()),
        noise=tuple(_finding_from(f) for f in data.get("noise") or ()),
        latency_ms=None if latency is None else float(latency),
        recorded_latency_ms=None if recorded_latency is None else float(recorded_latency),
        recorded_error=bool(data.get("recorded_error", False)),
        live_error=None if live_error is None else bool(live_error),
        recorded_bytes=None if recorded_bytes is None else int(recorded_bytes),
        live_bytes=None if live_bytes is None else int(live_bytes),
        substitutions=tuple(
            Substitution(str(s.get("recorded", "")), str(s.get("live", ""))) for s in data.get("substitutions") or ()
        ),
    )


def _finding_from(f: JSONObject) -> Finding:
    return Finding(
        kind=f["kind"],
        cls=f["class"],
        path=str(f.get("path") or ""),
        message=str(f.get("message") or ""),
        before=f.get("before"),
        after=f.get("after"),
        diff=str(f.get("diff") or ""),
        rule=str(f.get("rule") or ""),
        also=tuple(str(place) for place in f.get("also") or ()),
    )
