"""Recording over HTTP: a transparent proxy between a real MCP client and a real Streamable HTTP
(or legacy HTTP+SSE) server that tees every exchange into a cassette.

Every request is forwarded upstream with its headers, and every answer comes back unchanged:
SSE streams are passed through chunk by chunk as they arrive, never buffered to the end, while a
maintained SSE parser (httpx-sse) reads the same bytes to find the messages. What is written to the
cassette is JSON-RPC only, redacted before it touches disk, each interaction on disk as it
completes (``record/writer.py``); request headers (``Authorization``, cookies, API keys) are
forwarded and never stored. HTTP status, content type and SSE-or-JSON are kept per interaction as
transport facts; ``GET`` and ``DELETE`` exchanges go to the header's ``http_lifecycle``.

Only what an MCP client sends is forwarded (``RecordingProxy.refusal``): requests to the MCP
endpoint (or the proxy's root), and for the legacy transport to the message path the upstream's
``endpoint`` event announced; a ``GET`` only when it asks for an event stream, a ``DELETE`` only
with a session. A page in a browser on this machine sends no ``Origin`` with an ``<img>`` or a
navigation, so the listener's Origin check alone would let it reach any path of the upstream
(``GET /admin/delete``) through us.
"""

from __future__ import annotations

import codecs
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, cast
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from mcp_replay_action.cassette.header import CassetteHeader, header_url, recorded_line, utc_now
from mcp_replay_action.compare.correlate import ThreadRules
from mcp_replay_action.errors import CassetteError, ConfigError, MessageTooLarge, ServerStartError
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.record.tape import Tape, TapeEntry
from mcp_replay_action.record.writer import HOLD_SECONDS, TapeWriter
from mcp_replay_action.transport import MAX_MESSAGE
from mcp_replay_action.transport.http_client import (
    break_stream,
    content_type_of,
    display_url,
    read_capped,
    sse_events,
    wait_for_port,
)
from mcp_replay_action.transport.httpd import (
    DEFAULT_BOUNDS,
    BodyError,
    Bounds,
    Handler,
    StoppableServer,
    log,
    stop_requested,
    wait_for_stop,
)
from mcp_replay_action.values.safe import visible

if TYPE_CHECKING:
    from mcp_replay_action.redact import Redactor
    from mcp_replay_action.transport.process import ServerProcess

# Hop-by-hop headers (RFC 9110 7.6.1) and those the proxy recomputes: never forwarded as-is.
_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        "accept-encoding",
        "content-encoding",
    }
)
MAX_MESSAGE_PATHS = 16  # legacy message paths remembered (one per server in practice)


class _TeeText:
    """Stands in for the upstream response inside httpx-sse: every raw chunk is handed to the
    parser and then, at once, forwarded to the client unchanged."""

    def __init__(self, upstream: httpx.Response, forward: Callable[[bytes], None]) -> None:
        self.headers = upstream.headers
        self._upstream = upstream
        self._forward = forward

    def iter_text(self) -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        for chunk in self._upstream.iter_raw():
            text = decoder.decode(chunk)
            if text:
                # The parser takes every event this chunk completes before asking for more, so an
                # event is on the tape before the client can see it (and answer it).
                yield text
            self._forward(chunk)
        tail = decoder.decode(b"", final=True)
        if tail:
            yield tail


class _ClientGone(Exception):
    """The client hung up while an answer was being streamed to it."""


class RecordingProxy:
    """The recording proxy on its own thread: ``start()``, ``url``, ``cassette()``, ``stop()``.

    ``upstream_url`` is the server's MCP endpoint. A client may use the proxy's URL with the same
    path (``url``) or just its root; the one other path forwarded is the legacy HTTP+SSE
    transport's message path, once the upstream has announced it (``note_legacy``).
    """

    def __init__(
        self,
        upstream_url: str,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        redactor: Redactor | None = None,
        cassette_path: str | None = None,
        connect_timeout: float = 10.0,
        read_timeout: float = 300.0,
        bounds: Bounds = DEFAULT_BOUNDS,
        max_message: int = MAX_MESSAGE,
        thread_rules: ThreadRules | None = None,
        hold: float = HOLD_SECONDS,
    ) -> None:
        parts = urlsplit(upstream_url)
        self.thread_rules = thread_rules  # stored in the header (``threading``) when declared
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--url {display_url(upstream_url)!r}: expected an http:// or https:// URL")
        self.upstream_url = upstream_url
        self.max_message = max_message
        self._upstream = parts
        self.redactor = redactor if redactor is not None else _default_redactor()
        self.tape = Tape(self.redactor)
        # Once: redacting it at every save would count its hits again each time.
        self._shown_url = header_url(upstream_url, self.redactor.apply)
        self._recorded_at = utc_now()
        self._client = httpx.Client(timeout=httpx.Timeout(connect_timeout, read=read_timeout), follow_redirects=False)
        self._read_timeout = read_timeout
        self._open: set[httpx.Response] = set()
        self._lock = threading.Lock()
        self._legacy = False
        self._message_paths: list[str] = []  # announced by the upstream's ``endpoint`` events
        self.cassette_path = cassette_path
        self.writer = TapeWriter(self.tape, cassette_path, self.meta, hold=hold)
        self._server = StoppableServer((host, port), _make_handler(self), bounds=bounds)

    @property
    def url(self) -> str:
        """Where a client should connect: the proxy's origin with the upstream's path."""
        return self._server.origin + (self._upstream.path or "/")

    def start(self) -> RecordingProxy:
        self._server.start()
        self.writer.start()
        return self

    def stop(self) -> None:
        """Stop listening, break streams still open, close the upstream client; the cassette is
        then complete on disk."""
        self._server.stop()
        with self._lock:
            streams = list(self._open)
        for response in streams:
            break_stream(response)
        self._client.close()
        self.writer.close()

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def meta(self, interactions: Sequence[Interaction]) -> JSONObject:
        """The header of ``interactions``, with the HTTP lifecycle seen so far."""
        header = CassetteHeader(
            transport="sse" if self._legacy else "http", url=self._shown_url, recorded_at=self._recorded_at
        )
        extra: JSONObject = {"threading": self.thread_rules.to_json()} if self.thread_rules else {}
        if self.tape.too_deep:
            extra["too_deep"] = self.tape.too_deep
        meta = header.meta(interactions, extra=extra, redaction=self.redactor.rules())
        if self.tape.lifecycle:
            meta["http_lifecycle"] = list(self.tape.lifecycle)  # paths redacted as they were seen
        return meta

    def cassette(self, path: str = "") -> Cassette:
        """What was recorded so far, redacted, with its header: every complete interaction."""
        interactions = self.tape.interactions()
        return Cassette(meta=self.meta(interactions), interactions=tuple(interactions), path=path)

    def save(self, *, force: bool = False) -> Cassette | None:
        """Put what is ready on disk (it already is, as each interaction completes); ``force``:
        everything complete, and the header as it stands. Returns the cassette (None without a
        ``cassette_path``; with no interaction, nothing is written)."""
        if not self.cassette_path:
            return None
        self.writer.flush(final=force)
        if not force:
            return None
        return self.cassette(self.cassette_path)

    # -- forwarding --------------------------------------------------------------------------------

    def upstream_for(self, path: str) -> str:
        """The upstream URL for a path the client asked the proxy for (one ``refusal`` let by)."""
        raw_path, _, query = path.partition("?")
        up = self._upstream
        if raw_path in ("", "/", up.path):
            target_path, target_query = up.path or "/", query or up.query
        else:
            target_path, target_query = raw_path, query
        return urlunsplit((up.scheme, up.netloc, target_path, target_query, ""))

    def refusal(self, method: str, path: str, accept: str, session: str) -> tuple[int, str] | None:
        """Why a request is not what an MCP client sends, as a status and a reason, or None to
        forward it: the MCP endpoint (or the root) and the legacy message paths are served, a
        ``GET`` must accept an event stream (the SSE stream a client opens; an ``<img>`` or a
        navigation does not ask for one) and a ``DELETE`` must name its session (``Mcp-Session-Id``).
        ``accept`` and ``session``: the request's headers of those names, "" when it has none."""
        raw_path = path.partition("?")[0]
        with self._lock:
            known = raw_path in ("", "/", self._upstream.path) or raw_path in self._message_paths
        if not known:
            return 404, "not the MCP endpoint"
        if method == "GET" and "text/event-stream" not in accept.lower():
            return 406, "a GET must accept text/event-stream"
        if method == "DELETE" and not session:
            return 400, "a DELETE must name its Mcp-Session-Id"
        return None

    def forward_headers(self, incoming: Mapping[str, str]) -> dict[str, str]:
        headers = {k: v for k, v in incoming.items() if k.lower() not in _HOP}
        # Identity encoding: the tee must read the same bytes the client gets.
        headers["Accept-Encoding"] = "identity"
        return headers

    def open_upstream(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> httpx.Response:
        timeout = httpx.Timeout(self._client.timeout.connect, read=None if method == "GET" else self._read_timeout)
        request = self._client.build_request(method, url, headers=headers, content=body, timeout=timeout)
        response = self._client.send(request, stream=True)
        with self._lock:
            self._open.add(response)
        return response

    def release(self, response: httpx.Response) -> None:
        with self._lock:
            self._open.discard(response)
        response.close()

    @property
    def stopping(self) -> bool:
        return self._server.stopping.is_set()

    def note_legacy(self, endpoint: str) -> None:
        """The upstream speaks the legacy transport and announced ``endpoint`` (a URL relative to
        its SSE URL) for the client's messages: that path is forwarded from now on, when it is on
        the upstream's own origin (a client sends elsewhere directly, not through us)."""
        self._legacy = True
        target = urlsplit(urljoin(self.upstream_url, endpoint.strip()))
        if (target.scheme, target.netloc) != (self._upstream.scheme, self._upstream.netloc):
            return
        with self._lock:
            if target.path not in self._message_paths:
                self._message_paths = [*self._message_paths, target.path][-MAX_MESSAGE_PATHS:]


def _default_redactor() -> Redactor:
    from mcp_replay_action.redact import Redactor

    return Redactor()


def _messages(doc: JSON) -> list[JSONObject]:
    items = doc if isinstance(doc, list) else [doc]
    return [m for m in items if isinstance(m, dict) and ("method" in m or "id" in m)]


def _decode(raw: bytes | str, tape: Tape) -> JSON:
    try:
        return json.loads(raw)
    except ValueError:
        return None
    except RecursionError:
        tape.count_too_deep()
        return None


def _make_handler(proxy: RecordingProxy) -> type[Handler]:
    class ProxyHandler(Handler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's naming
            self._exchange("POST")

        def do_GET(self) -> None:  # noqa: N802
            self._exchange("GET")

        def do_DELETE(self) -> None:  # noqa: N802
            self._exchange("DELETE")

        def _exchange(self, method: str) -> None:
            started = time.monotonic()
            accept, session = self.headers.get("Accept") or "", self.headers.get("Mcp-Session-Id") or ""
            refused = proxy.refusal(method, self.path, accept, session)
            if refused is not None:
                status, why = refused
                log(f"record: refused {method} {visible(urlsplit(self.path).path, 120)}: {why}")
                self.send_bytes(status, why.encode(), "text/plain", {"Connection": "close"})
                self.close_connection = True
                return
            try:
                body = self.read_body() if method == "POST" else None
            except BodyError as exc:
                self.send_bytes(exc.status, str(exc).encode(), "text/plain")
                return
            scope = self.headers.get("Mcp-Session-Id") or ""
            sent = _messages(_decode(body, proxy.tape)) if body else []
            requests: list[TapeEntry] = []
            for message in sent:
                entry = proxy.tape.from_client(message, scope=scope)
                if entry is not None:
                    requests.append(entry)
            target = proxy.upstream_for(self.path)
            try:
                upstream = proxy.open_upstream(method, target, proxy.forward_headers(dict(self.headers)), body)
            except httpx.HTTPError as exc:
                shown = proxy.redactor.apply(
                    f"{display_url(target)} unreachable: {type(exc).__name__}: {str(exc)[:120]}"
                )
                log(f"record: upstream {shown}")
                ids = [m.get("id") for m in sent if "id" in m and "method" in m]
                error = {"code": -32603, "message": "mcp-replay record: the upstream server is unreachable"}
                self.send_json(502, {"jsonrpc": "2.0", "id": ids[0] if ids else None, "error": error})
                return
            try:
                self._relay(method, upstream, scope, requests, started)
            except _ClientGone:
                pass  # the client hung up; whatever was seen is on the tape
            except MessageTooLarge as exc:  # an SSE event past the cap: the stream is cut there
                log(f"record: upstream: {exc}")
            except (httpx.HTTPError, OSError) as exc:
                if not proxy.stopping:
                    log(f"record: the upstream stream broke: {type(exc).__name__}")
            finally:
                proxy.release(upstream)
                proxy.writer.flush()

        def _relay(
            self, method: str, upstream: httpx.Response, scope: str, requests: list[TapeEntry], started: float
        ) -> None:
            ctype = content_type_of(upstream)
            sse = ctype == "text/event-stream"
            session = upstream.headers.get("Mcp-Session-Id")
            if session and session != scope:
                for entry in requests:
                    proxy.tape.rescope(entry, scope, session)
                scope = session
            headers = {k: v for k, v in upstream.headers.items() if k.lower() not in _HOP}
            facts = {"http_status": upstream.status_code, "content_type": ctype, "sse": sse}
            request = requests[0] if len(requests) == 1 else None
            if method != "POST":
                proxy.tape.http_exchange(method, urlsplit(self.path).path, upstream.status_code, sse, started)
            if not sse:
                try:
                    raw = read_capped(upstream, proxy.max_message)
                except MessageTooLarge as exc:
                    log(f"record: upstream: {exc}")
                    ids = [e.message.get("id") for e in requests]
                    error = {"code": -32603, "message": f"mcp-replay record: {exc}"}
                    self.send_json(502, {"jsonrpc": "2.0", "id": ids[0] if ids else None, "error": error})
                    return
                for message in _messages(_decode(raw, proxy.tape)) if raw.strip() else []:
                    proxy.tape.from_server(message, scope=scope, request=request, facts=facts)
                proxy.writer.flush(header=False)  # on disk before the client has it
                passed = {k: v for k, v in headers.items() if k.lower() != "content-type"}
                self.send_bytes(upstream.status_code, raw, upstream.headers.get("content-type", ""), passed)
                return
            self.start_stream(upstream.status_code, upstream.headers.get("content-type", ""), _stream_headers(headers))
            tee = _TeeText(upstream, self._forward)
            for event in sse_events(cast(httpx.Response, tee), proxy.max_message):
                if event.event == "endpoint":
                    proxy.note_legacy(event.data)
                    continue
                if not event.data.strip():
                    continue
                for message in _messages(_decode(event.data, proxy.tape)):
                    proxy.tape.from_server(message, scope=scope, request=request, facts=facts)
                proxy.writer.flush(header=False)  # on disk before the client has it (``_TeeText``)
            self.end_stream()

        def _forward(self, chunk: bytes) -> None:
            try:
                self.write_chunk(chunk)
            except OSError as exc:
                raise _ClientGone() from exc

    return ProxyHandler


def _stream_headers(headers: dict[str, str]) -> dict[str, str]:
    # start_stream sets these itself.
    return {k: v for k, v in headers.items() if k.lower() not in ("content-type", "cache-control")}


def record_http(
    upstream_url: str,
    listen_host: str,
    listen_port: int,
    cassette_path: str,
    redactor: Redactor | None = None,
    *,
    server: str | Sequence[str] | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    isolate: bool = False,
    startup_timeout: float = 30.0,
    until: Callable[[], bool] | None = None,
    on_ready: Callable[[str], None] | None = None,
    max_message: int = MAX_MESSAGE,
    thread_rules: ThreadRules | None = None,
) -> Cassette:
    """Run the recording proxy until SIGINT/SIGTERM/SIGHUP (or ``until()``), writing the cassette
    as each interaction completes.

    With ``server``, that command is started first (own process group) and the proxy opens once
    ``upstream_url`` accepts connections; the server is stopped at the end. ``on_ready`` gets the
    proxy's URL once it listens. Returns the cassette (not written when it holds nothing).
    """
    redactor = redactor if redactor is not None else _default_redactor()
    # The stop signals are trapped before anything starts: a Ctrl-C or SIGTERM that lands while the
    # server starts or the proxy begins to serve still stops the server and saves what was
    # recorded, instead of a KeyboardInterrupt past the save or a kill with no cleanup.
    with stop_requested() as stop:
        process = None
        if server:
            from mcp_replay_action.transport.process import spawn_server

            process = spawn_server(server, cwd=cwd, env=env, isolate=isolate, stdout=None, stderr=None)
        try:
            if process is not None:
                _wait_for_upstream(upstream_url, startup_timeout, process, stop)
            proxy = RecordingProxy(
                upstream_url,
                listen_host,
                listen_port,
                redactor=redactor,
                cassette_path=cassette_path,
                max_message=max_message,
                thread_rules=thread_rules,
            )
            proxy.start()
            # A --redact-env value may sit in the path, which the proxy's own URL repeats.
            log(
                redactor.apply(
                    f"record: proxy for {display_url(upstream_url)} at {proxy.url}; point your client there, "
                    "Ctrl-C stops"
                )
            )
            try:
                if on_ready is not None:
                    on_ready(proxy.url)
                wait_for_stop(until, stop)
            finally:
                proxy.stop()  # the cassette is complete on disk: its line is said before the server stops
            if proxy.writer.error is not None:
                why = proxy.writer.error.strerror or str(proxy.writer.error)
                raise CassetteError(cassette_path, None, f"cannot write the cassette: {why}")
            cassette = proxy.cassette(cassette_path)
            shown = len(cassette.interactions) if proxy.writer.saved else 0
            log(recorded_line(cassette_path, shown, proxy.writer.meta))
            return cassette
        finally:
            if process is not None:
                process.stop()


def _wait_for_upstream(url: str, timeout: float, process: ServerProcess, stop: threading.Event) -> None:
    """Wait for the started server to listen; a stop signal meanwhile ends the wait at once (the
    recording is interrupted before anything could be recorded)."""
    try:
        wait_for_port(url, timeout, alive=lambda: process.popen.poll() is None and not stop.is_set())
    except ServerStartError as exc:
        if stop.is_set():
            raise KeyboardInterrupt from None
        # Its output went to our terminal; what we can add is the hint about a missing script.
        raise ServerStartError(process.start_failure(str(exc), "")) from None
