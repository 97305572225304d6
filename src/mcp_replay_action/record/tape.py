"""The tape both recording proxies (stdio and HTTP) write on: it pairs the messages passing in
both directions into interactions, redacts each one the moment it arrives, and places each
complete interaction on a line of the cassette (``place``), for the writer to put on disk at once.

Redacting on arrival means every value is scrubbed exactly once (the redactor's hit counts are
true however often the header is written) and nothing unredacted waits in memory for a save.
Pairing uses the raw ids, kept aside, so a redacted id never breaks a pair. Ids are per direction
in JSON-RPC, and per session over HTTP (``scope`` is the ``Mcp-Session-Id``).

Placing: lines follow the order in which each interaction's first message was seen (a server
notification sent while a request was open comes after that request), and an interaction is
placed once it and everything seen before it are complete. A request still open holds back what
came after it for at most ``hold`` seconds: then it is set aside and placed where its answer
arrives (so one never answered, or a slow tool call, keeps nothing else off the disk). A
``subscriptions/listen`` request is placed at once with ``response: null`` (its stream answers
it), a server's request unanswered after ``hold`` likewise; if the answer comes later, that line
is rewritten (``amended``). A line's ``seq`` is its place, given once: no line is renumbered.
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
    seq: int | None = None  # its line's place in the cassette, once placed
    dropped: bool = False  # a request whose id was reused before it was answered: never placed

    @property
    def complete(self) -> bool:
        """Whether it can be placed as it is: a notification, an answered request, or a
        ``subscriptions/listen`` (answered by its stream)."""
        return self.kind in ("notification", "server-notification") or self.response is not None or _listen(self)


@dataclass
class Tape:
    """Interactions in the order their first message was seen, placed on the cassette's lines as
    they complete (see the module's docstring). Thread-safe."""

    redactor: Redactor | None = None
    t0: float = field(default_factory=time.monotonic)
    lifecycle: list[JSONObject] = field(default_factory=list)  # HTTP GET/DELETE exchanges
    changed: bool = False  # something new since the flag was last cleared (the writer clears it)
    unanswered_dropped: int = 0  # a request whose id was reused before it was answered
    unmatched_responses: int = 0
    non_json_lines: int = 0
    too_deep: int = 0  # messages nested too deeply to read or redact: passed on, not recorded
    _entries: list[TapeEntry] = field(default_factory=list)
    _client_asked: dict[Key, TapeEntry] = field(default_factory=dict)  # client requests awaiting the server
    _server_asked: dict[Key, TapeEntry] = field(default_factory=dict)  # server requests awaiting the client
    _placed: list[TapeEntry] = field(default_factory=list)  # in the cassette's line order
    _next: int = 0  # the first entry (in seen order) not yet placed or set aside
    _aside: list[TapeEntry] = field(default_factory=list)  # open requests no longer holding back the rest
    _amended: list[TapeEntry] = field(default_factory=list)  # placed, then answered
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- what passes ----------------------------------------------------------------------------

    def client_line(self, line: bytes, seen: float) -> None:
        """One line the client wrote to a stdio server (a message or a batch)."""
        self._line(line, seen, from_server=False)

    def server_line(self, line: bytes, seen: float) -> None:
        """One line a stdio server wrote to the client; a line that is not JSON-RPC is counted."""
        self._line(line, seen, from_server=True)

    def _line(self, line: bytes, seen: float, *, from_server: bool) -> None:
        try:
            messages = decode_all(line)
        except RecursionError:
            self.count_too_deep()
            return
        if messages is None:
            if from_server and line.strip():
                self.non_json_lines += 1
                self.changed = True
            return
        for message in messages:
            if from_server:
                self.from_server(message, seen=seen)
            else:
                self.from_client(message, seen=seen)

    def from_client(self, message: JSONObject, *, scope: str = "", seen: float | None = None) -> TapeEntry | None:
        """A message the client sent; returns the entry of a request (to attach its answer to)."""
        seen = time.monotonic() if seen is None else seen
        try:
            with self._lock:
                if "method" in message:
                    return self._ask(message, seen, scope, "request", "notification", self._client_asked)
                self._answer(message, seen, scope, self._server_asked)
                return None
        except RecursionError:
            self.count_too_deep()
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
        try:
            with self._lock:
                if "method" in message:
                    self._ask(message, seen, scope, "server-request", "server-notification", self._server_asked)
                    return False
                entry = self._answer(message, seen, scope, self._client_asked, request=request, facts=facts)
                return entry is not None and entry is request
        except RecursionError:
            self.count_too_deep()
            return False

    def count_too_deep(self) -> None:
        """A message nested too deeply to read or redact (past Python's recursion limit): passed
        on, never recorded (it could not be redacted), and counted (``too_deep``)."""
        with self._lock:
            self.too_deep += 1
            self.changed = True

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

    # -- what is kept ------------------------------------------------------------------------------

    def place(self, *, hold: float, final: bool = False, now: float | None = None) -> list[Interaction]:
        """Place every interaction that can be placed now (the module's docstring says when) and
        return them, in line order, numbered on from the last placed. ``final``: nothing is held
        back any more (the session ended): an open request is set aside, placed if answered later.
        A client request never answered is never placed: a cassette line promises an answer."""
        now = time.monotonic() if now is None else now
        with self._lock:
            placed: list[Interaction] = []
            for entry in [e for e in self._aside if e.response is not None]:
                self._aside.remove(entry)
                placed.append(self._put(entry))
            while self._next < len(self._entries):
                entry = self._entries[self._next]
                if entry.dropped or entry.seq is not None:
                    pass
                elif entry.complete:
                    placed.append(self._put(entry))
                elif not final and now - entry.seen < hold:
                    break  # an open request holds back what came after it, for a while
                elif entry.kind == "request":
                    self._aside.append(entry)
                else:
                    placed.append(self._put(entry))  # a server's request, kept unanswered
                self._next += 1
            return placed

    def amended(self) -> list[Interaction]:
        """The placed interactions answered since (a listen the server closed, a server's request
        the client answered late), each once: their lines are to be rewritten."""
        with self._lock:
            entries, self._amended = self._amended, []
        return [self._interaction(e) for e in entries]

    def placed(self) -> list[Interaction]:
        """Every interaction placed so far, in line order."""
        with self._lock:
            entries = list(self._placed)
        return [self._interaction(e) for e in entries]

    def interactions(self) -> list[Interaction]:
        """Every complete interaction, in line order: what the cassette holds once the session has
        ended (nothing is held back any more)."""
        self.place(hold=0.0, final=True)
        return self.placed()

    @property
    def unanswered(self) -> int:
        """Client requests never answered."""
        with self._lock:
            still_open = sum(1 for e in self._client_asked.values() if e.response is None and not _listen(e))
        return still_open + self.unanswered_dropped

    # -- inside the lock --------------------------------------------------------------------------

    def _redact(self, value: JSON) -> JSON:
        return self.redactor.apply(value) if self.redactor is not None else value

    def _put(self, entry: TapeEntry) -> Interaction:
        entry.seq = len(self._placed)
        self._placed.append(entry)
        return self._interaction(entry)

    def _interaction(self, e: TapeEntry) -> Interaction:
        assert e.seq is not None
        latency = round((e.answered - e.seen) * 1000.0, 3) if e.answered is not None else None
        return Interaction(
            seq=e.seq,
            kind=e.kind,
            message=e.message,
            response=e.response,
            ts=max(0.0, e.seen - self.t0),
            latency_ms=latency,
            transport=e.transport,
        )

    def _ask(
        self, message: JSONObject, seen: float, scope: str, kind: Kind, one_way: Kind, asked: dict[Key, TapeEntry]
    ) -> TapeEntry | None:
        clean = self._redact(message)  # first: a message too deep to redact changes nothing
        if "id" not in message:
            self._add(one_way, clean, seen)
            return None
        key = (scope, _id_key(message["id"]))
        previous = asked.get(key)
        if previous is not None and previous.kind == "request" and previous.response is None:
            self.unanswered_dropped += 1
            if previous.seq is None:  # (a listen was placed at once, and stays)
                previous.dropped = True
                if previous in self._aside:
                    self._aside.remove(previous)
        entry = self._add(kind, clean, seen, message["id"])
        asked[key] = entry
        return entry

    def _add(self, kind: Kind, clean: JSONObject, seen: float, raw_id: JSON = None) -> TapeEntry:
        entry = TapeEntry(order=len(self._entries), kind=kind, message=clean, seen=seen, raw_id=raw_id)
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
            self.changed = True
            return None
        clean = self._redact(message)  # first: a message too deep to redact changes nothing
        for key in [k for k, v in asked.items() if v is entry]:
            del asked[key]
        entry.response = clean
        entry.answered = seen
        entry.transport = facts
        self.changed = True
        if entry.seq is not None:
            self._amended.append(entry)
        return entry


def _id_key(value: JSON) -> str:
    # 1 and "1" are different ids; JSON text keeps them apart.
    return json.dumps(value)


def _listen(entry: TapeEntry) -> bool:
    """A ``subscriptions/listen`` request: its stream answers it, and it may never be answered."""
    return entry.message.get("method") == "subscriptions/listen"
