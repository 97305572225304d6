"""The JSON report: the versioned, machine-readable contract (``"schema": "mcp-replay/report@1"``),
documented in ``docs/report-format.md`` and described by ``schemas/report-1.schema.json``.

The module is named ``json`` to match the other formats (``report.json.to_dict``). Absolute
imports make ``import json`` below the standard library; callers that also need the standard
library import this one under another name: ``from mcp_replay_action.report import json as
report_json``.

Compatibility rule for ``@1``: fields are only ever added. Removing or renaming a field, or
changing its type or meaning, bumps the schema to ``@2``.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from typing import Any

from mcp_replay_action import __version__
from mcp_replay_action.report import _format
from mcp_replay_action.report.safe import text_of
from mcp_replay_action.results import (
    REPORT_SCHEMA,
    CassetteResult,
    Finding,
    InteractionResult,
    Report,
    Score,
)

SCHEMA_FILE = "report-1.schema.json"


def to_dict(report: Report) -> dict[str, Any]:
    """The report as plain JSON data following ``mcp-replay/report@1``. Every value is
    JSON-serialisable and strictly valid (no NaN, no lone surrogates)."""
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
        "gate": _plain(report.gate),
        "cassettes": [_cassette(c) for c in report.cassettes],
    }


def dumps(report: Report, *, indent: int | None = 2) -> str:
    """The report as JSON text (UTF-8 safe, ends with a newline)."""
    return json.dumps(to_dict(report), indent=indent, ensure_ascii=False, allow_nan=False) + "\n"


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The JSON Schema of the report (``schemas/report-1.schema.json``)."""
    text = resources.files("mcp_replay_action").joinpath("schemas", SCHEMA_FILE).read_text("utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def _score_fields(score: Score) -> dict[str, Any]:
    return {
        "grade": score.grade,
        "score": round(score.score, 2),
        "capped": score.capped,
        "dimensions": {
            "responsiveness": round(score.responsiveness, 4),
            "match_rate": round(score.match_rate, 4),
            "error_parity": round(score.error_parity, 4),
            "structural_stability": round(score.structural_stability, 4),
        },
    }


def _cassette(cassette: CassetteResult) -> dict[str, Any]:
    return {
        "path": text_of(cassette.path),
        **_score_fields(cassette.score),
        "era": cassette.era,
        "protocol_version": text_of(cassette.protocol_version),
        "duration_s": round(cassette.duration_s, 3),
        "passed": cassette.passed,
        "failed": cassette.failed,
        "missing": cassette.missing,
        "skipped": _format.skipped(cassette),
        "total": len(cassette.results),
        "error": text_of(cassette.error),
        "stderr_tail": text_of(cassette.stderr_tail),
        "non_json_lines": cassette.non_json_lines,
        "interactions": [_interaction(r) for r in cassette.results],
    }


def _interaction(result: InteractionResult) -> dict[str, Any]:
    return {
        "seq": result.seq,
        "line": result.line,
        "method": text_of(result.method),
        "name": None if result.name is None else text_of(result.name),
        "status": result.status,
        "kind": result.kind,
        "class": result.cls,
        "latency_ms": _number(result.latency_ms),
        "recorded_error": result.recorded_error,
        "live_error": result.live_error,
        "findings": [_finding(f) for f in result.findings],
        "substitutions": [{"recorded": text_of(x.recorded), "live": text_of(x.live)} for x in result.substitutions],
    }


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "kind": finding.kind,
        "class": finding.cls,
        "path": text_of(finding.path),
        "message": text_of(finding.message),
        "before": _plain(finding.before),
        "after": _plain(finding.after),
        "diff": text_of(finding.diff),
    }


def _number(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, 3)


def _plain(value: Any) -> Any:
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
