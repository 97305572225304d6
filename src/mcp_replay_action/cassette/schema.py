"""The cassette's JSON Schema (``schemas/cassette-1.schema.json``) and the one reader of an
interaction's JSON, shared by both file formats."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from mcp_replay_action.errors import CassetteError
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import KINDS, Interaction

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

_new = object.__new__


@lru_cache(maxsize=1)
def _schema() -> JSONObject:
    # A path beside the package, not importlib.resources: that module costs every replay's start-up
    # more than reading the file does (the package is always installed as files).
    text = (Path(__file__).parent.parent / "schemas/cassette-1.schema.json").read_text(encoding="utf-8")
    schema: JSONObject = json.loads(text)
    return schema


@lru_cache(maxsize=2)
def _validator(kind: str) -> Validator:
    """A validator for one of the schema's definitions (``header`` or ``interaction``)."""
    import jsonschema  # ~100 ms: only for a document the quick check below cannot vouch for

    schema = {**_schema(), "$ref": f"#/$defs/{kind}"}
    return jsonschema.validators.validator_for(schema)(schema)


_JSON_TYPES: JSONObject = {"object": dict, "array": list, "string": str, "null": type(None), "boolean": bool}
_SIMPLE_KEYWORDS = frozenset({"type", "enum", "const", "properties", "required", "items", "description"})


def _fits(schema: JSON, value: JSON) -> bool:
    """Whether ``value`` fits a schema fragment that uses only the simple keywords above; False
    (so the full validator decides) for anything else, which keeps this check never laxer."""
    if not isinstance(schema, dict) or not _SIMPLE_KEYWORDS.issuperset(schema):
        return False
    if "const" in schema and not (value == schema["const"] and type(value) is type(schema["const"])):
        return False
    if "enum" in schema and not any(value == e and type(value) is type(e) for e in schema["enum"]):
        return False
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not all(t in _JSON_TYPES for t in types) or not any(type(value) is _JSON_TYPES[t] for t in types):
            return False
    if isinstance(value, dict):
        if any(k not in value for k in schema.get("required", ())):
            return False
        props = schema.get("properties", {})
        return all(_fits(props[k], v) for k, v in value.items() if k in props)
    if isinstance(value, list) and "items" in schema:
        return all(_fits(schema["items"], v) for v in value)
    return True


def schema_error(kind: str, doc: JSON) -> str | None:
    """The first reason ``doc`` does not fit ``$defs/kind``, in one line, or None."""
    if kind == "header" and _fits(_schema()["$defs"]["header"], doc):
        return None
    import jsonschema

    error = jsonschema.exceptions.best_match(_validator(kind).iter_errors(doc))
    if error is None:
        return None
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    return f"{where.lstrip('.') or 'line'}: {error.message}"


def _fast_ok(doc: JSONObject) -> bool:
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


def interaction_from_json(doc: JSON, *, path: str, line: int) -> Interaction:
    """Build an Interaction from one decoded line, or raise CassetteError naming ``path:line``."""
    if not isinstance(doc, dict):
        raise CassetteError(path, line, f"expected a JSON object, got {type(doc).__name__}")
    if not _fast_ok(doc) or not isinstance(doc.get("ts", 0), (int, float)):
        reason = schema_error("interaction", doc)
        if reason:
            raise CassetteError(path, line, f"invalid interaction: {reason}")
    # Built without the frozen dataclass's __init__ (one object.__setattr__ per field, three times
    # the cost): a cassette of 10,000 calls makes 10,000 of them before its server starts. Every
    # field is set, in order, so the object equals the one __init__ would make.
    inter: Interaction = _new(Interaction)
    inter.__dict__.update(
        seq=doc["seq"],
        kind=doc["kind"],
        message=doc["message"],
        response=doc.get("response"),
        ts=float(doc.get("ts", 0.0)),
        latency_ms=doc.get("latency_ms"),
        transport=doc.get("transport"),
        line=line,
    )
    return inter
