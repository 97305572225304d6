"""The mock server: an MCP server that answers from a cassette, so client authors can test
without the real server. It speaks stdio (``serve_stdio``) or Streamable HTTP (``serve_http``).

Matching (VCR.py's *matchers*), chosen with ``match=``:

- ``method_params`` (default): a request gets the recorded answer to the same method with the same
  params (``_meta`` ignored); a request recorded several times gets the recorded answers in
  recorded order, then the last one again.
- ``sequential``: the n-th request gets the n-th recorded answer, provided the method is the same.
- ``strict``: like ``sequential``, and the params (``_meta`` included, progress tokens aside) must
  be identical.

The handshake (``initialize``, ``server/discover``) matches by method alone under the first two, so
any client protocol version the recorded server accepted gets the recorded answer. A request with
no match gets a JSON-RPC error naming the closest recorded request, and is logged to stderr.
Server notifications and server-to-client requests recorded while a request was open are sent
before its answer (on an SSE stream over HTTP), with progress tokens rewritten to the live ones.
"""

from __future__ import annotations

import copy
import difflib
import json
import sys
import threading
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Literal

from mcp_replay_action.compare.matchers import (
    canonical,
    progress_token,
    request_key,
    without_meta,
    without_progress_token,
)
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.replay.heard import PROGRESS, ProgressOwners
from mcp_replay_action.transport.httpd import (
    DEFAULT_BOUNDS,
    BodyError,
    Bounds,
    Handler,
    StoppableServer,
    log,
    sse_event,
    stop_requested,
    wait_for_stop,
)

Match = Literal["method_params", "sequential", "strict"]
MATCHERS: tuple[str, ...] = ("method_params", "sequential", "strict")
# Requests answered by method alone under the lenient matchers: their params describe the client
# (its name, version, proposed protocol version), not the question.
HANDSHAKE_METHODS = frozenset({"initialize", "server/discover"})
METHOD_NOT_FOUND = -32601
NO_MATCH = -32000  # implementation-defined server error: "no recorded answer"
PARSE_ERROR = -32700
_CLIENT_KINDS = ("request", "notification")


@dataclass(frozen=True)
class Answer:
    """What the mock sends for one request: recorded server messages that came while the request
    was open (``before``) and after its answer (``after``), and the answer itself."""

    response: JSONObject
    before: tuple[JSONObject, ...] = ()
    after: tuple[JSONObject, ...] = ()
    interaction: Interaction | None = None

    @property
    def streamed(self) -> bool:
        """True when the recording answered over SSE, or there is something to send first."""
        facts = self.interaction.transport if self.interaction is not None else None
        return bool(self.before) or bool(facts and facts.get("sse"))


@dataclass
class ServeStats:
    """What a serve run did, for the caller and the tests."""

    answered: int = 0
    unmatched: int = 0
    notifications: int = 0
    unmatched_requests: list[str] = field(default_factory=list)


def _key(message: JSONObject) -> tuple[str, str]:
    method = str(message.get("method", ""))
    if method in HANDSHAKE_METHODS:
        return method, ""  # any handshake gets the recorded one, whatever the client sent
    return request_key(message)


def _short(value: JSON, limit: int = 120) -> str:
    text = canonical(value) if value is not None else ""
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Responder:
    """Answers requests from a cassette. Transport-neutral and thread-safe; one per client
    session, since repeats and sequential matching keep state."""

    def __init__(self, cassette: Cassette, match: str = "method_params") -> None:
        if match not in MATCHERS:
            raise ConfigError(f"unknown --match {match!r} (expected one of: {', '.join(MATCHERS)})")
        self.cassette = cassette
        self.match = match
        self.stats = ServeStats()
        self._lock = threading.Lock()
        self._requests = [i for i in cassette.interactions if i.kind == "request" and i.response is not None]
        self._methods = {i.method for i in self._requests}
        self._by_key: dict[tuple[str, str], deque[Interaction]] = {}
        self._last: dict[tuple[str, str], Interaction] = {}
        for inter in self._requests:
            self._by_key.setdefault(_key(inter.message), deque()).append(inter)
        self._next = 0
        self._server_side = self._server_messages_by_request()

    def _server_messages_by_request(self) -> dict[int, tuple[list[Interaction], list[Interaction]]]:
        """For each recorded request, the server-initiated messages recorded while it was open
        (before its answer) and after it, up to the next message the client sent; a progress line
        is its token's request's (``heard.ProgressOwners``), even when written before it."""
        out: dict[int, tuple[list[Interaction], list[Interaction]]] = {}
        current: Interaction | None = None
        # A request open over 2 s is written after its own progress: that is sent while it is open.
        owners: ProgressOwners[Interaction] = ProgressOwners()
        for inter in self.cassette.interactions:
            if inter.kind in _CLIENT_KINDS:
                current = inter if inter.kind == "request" else None
                if current is not None:
                    out[current.seq] = (owners.request(current), [])
                continue
            if inter.message.get("method") == PROGRESS:
                owner = owners.progress(inter, inter)
                if owner is not None:
                    out[owner.seq][0].append(inter)
                    continue
                params = inter.message.get("params")
                if isinstance(params, dict) and params.get("progressToken") is not None:
                    continue  # waiting for the request that names its token, or no request's
            if current is None:
                continue
            answered_at = current.ts + (current.latency_ms or 0.0) / 1000.0
            if current.latency_ms is None or inter.ts <= answered_at:
                out[current.seq][0].append(inter)
            else:
                out[current.seq][1].append(inter)
        return out

    def answer(self, message: JSONObject) -> Answer | None:
        """The answer to a client message; None for notifications and responses."""
        if "method" not in message:
            return None
        if "id" not in message:
            with self._lock:
                self.stats.notifications += 1
            return None
        with self._lock:
            found, closest = self._find(message)
            if found is None:
                return self._unmatched(message, closest)
            self.stats.answered += 1
        response = dict(copy.deepcopy(found.response or {}))
        response["id"] = message["id"]
        before, after = self._server_side.get(found.seq, ([], []))
        token = progress_token(message)
        recorded_token = progress_token(found.message)
        return Answer(
            response=response,
            before=tuple(_retoken(i.message, recorded_token, token) for i in before),
            after=tuple(_retoken(i.message, recorded_token, token) for i in after),
            interaction=found,
        )

    def _find(self, message: JSONObject) -> tuple[Interaction | None, Interaction | None]:
        """(the matching recorded request, or None and the closest one)."""
        if self.match == "method_params":
            key = _key(message)
            queue = self._by_key.get(key)
            if queue:
                self._last[key] = queue.popleft()
                return self._last[key], None
            if key in self._last:
                return self._last[key], None  # asked more often than recorded: repeat the last answer
            return None, self._closest(message)
        if self._next >= len(self._requests):
            return None, self._closest(message)
        expected = self._requests[self._next]
        if expected.method != message.get("method"):
            return None, expected
        if self.match == "strict" and canonical(without_progress_token(expected.message.get("params"))) != canonical(
            without_progress_token(message.get("params"))
        ):
            return None, expected
        self._next += 1
        return expected, None

    def _closest(self, message: JSONObject) -> Interaction | None:
        method = str(message.get("method", ""))
        wanted = canonical(without_meta(message.get("params")))
        best: tuple[float, int] | None = None
        found: Interaction | None = None
        for inter in self._requests:
            score = difflib.SequenceMatcher(None, wanted, canonical(without_meta(inter.message.get("params")))).ratio()
            score += 2.0 if inter.method == method else difflib.SequenceMatcher(None, method, inter.method).ratio()
            if best is None or score > best[0]:
                best, found = (score, inter.seq), inter
        return found

    def _unmatched(self, message: JSONObject, closest: Interaction | None) -> Answer:
        method = str(message.get("method", ""))
        asked = f"{method} {_short(without_meta(message.get('params')))}".strip()
        text = f"mcp-replay serve: no recorded answer for {asked} (matching: {self.match})"
        data: JSONObject = {"match": self.match}
        if closest is not None:
            text += (
                f"; closest recorded request: line {closest.line or '?'} "
                f"{closest.method} {_short(without_meta(closest.message.get('params')))}"
            ).rstrip()
            data["closest"] = {
                "line": closest.line,
                "seq": closest.seq,
                "method": closest.method,
                "params": without_meta(closest.message.get("params")),
            }
        self.stats.unmatched += 1
        self.stats.unmatched_requests.append(asked)
        log(text.replace("mcp-replay serve: ", "serve: ", 1))  # log() says "mcp-replay: " itself
        code = METHOD_NOT_FOUND if method not in self._methods else NO_MATCH
        error = {"code": code, "message": text, "data": data}
        return Answer(response={"jsonrpc": "2.0", "id": message["id"], "error": error})


def _retoken(message: JSONObject, recorded: JSON, live: JSON) -> JSONObject:
    """A recorded progress notification, re-addressed to the live request's progress token."""
    params = message.get("params")
    if (
        message.get("method") == "notifications/progress"
        and isinstance(params, dict)
        and live is not None
        and (recorded is None or params.get("progressToken") == recorded)
    ):
        return {**message, "params": {**params, "progressToken": live}}
    return message


# ---------------------------------------------------------------------------------------------
# stdio
# ---------------------------------------------------------------------------------------------


def serve_stdio(
    cassette: Cassette,
    *,
    match: str = "method_params",
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> ServeStats:
    """Answer newline-delimited JSON-RPC on stdin/stdout from the cassette until stdin closes."""
    responder = Responder(cassette, match)
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer

    def write(message: JSONObject) -> None:
        writer.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n")
        writer.flush()

    for raw in reader:
        line = raw.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            log(f"serve: a line on stdin is not JSON: {line[:80]!r}")
            write({"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}})
            continue
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            answer = responder.answer(item)
            if answer is None:
                continue
            for early in answer.before:
                write(early)
            write(answer.response)
            for late in answer.after:
                write(late)
    return responder.stats


# ---------------------------------------------------------------------------------------------
# Streamable HTTP
# ---------------------------------------------------------------------------------------------


class MockHttpServer:
    """The mock over Streamable HTTP, on its own thread: ``start()``, ``url``, ``stop()``.

    Each MCP session (``Mcp-Session-Id``, minted at ``initialize``) gets its own matching state;
    requests without a session (the stateless era) share one.
    """

    def __init__(
        self,
        cassette: Cassette,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        match: str = "method_params",
        bounds: Bounds = DEFAULT_BOUNDS,
    ):
        Responder(cassette, match)  # validates ``match`` before a port is taken
        self.cassette = cassette
        self.match = match
        self._responders: dict[str, Responder] = {}
        self._ended: set[str] = set()
        self._lock = threading.Lock()
        self.path = "/mcp"
        self._server = StoppableServer((host, port), _make_handler(self), bounds=bounds)

    @property
    def url(self) -> str:
        return self._server.origin + self.path

    @property
    def stats(self) -> ServeStats:
        """Counts summed over every session served so far."""
        total = ServeStats()
        with self._lock:
            for responder in self._responders.values():
                total.answered += responder.stats.answered
                total.unmatched += responder.stats.unmatched
                total.notifications += responder.stats.notifications
                total.unmatched_requests.extend(responder.stats.unmatched_requests)
        return total

    def responder(self, session: str | None) -> Responder:
        with self._lock:
            key = session or ""
            if key not in self._responders:
                self._responders[key] = Responder(self.cassette, self.match)
            return self._responders[key]

    def new_session(self) -> str:
        session = uuid.uuid4().hex
        self.responder(session)
        return session

    def end_session(self, session: str) -> bool:
        """Forget a session (DELETE); False when it was never opened or already ended."""
        with self._lock:
            if session not in self._responders or session in self._ended:
                return False
            self._ended.add(session)
            return True

    def ended(self, session: str | None) -> bool:
        with self._lock:
            return session is not None and session in self._ended

    def start(self) -> MockHttpServer:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> MockHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _make_handler(mock: MockHttpServer) -> type[Handler]:
    class MockHandler(Handler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
            try:
                doc = json.loads(self.read_body() or b"null")
            except BodyError as exc:
                self.send_bytes(exc.status, str(exc).encode(), "text/plain")
                return
            except (ValueError, UnicodeDecodeError, RecursionError):
                self.send_json(
                    400, {"jsonrpc": "2.0", "id": None, "error": {"code": PARSE_ERROR, "message": "Parse error"}}
                )
                return
            items = doc if isinstance(doc, list) else [doc]
            if not items or not all(isinstance(i, dict) for i in items):
                self.send_json(
                    400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request"}}
                )
                return
            session = self.headers.get("Mcp-Session-Id")
            if mock.ended(session):
                self.send_json(
                    404, {"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Session ended"}}
                )
                return
            headers: dict[str, str] = {}
            if session is None and any(i.get("method") == "initialize" and "id" in i for i in items):
                session = mock.new_session()
                headers["Mcp-Session-Id"] = session
            responder = mock.responder(session)
            answers = [a for a in (responder.answer(i) for i in items) if a is not None]
            if not answers:
                self.send_bytes(202, b"", headers=headers)
                return
            # Server messages recorded after an answer have no stream left to travel on over HTTP
            # (the mock offers no GET stream), so only those recorded before it are sent.
            if len(answers) == 1 and answers[0].streamed:
                answer = answers[0]
                self.start_stream(200, "text/event-stream", headers)
                for early in answer.before:
                    self.write_chunk(sse_event(early))
                self.write_chunk(sse_event(answer.response))
                self.end_stream()
                return
            body: JSON = answers[0].response if not isinstance(doc, list) else [a.response for a in answers]
            self.send_json(200, body, headers)

        def do_GET(self) -> None:  # noqa: N802
            # No standalone stream: everything the cassette holds belongs to some request.
            self.send_bytes(405, b"", headers={"Allow": "POST, DELETE"})

        def do_DELETE(self) -> None:  # noqa: N802
            session = self.headers.get("Mcp-Session-Id")
            self.send_bytes(200 if session and mock.end_session(session) else 404, b"")

    return MockHandler


def serve_http(
    cassette: Cassette,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    match: str = "method_params",
    until: Callable[[], bool] | None = None,
) -> ServeStats:
    """Serve the cassette over Streamable HTTP until SIGINT/SIGTERM (or ``until()`` is true)."""
    with stop_requested() as stop:  # trapped before serving starts, as the recording proxy does
        mock = MockHttpServer(cassette, host, port, match=match).start()
        log(f"serve: answering from {cassette.path or 'the cassette'} at {mock.url} (matching: {match}); Ctrl-C stops")
        try:
            wait_for_stop(until, stop)
        finally:
            mock.stop()
    return mock.stats
