"""The tape both recording proxies (stdio and HTTP) write on: it pairs the messages passing in
both directions into interactions, and redacts each one the moment it arrives.

Redacting on arrival means every value is scrubbed exactly once (the redactor's hit counts are
true however often the cassette is saved) and nothing unredacted waits in memory for a save.
Pairing uses the raw ids, kept aside, so a redacted id never breaks a pair. Ids are per direction
in JSON-RPC, and per session over HTTP (``scope`` is the ``Mcp-Session-Id``).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Interaction, Kind
from mcp_replay_action.redact import Redactor
from mcp_replay_action.wire.jsonrpc import decode_all

Key = tuple[str, str]  # (scope, the id as JSON)


@dataclass
class TapeEntry:
    """An interaction whose initiating message has been seen (redacted), and its answer once seen."""

    order: int
    kind: Kind
    message: JSONObject
    seen: float  # monotonic time the initiating message passed through
    raw_id: JSON = None
    response: JSONObject | None = None
    answered: float | None = None
    transport: JSONObject | None = None


@dataclass
class Tape:
    """Interactions in the order their first message was seen (a server notification sent while a
    request was open comes after that request). Thread-safe."""

    redactor: Redactor | None = None
    t0: float = field(default_factory=time.monotonic)
    lifecycle: list[JSONObject] = field(default_factory=list)  # HTTP GET/DELETE exchanges
    changed: bool = False  # something new since the flag was last cleared (a saver clears it)
    unanswered_dropped: int = 0  # a request whose id was reused before it was answered
    unmatched_responses: int = 0
    non_json_lines: int = 0
    completed: int = 0
    _entries: list[TapeEntry] = field(default_factory=list)
    _client_asked: dict[Key, TapeEntry] = field(default_factory=dict)  # client requests awaiting the server
    _server_asked: dict[Key, TapeEntry] = field(default_factory=dict)  # server requests awaiting the client
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what passes ----------------------------------------------------------------------------

    def client_line(self, line: bytes, seen: float) -> None:
        """One line the client wrote to a stdio server (a message or a batch)."""
        self._line(line, seen, from_server=False)

    def server_line(self, line: bytes, seen: float) -> None:
        """One line a stdio server wrote to the client; a line that is not JSON-RPC is counted."""
        self._line(line, seen, from_server=True)

    def _line(self, line: bytes, seen: float, *, from_server: bool) -> None:
        messages = decode_all(line)
        if messages is None:
            if from_server and line.strip():
                self.non_json_lines += 1
            return
        for message in messages:
            if from_server:
                self.from_server(message, seen=seen)
            else:
                self.from_client(message, seen=seen)

    def from_client(self, message: JSONObject, *, scope: str = "", seen: float | None = None) -> TapeEntry | None:
        """A message the client sent; returns the entry of a request (to attach its answer to)."""
        seen = time.monotonic() if seen is None else seen
        with self._lock:
            if "method" in message:
                return self._ask(message, seen, scope, "request", "notification", self._client_asked)
            self._answer(message, seen, scope, self._server_asked)
            return None

    def from_server(
        self,
        message: JSONObject,
        *,
        scope: str = "",
        seen: float | None = None,
        request: TapeEntry | None = None,
        facts: JSONObject | None = None,
    ) -> bool:
        """A message the server sent. ``request`` is the request this exchange carried (HTTP), tried
        first; ``facts`` are its transport facts. True when the message answered ``request``."""
        seen = time.monotonic() if seen is None else seen
        with self._lock:
            if "method" in message:
                self._ask(message, seen, scope, "server-request", "server-notification", self._server_asked)
                return False
            entry = self._answer(message, seen, scope, self._client_asked, request=request, facts=facts)
            return entry is not None and entry is request

    def rescope(self, entry: TapeEntry, old: str, new: str) -> None:
        """The answer to ``initialize`` minted a session id: file the request under it."""
        with self._lock:
            key = (old, _id_key(entry.raw_id))
            if self._client_asked.get(key) is entry:
                del self._client_asked[key]
                self._client_asked[(new, key[1])] = entry

    def http_exchange(self, method: str, path: str, status: int | None, sse: bool, started: float) -> None:
        """An HTTP GET or DELETE exchange, for the header's ``http_lifecycle`` (the path redacted)."""
        with self._lock:
            self.lifecycle.append(
                {
                    "http_method": method,
                    "http_path": self._redact(path),
                    "response_status": status,
                    "response_is_sse": sse,
                    "latency_ms": round((time.monotonic() - started) * 1000.0, 3),
                    "position": sum(1 for e in self._entries if e.kind in ("request", "notification")),
                }
            )
            self.changed = True

    # -- what is kept -----------------------------------------------------------------------------

    def interactions(self) -> list[Interaction]:
        """Every complete interaction, redacted, numbered from 0 in the order its first message was
        seen. A request never answered is left out: a cassette line promises an answer; but a
        ``subscriptions/listen`` request is answered by its stream (``replay/streams.py``: the server
        notifications that carry its id), and kept with ``response: null``."""
        with self._lock:
            entries = [e for e in self._entries if not (e.kind == "request" and e.response is None and not _listen(e))]
        out: list[Interaction] = []
        for seq, e in enumerate(sorted(entries, key=lambda e: (e.seen, e.order))):
            latency = round((e.answered - e.seen) * 1000.0, 3) if e.answered is not None else None
            out.append(
                Interaction(
                    seq=seq,
                    kind=e.kind,
                    message=e.message,
                    response=e.response,
                    ts=max(0.0, e.seen - self.t0),
                    latency_ms=latency,
                    transport=e.transport,
                )
            )
        return out

    @property
    def unanswered(self) -> int:
        """Client requests never answered."""
        with self._lock:
            still_open = sum(1 for e in self._client_asked.values() if e.response is None and not _listen(e))
        return still_open + self.unanswered_dropped

    # -- inside the lock --------------------------------------------------------------------------

    def _redact(self, value: JSON) -> JSON:
        return self.redactor.apply(value) if self.redactor is not None else value

    def _ask(
        self, message: JSONObject, seen: float, scope: str, kind: Kind, one_way: Kind, asked: dict[Key, TapeEntry]
    ) -> TapeEntry | None:
        if "id" not in message:
            self._add(one_way, message, seen)
            self.completed += 1
            return None
        key = (scope, _id_key(message["id"]))
        previous = asked.get(key)
        if previous is not None and previous.kind == "request" and previous.response is None:
            self.unanswered_dropped += 1
        entry = self._add(kind, message, seen)
        asked[key] = entry
        return entry

    def _add(self, kind: Kind, message: JSONObject, seen: float) -> TapeEntry:
        entry = TapeEntry(
            order=len(self._entries), kind=kind, message=self._redact(message), seen=seen, raw_id=message.get("id")
        )
        self._entries.append(entry)
        self.changed = True
        return entry

    def _answer(
        self,
        message: JSONObject,
        seen: float,
        scope: str,
        asked: dict[Key, TapeEntry],
        *,
        request: TapeEntry | None = None,
        facts: JSONObject | None = None,
    ) -> TapeEntry | None:
        raw_id = message.get("id")
        entry = request if request is not None and request.raw_id == raw_id else None
        entry = entry or asked.get((scope, _id_key(raw_id)))
        if entry is None or entry.response is not None:
            self.unmatched_responses += 1
            return None
        for key in [k for k, v in asked.items() if v is entry]:
            del asked[key]
        entry.response = self._redact(message)
        entry.answered = seen
        entry.transport = facts
        self.completed += 1
        self.changed = True
        return entry


def _id_key(value: JSON) -> str:
    # 1 and "1" are different ids; JSON text keeps them apart.
    return json.dumps(value)


def _listen(entry: TapeEntry) -> bool:
    """A ``subscriptions/listen`` request: its stream answers it, and it may never be answered."""
    return entry.message.get("method") == "subscriptions/listen"
