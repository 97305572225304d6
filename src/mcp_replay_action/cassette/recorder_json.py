"""mcp-recorder's JSON cassettes, read into our model and written back out.

mcp-recorder stores one pretty-printed JSON document::

    {"version": "1.0",
     "metadata": {"recorded_at", "server_url", "transport_type", "protocol_version", "server_info"},
     "interactions": [{"type": "jsonrpc_request" | "notification" | "lifecycle",
                       "request": {...}, "response": {...} | null,
                       "response_is_sse": bool, "response_status": int | null, "latency_ms": int,
                       "http_method": str | null, "http_path": str | null}]}

Each interaction maps onto one :class:`~mcp_replay_action.model.cassette.Interaction` whose ``line`` is
the line its object starts on, so errors and annotations point into the JSON file. The HTTP facts
go into ``Interaction.transport``. ``lifecycle`` entries (a bare HTTP ``GET``/``DELETE`` on the
endpoint, no JSON-RPC message) have no place among interactions; they are kept in
``meta["http_lifecycle"]`` with their position so writing back restores them.

mcp-recorder has no place for what only we record (server-to-client messages, ``seq``/``ts``, the
full header). Writing its format puts those under one extension key, ``x_mcp_replay``, which its
loader ignores and ours reads back, so ours -> theirs -> ours loses nothing. A file written back
without that key (one mcp-recorder wrote: ``--update``, ``calibrate`` and refresh add no key of
ours to it) keeps the server's messages it filed as items of their own (another recorder's file,
or one written by hand) as such items, in place.
"""

from __future__ import annotations

import bisect
import json
import os
from typing import Literal

from mcp_replay_action.cassette.schema import interaction_from_json
from mcp_replay_action.errors import CassetteError
from mcp_replay_action.host import inside
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.wire.protocol import era_of

RECORDER_VERSION = "1.0"
RECORDER_DEFAULT_STATUS = 200  # what mcp-recorder's model defaults to and requires: an integer
EXTENSION_KEY = "x_mcp_replay"

# mcp-recorder's own type names first, then spellings other versions and hand-written files use.
_TYPE_TO_KIND: dict[str, str] = {
    "jsonrpc_request": "request",
    "request": "request",
    "notification": "notification",
    "jsonrpc_notification": "notification",
    "server_request": "server-request",
    "jsonrpc_server_request": "server-request",
    "server_notification": "server-notification",
    "jsonrpc_server_notification": "server-notification",
}
_KIND_TO_TYPE = {"request": "jsonrpc_request", "notification": "notification"}
_SERVER_KINDS = frozenset({"server-request", "server-notification"})
_LIFECYCLE_TYPES = frozenset({"lifecycle", "http_lifecycle"})
_TRANSPORTS = frozenset({"stdio", "http", "sse"})


# --------------------------------------------------------------------------- reading


class _Lines:
    """Character offset -> 1-based line number, for one text."""

    def __init__(self, text: str) -> None:
        self._starts = [0]
        self._starts.extend(i + 1 for i, ch in enumerate(text) if ch == "\n")

    def at(self, offset: int) -> int:
        return bisect.bisect_right(self._starts, offset)


_WS = " \t\r\n"


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _locate(text: str) -> tuple[dict[str, int], list[int]]:
    """Offsets of the top-level keys and of each object in the top-level ``interactions`` array.

    Walks only the outermost object and that one array with ``raw_decode`` (which decodes one
    value starting at an offset); the text is already known to be valid JSON.
    """
    decoder = json.JSONDecoder()
    keys: dict[str, int] = {}
    items: list[int] = []
    pos = _skip_ws(text, 0)
    if pos >= len(text) or text[pos] != "{":
        return keys, items
    pos = _skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] != "}":
        key_at = pos
        key, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos) + 1  # the colon
        pos = _skip_ws(text, pos)
        keys[key] = key_at
        if key == "interactions" and text[pos] == "[":
            items = []  # a repeated key: json.loads keeps the last, so do we
            pos = _skip_ws(text, pos + 1)
            while text[pos] != "]":
                items.append(pos)
                _, pos = decoder.raw_decode(text, pos)
                pos = _skip_ws(text, pos)
                if text[pos] == ",":
                    pos = _skip_ws(text, pos + 1)
            pos += 1
        else:
            _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return keys, items


def from_recorder_json(path: str | os.PathLike[str]) -> Cassette:
    """Read an mcp-recorder JSON cassette. Raises CassetteError naming ``file:line``."""
    spath = str(path)
    try:
        text = inside.read_bytes(path).decode("utf-8")  # no link followed in the action's workspace
    except FileNotFoundError:
        raise CassetteError(spath, None, "no such file") from None
    except UnicodeDecodeError as exc:
        raise CassetteError(spath, None, f"not UTF-8 text ({exc.reason})") from None
    except IsADirectoryError:
        raise CassetteError(spath, None, "is a directory, not a cassette") from None
    except OSError as exc:
        raise CassetteError(spath, None, f"cannot read it ({exc.strerror})") from None
    return from_recorder_text(text, path=spath)


def from_recorder_text(text: str, *, path: str = "<string>") -> Cassette:
    """Parse the text of an mcp-recorder JSON cassette (see :func:`from_recorder_json`)."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(path, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise CassetteError(path, 1, "invalid JSON: nested too deeply") from None
    lines = _Lines(text)
    key_offsets, item_offsets = _locate(text)

    def key_line(key: str) -> int:
        return lines.at(key_offsets[key]) if key in key_offsets else 1

    if not isinstance(doc, dict):
        raise CassetteError(path, 1, f"expected a JSON object, got {type(doc).__name__}")
    if "schema" in doc and "interactions" not in doc:
        raise CassetteError(
            path,
            1,
            "an mcp-replay cassette holds one JSON document per line, but this header spans several lines",
        )
    if "interactions" not in doc:
        raise CassetteError(path, 1, 'not a cassette: expected "interactions" (mcp-recorder) or a JSONL header')
    version = doc.get("version")
    if not isinstance(version, str) or version.split(".")[0] != RECORDER_VERSION.split(".")[0]:
        raise CassetteError(
            path,
            key_line("version"),
            f"unknown mcp-recorder cassette version {version!r} (this reads {RECORDER_VERSION!r})",
        )
    metadata = doc.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise CassetteError(path, key_line("metadata"), '"metadata" must be an object')
    raw = doc["interactions"]
    if not isinstance(raw, list):
        raise CassetteError(path, key_line("interactions"), '"interactions" must be an array')
    ext = doc.get(EXTENSION_KEY)
    ext = ext if isinstance(ext, dict) else {}

    interactions: list[Interaction] = []
    lifecycle: list[JSONObject] = []
    for index, item in enumerate(raw):
        line = lines.at(item_offsets[index]) if index < len(item_offsets) else key_line("interactions")
        if not isinstance(item, dict):
            raise CassetteError(path, line, f"interaction {index}: expected an object, got {type(item).__name__}")
        kind = _kind_of(item, path=path, line=line, index=index)
        if kind == "lifecycle":
            lifecycle.append(_lifecycle_entry(item, position=len(interactions)))
            continue
        interactions.append(_interaction(item, kind, path=path, line=line, index=index, default_seq=len(interactions)))

    for extra in ext.get("server_messages") or ():
        line = key_line(EXTENSION_KEY)
        interactions.append(interaction_from_json(extra, path=path, line=line))
    if ext.get("server_messages"):
        interactions.sort(key=lambda i: i.seq)
    seen: set[int] = set()
    for inter in interactions:
        if inter.seq in seen:
            raise CassetteError(path, inter.line, f"duplicate seq {inter.seq}")
        seen.add(inter.seq)

    meta = _meta_from_recorder(metadata, ext.get("meta"))
    if lifecycle:
        meta["http_lifecycle"] = lifecycle
    return Cassette(meta=meta, interactions=tuple(interactions), path=path, source_format="mcp-recorder-json")


def _type_name(spelled: str) -> str:
    """An item's type as ``_TYPE_TO_KIND`` names it, whatever its case and separator."""
    return spelled.strip().lower().replace("-", "_")


def _kind_of(item: JSONObject, *, path: str, line: int, index: int) -> str:
    type_name = item.get("type")
    if not isinstance(type_name, str):
        raise CassetteError(path, line, f'interaction {index}: missing "type"')
    norm = _type_name(type_name)
    if norm in _LIFECYCLE_TYPES:
        return "lifecycle"
    kind = _TYPE_TO_KIND.get(norm)
    if kind is None:
        known = ", ".join(sorted({*_TYPE_TO_KIND, *_LIFECYCLE_TYPES}))
        raise CassetteError(path, line, f"interaction {index}: unknown type {type_name!r} (expected one of {known})")
    return kind


def _interaction(item: JSONObject, kind: str, *, path: str, line: int, index: int, default_seq: int) -> Interaction:
    message = item.get("request")
    if not isinstance(message, dict):
        raise CassetteError(path, line, f'interaction {index}: "request" must be a JSON-RPC message object')
    response = item.get("response")
    for name, value in (("request", message), ("response", response)):
        if isinstance(value, dict) and value.get("jsonrpc") != "2.0":
            raise CassetteError(path, line, f'interaction {index}: "{name}" lacks "jsonrpc": "2.0"')
    if kind in ("request", "server-request") and "method" in message and "id" not in message:
        # Some recorders file a notification under jsonrpc_request; the message itself decides.
        kind = "notification" if kind == "request" else "server-notification"
        response = None
    if kind == "request" and not isinstance(response, dict):
        reason = f"interaction {index} ({message.get('method', '?')}): a recorded request needs its response"
        raise CassetteError(path, line, f'{reason}, but "response" is {json.dumps(response)}')
    ext = item.get(EXTENSION_KEY)
    ext = ext if isinstance(ext, dict) else {}
    doc: JSONObject = {
        "seq": ext.get("seq", default_seq),
        "kind": ext.get("kind", kind),
        "ts": ext.get("ts", 0.0),
        "message": message,
        "response": response if kind in ("request", "server-request") else None,
    }
    latency = ext["latency_ms"] if "latency_ms" in ext else item.get("latency_ms")
    if latency is not None:
        doc["latency_ms"] = latency
    # Written by us, the extension holds the real transport facts (none for stdio); else the item's.
    transport = ext["transport"] if "transport" in ext else _transport_facts(item)
    if transport:
        doc["transport"] = transport
    try:
        return interaction_from_json(doc, path=path, line=line)
    except CassetteError as exc:
        raise CassetteError(path, line, f"interaction {index} ({message.get('method', '?')}): {exc.reason}") from None


def _transport_facts(item: JSONObject) -> JSONObject | None:
    """HTTP status and SSE flag; None for stdio recordings, which have no HTTP layer."""
    status = item.get("response_status")
    sse = item.get("response_is_sse")
    if status is None and not sse:
        return None
    out: JSONObject = {"http_status": status if isinstance(status, int) else None}
    out["sse"] = bool(sse)
    return out


def _lifecycle_entry(item: JSONObject, *, position: int) -> JSONObject:
    return {
        "position": position,
        "http_method": item.get("http_method"),
        "http_path": item.get("http_path"),
        "response_status": item.get("response_status"),
        "response_is_sse": bool(item.get("response_is_sse")),
        "latency_ms": item.get("latency_ms"),
    }


def _meta_from_recorder(metadata: JSONObject, saved: JSON) -> JSONObject:
    if isinstance(saved, dict):
        # Written by us: the full original header travels in the extension.
        return dict(saved)
    transport = metadata.get("transport_type")
    transport = transport if transport in _TRANSPORTS else ("http" if metadata.get("server_url") else None)
    meta: JSONObject = {}
    target = metadata.get("server_url") or None
    if transport == "stdio":
        meta["server"] = target
    else:
        meta["url"] = target
    meta["transport"] = transport
    meta["recorded_at"] = metadata.get("recorded_at")
    version = metadata.get("protocol_version")
    meta["protocol_version"] = version
    meta["era"] = era_of(version if isinstance(version, str) else None)
    info = metadata.get("server_info")
    meta["server_info"] = info if isinstance(info, dict) else None
    known = {"recorded_at", "server_url", "transport_type", "protocol_version", "server_info"}
    meta["source"] = {
        "format": "mcp-recorder-json",
        "metadata": {k: v for k, v in metadata.items() if k not in known},
    }
    if not meta["source"]["metadata"]:
        del meta["source"]["metadata"]
    return meta


# --------------------------------------------------------------------------- writing


def to_recorder_json(cassette: Cassette, *, form: Form = "extension") -> JSONObject:
    """The cassette as an mcp-recorder JSON document (a dict ready for ``json.dumps``), what only
    we record in the ``form`` given (``written_form``): ``theirs`` leaves it out, for rewriting a
    file mcp-recorder wrote, which must not gain keys."""
    extensions = form == "extension"
    meta = cassette.meta
    server_side = [i for i in cassette.interactions if i.kind not in _KIND_TO_TYPE]
    lifecycle = [e for e in meta.get("http_lifecycle") or () if isinstance(e, dict)]

    items: list[JSONObject] = []
    pending = sorted(lifecycle, key=lambda e: int(e.get("position") or 0))
    index = 0  # client-side items written so far: where a lifecycle entry goes
    for inter in cassette.interactions:
        if inter.kind in _KIND_TO_TYPE:
            while pending and int(pending[0].get("position") or 0) <= index:
                items.append(_lifecycle_item(pending.pop(0)))
            items.append(_recorder_item(inter, extensions=extensions))
            index += 1
        elif form == "items":
            # A file that held the server's messages as items of their own (another recorder's, or
            # written by hand: ``_TYPE_TO_KIND``) keeps them there, in place: never dropped.
            items.append(_server_item(inter))
    items.extend(_lifecycle_item(e) for e in pending)

    ext_meta = {k: v for k, v in meta.items() if k != "http_lifecycle"}
    doc: JSONObject = {
        "version": RECORDER_VERSION,
        "metadata": _recorder_metadata(meta),
        "interactions": items,
    }
    if not extensions:
        return doc
    doc[EXTENSION_KEY] = {"meta": ext_meta}
    if server_side:
        doc[EXTENSION_KEY]["server_messages"] = [i.to_json() for i in server_side]
    return doc


Form = Literal["extension", "items", "theirs"]


def written_form(path: str | os.PathLike[str]) -> Form:
    """How the mcp-recorder file at ``path`` holds what only we record, so that rewriting it keeps
    that form: under our ``x_mcp_replay`` keys (``extension``: we wrote it), the server's messages
    as items of their own (``items``: another recorder's file, or one written by hand), or not at
    all (``theirs``: mcp-recorder wrote it, and it gains no key and no item type it cannot read)."""
    try:
        doc = json.loads(inside.read_bytes(path))
    except (OSError, ValueError):
        return "extension"
    if not isinstance(doc, dict) or EXTENSION_KEY in doc:
        return "extension"
    items = doc.get("interactions")
    for item in items if isinstance(items, list) else ():
        if isinstance(item, dict) and _TYPE_TO_KIND.get(_type_name(str(item.get("type")))) in _SERVER_KINDS:
            return "items"
    return "theirs"


def dumps_recorder_json(cassette: Cassette, form: Form = "extension") -> str:
    """The text mcp-recorder itself writes: indented JSON and a final newline (``form``:
    ``written_form``)."""
    return json.dumps(to_recorder_json(cassette, form=form), indent=2, ensure_ascii=False) + "\n"


def _recorder_metadata(meta: JSONObject) -> JSONObject:
    server = meta.get("server")
    if isinstance(server, list):
        target = " ".join(str(part) for part in server)
    else:
        target = server or meta.get("url") or ""
    transport = meta.get("transport") or ("stdio" if server else "http")
    out = {
        "recorded_at": meta.get("recorded_at") or "",
        "server_url": target,
        "transport_type": "http" if transport == "sse" else transport,
        "protocol_version": meta.get("protocol_version"),
        "server_info": meta.get("server_info"),
    }
    source = meta.get("source")
    if isinstance(source, dict) and isinstance(source.get("metadata"), dict):
        out.update(source["metadata"])
    return out


def _recorder_item(inter: Interaction, *, extensions: bool = True) -> JSONObject:
    transport = inter.transport or {}
    status = transport.get("http_status")
    item: JSONObject = {
        "type": _KIND_TO_TYPE[inter.kind],
        "request": inter.message,
        "response": inter.response,
        "response_is_sse": bool(transport.get("sse")),
        # mcp-recorder requires an integer and writes 200 for stdio recordings itself; the real
        # facts (none, for stdio) travel in the extension.
        "response_status": status if isinstance(status, int) else RECORDER_DEFAULT_STATUS,
        "latency_ms": int(round(inter.latency_ms or 0)),
        "http_method": None,
        "http_path": None,
    }
    if extensions:
        item[EXTENSION_KEY] = {"seq": inter.seq, "ts": inter.ts, "latency_ms": inter.latency_ms}
        item[EXTENSION_KEY]["transport"] = inter.transport
    return item


def _server_item(inter: Interaction) -> JSONObject:
    """A message the server sent, as an item of the type ``_TYPE_TO_KIND`` reads back."""
    return {"type": inter.kind.replace("-", "_"), "request": inter.message, "response": inter.response}


def _lifecycle_item(entry: JSONObject) -> JSONObject:
    return {
        "type": "lifecycle",
        "request": None,
        "response": None,
        "response_is_sse": bool(entry.get("response_is_sse")),
        "response_status": entry.get("response_status") if isinstance(entry.get("response_status"), int) else 200,
        "latency_ms": int(round(entry.get("latency_ms") or 0)),
        "http_method": entry.get("http_method"),
        "http_path": entry.get("http_path"),
    }
