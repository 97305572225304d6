"""The cassette: a JSONL file of recorded MCP interactions.

Line 1 is a header (``{"schema": "mcp-replay/cassette@1", "meta": {...}}``); every further line is
one interaction, so a line number points at exactly one interaction (annotations rely on it).
This module knows files and nothing of servers.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

import jsonschema

from mcp_replay_action.errors import CassetteError
from mcp_replay_action.files import atomic_write_text as atomic_write_text  # re-exported for its importers

SCHEMA_ID = "mcp-replay/cassette@1"
Kind = Literal["request", "notification", "server-request", "server-notification"]
KINDS: tuple[str, ...] = ("request", "notification", "server-request", "server-notification")


def subject_of(message: Mapping[str, Any]) -> str | None:
    """The tool, prompt or resource a request is about (its ``name`` or ``uri``), for display."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    for key in ("name", "uri"):
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None


@dataclass(frozen=True)
class Interaction:
    """One recorded exchange.

    ``message`` is what the initiator sent: the client for ``request``/``notification``, the server
    for ``server-request``/``server-notification``. ``response`` is the answer to it: the server's
    response to a request, the client's response to a server-request, ``None`` for notifications.
    ``line`` is the 1-based line in the file it was read from (0 when not read from a file).
    """

    seq: int
    kind: Kind
    message: dict[str, Any]
    response: dict[str, Any] | None = None
    ts: float = 0.0
    latency_ms: float | None = None
    transport: dict[str, Any] | None = None
    line: int = 0

    @property
    def method(self) -> str:
        return str(self.message.get("method", ""))

    @property
    def tool_name(self) -> str | None:
        """The tool, prompt or resource an interaction is about, for display (``tools/call add``)."""
        return subject_of(self.message)

    @property
    def label(self) -> str:
        name = self.tool_name
        return f"{self.method} {name}" if name else self.method

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "kind": self.kind,
            "ts": round(self.ts, 6),
            "message": self.message,
            "response": self.response,
        }
        if self.latency_ms is not None:
            out["latency_ms"] = round(self.latency_ms, 3)
        if self.transport:
            out["transport"] = self.transport
        return out


@dataclass(frozen=True)
class Cassette:
    """A header's ``meta`` plus the interactions, in recorded order."""

    meta: dict[str, Any] = field(default_factory=dict)
    interactions: tuple[Interaction, ...] = ()
    path: str = ""
    source_format: Literal["jsonl", "mcp-recorder-json"] = "jsonl"

    @property
    def requests(self) -> tuple[Interaction, ...]:
        return tuple(i for i in self.interactions if i.kind == "request")

    def with_interactions(self, interactions: Iterable[Interaction]) -> Cassette:
        return replace(self, interactions=tuple(interactions))


@lru_cache(maxsize=2)
def _validator(kind: str) -> Any:
    """A validator for one of the schema's definitions (``header`` or ``interaction``)."""
    text = resources.files("mcp_replay_action").joinpath("schemas/cassette-1.schema.json").read_text()
    schema = {**json.loads(text), "$ref": f"#/$defs/{kind}"}
    return jsonschema.validators.validator_for(schema)(schema)


def _schema_error(kind: str, doc: Any) -> str | None:
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
        reason = _schema_error("interaction", doc)
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


def _decode(text: str, path: str, line: int) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(path, line, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise CassetteError(path, line, "invalid JSON: nested too deeply") from None


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # open() below says why
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        # Reading a FIFO or a device could block forever or never end.
        raise CassetteError(str(path), None, "not a regular file (a FIFO, socket or device)")
    try:
        with open(path, encoding="utf-8") as fh:
            for number, text in enumerate(fh, start=1):
                if text.strip():
                    yield number, text
    except FileNotFoundError:
        raise CassetteError(str(path), None, "no such file") from None
    except UnicodeDecodeError as exc:
        raise CassetteError(str(path), None, f"not UTF-8 text ({exc.reason})") from None
    except IsADirectoryError:
        raise CassetteError(str(path), None, "is a directory, not a cassette") from None


def load(path: str | os.PathLike[str]) -> Cassette:
    """Read a cassette: mcp-replay JSONL, or mcp-recorder's JSON (detected by content)."""
    spath = str(path)
    lines = iter_lines(path)
    first = next(lines, None)
    if first is None:
        raise CassetteError(spath, None, "empty file: expected a header line")
    number, text = first
    stripped = text.lstrip()
    if stripped.startswith("{") and not stripped.rstrip().endswith("}"):
        # A pretty-printed document spanning many lines: the mcp-recorder format.
        return _load_foreign(spath)
    header = _decode(text, spath, number)
    if isinstance(header, dict) and "version" in header and "interactions" in header:
        return _load_foreign(spath)
    if not isinstance(header, dict) or "schema" not in header:
        raise CassetteError(
            spath, number, 'missing header: the first line must be {"schema": "mcp-replay/cassette@1", ...}'
        )
    if header["schema"] != SCHEMA_ID:
        raise CassetteError(spath, number, f"unknown schema {header['schema']!r} (this version reads {SCHEMA_ID!r})")
    reason = _schema_error("header", header)
    if reason:
        raise CassetteError(spath, number, f"invalid header: {reason}")
    interactions: list[Interaction] = []
    seen: set[int] = set()
    for number, text in lines:
        inter = interaction_from_json(_decode(text, spath, number), path=spath, line=number)
        if inter.seq in seen:
            raise CassetteError(spath, number, f"duplicate seq {inter.seq}")
        seen.add(inter.seq)
        interactions.append(inter)
    return Cassette(meta=header.get("meta") or {}, interactions=tuple(interactions), path=spath)


def _load_foreign(path: str) -> Cassette:
    from mcp_replay_action.convert import from_recorder_json

    return from_recorder_json(path)


def dumps(cassette: Cassette) -> str:
    """The JSONL text of a cassette: header, then one interaction per line."""
    header = {"schema": SCHEMA_ID, "meta": cassette.meta}
    out = [json.dumps(header, ensure_ascii=False, separators=(",", ":"))]
    out.extend(json.dumps(i.to_json(), ensure_ascii=False, separators=(",", ":")) for i in cassette.interactions)
    return "\n".join(out) + "\n"


def save(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Write a cassette atomically. Redaction is the recorder's job and happens before this."""
    atomic_write_text(path, dumps(cassette))


def with_lines(cassette: Cassette) -> Cassette:
    """Give every interaction the line number it will have once written (header is line 1)."""
    return cassette.with_interactions(replace(i, line=n) for n, i in enumerate(cassette.interactions, start=2))
