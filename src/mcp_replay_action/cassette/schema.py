"""The cassette's JSON Schema (``schemas/cassette-1.schema.json``) and the one reader of an
interaction's JSON, shared by both file formats."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

import jsonschema

from mcp_replay_action.cassette.model import KINDS, Interaction
from mcp_replay_action.errors import CassetteError


@lru_cache(maxsize=2)
def _validator(kind: str) -> Any:
    """A validator for one of the schema's definitions (``header`` or ``interaction``)."""
    text = resources.files("mcp_replay_action").joinpath("schemas/cassette-1.schema.json").read_text()
    schema = {**json.loads(text), "$ref": f"#/$defs/{kind}"}
    return jsonschema.validators.validator_for(schema)(schema)


def schema_error(kind: str, doc: Any) -> str | None:
    """The first reason ``doc`` does not fit ``$defs/kind``, in one line, or None."""
    error = jsonschema.exceptions.best_match(_validator(kind).iter_errors(doc))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where.lstrip('.') or 'line'}: {error.message}"


def _fast_ok(doc: dict[str, Any]) -> bool:
    """A cheap structural check that lets the common well-formed line skip full schema validation."""
    kind = doc.get("kind")
    msg = doc.get("message")
    if not isinstance(doc.get("seq"), int) or doc["seq"] < 0 or kind not in KINDS:
        return False
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return False
    resp = doc.get("response")
    if resp is not None and (not isinstance(resp, dict) or resp.get("jsonrpc") != "2.0"):
        return False
    if kind in ("request", "server-request"):
        return "id" in msg and isinstance(msg.get("method"), str) and (kind != "request" or isinstance(resp, dict))
    return isinstance(msg.get("method"), str) and "id" not in msg


def interaction_from_json(doc: Any, *, path: str, line: int) -> Interaction:
    """Build an Interaction from one decoded line, or raise CassetteError naming ``path:line``."""
    if not isinstance(doc, dict):
        raise CassetteError(path, line, f"expected a JSON object, got {type(doc).__name__}")
    if not _fast_ok(doc) or not isinstance(doc.get("ts", 0), (int, float)):
        reason = schema_error("interaction", doc)
        if reason:
            raise CassetteError(path, line, f"invalid interaction: {reason}")
    return Interaction(
        seq=doc["seq"],
        kind=doc["kind"],
        message=doc["message"],
        response=doc.get("response"),
        ts=float(doc.get("ts", 0.0)),
        latency_ms=doc.get("latency_ms"),
        transport=doc.get("transport"),
        line=line,
    )
