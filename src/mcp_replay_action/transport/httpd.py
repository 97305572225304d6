"""Standard-library HTTP serving shared by the recording proxy (``record_http.py``) and the mock
server (``serve.py``): a threaded HTTP/1.1 server that stops cleanly, and a request handler that can
answer with JSON, with an empty status, or with a Server-Sent Events stream written as it goes.

The standard library is enough here: one thread per connection, chunked transfer encoding for
streams, and nothing to add to the action's image.

Both listeners run on a developer's machine next to a browser, so they hold the line the MCP
transport spec asks local servers to hold: a request whose ``Host`` is not this machine (DNS
rebinding) or whose ``Origin`` is a foreign web page gets 403; bodies are capped, chunked ones
included (every line read has a limit); a 400 or 413 closes the connection, so the unread rest of
a body is never parsed as a new request; at most ``MAX_CONNECTIONS`` connections are served at
once (the next gets 503), a connection idle for ``IDLE_TIMEOUT`` seconds is closed, and so is one
whose request head (request line and headers) has not arrived whole ``HEAD_TIMEOUT`` seconds after
its first byte, or whose body has not arrived whole ``BODY_TIMEOUT`` seconds after its head: a
client trickling a byte now and then, inside the idle bound at every read, would otherwise hold its
slot for ever, and 64 of them every slot (``Bounds``).
"""

from __future__ import annotations

import io
import ipaddress
import json
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON

# Request bodies larger than this are refused: a JSON-RPC message is never this big in practice.
MAX_BODY = 16 * 1024 * 1024
MAX_LINE = 1024  # a chunk-size line or a trailer
MAX_CONNECTIONS = 64
IDLE_TIMEOUT = 30.0
HEAD_TIMEOUT = 10.0  # from a request's first byte to the end of its headers
BODY_TIMEOUT = 30.0  # from the end of a request's headers to the end of its body (16 MB at 0.5 MB/s)
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"


class BodyError(ValueError):
    """A request body we will not read: ``status`` is 400 (malformed) or 413 (too large)."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def _host_name(value: str) -> str:
    """The host of a ``Host`` header or of an origin's authority, lower case, without port or
    IPv6 brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def is_loopback(host: str) -> bool:
    """``localhost`` (and ``*.localhost``) or a loopback address."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refusal(bound_host: str, host_header: str | None, origin: str | None) -> str:
    """Why a request must be refused (DNS rebinding, a foreign page), or "" to serve it. A
    listener on a loopback address serves only loopback ``Host`` names; one the user bound to
    another address serves any. An ``Origin``, when sent, must be loopback or the ``Host`` itself."""
    host = _host_name(host_header or "")
    if is_loopback(_host_name(bound_host)) and not is_loopback(host):
        return f"Host {host_header!r} is not this machine"
    if origin is not None:
        scheme, sep, authority = origin.strip().partition("://")
        origin_host = _host_name(authority.split("/", 1)[0]) if sep else ""
        if scheme.lower() not in ("http", "https") or not (is_loopback(origin_host) or origin_host == host):
            return f"Origin {origin!r} is not allowed"
    return ""


@dataclass(frozen=True)
class Bounds:
    """How long a listener waits on a client, in seconds: ``idle`` for any one read or write,
    ``head`` for a whole request head from its first byte, ``body`` for a whole request body from
    the end of its head. Tests shorten them; nothing else needs to."""

    idle: float = IDLE_TIMEOUT
    head: float = HEAD_TIMEOUT
    body: float = BODY_TIMEOUT


DEFAULT_BOUNDS = Bounds()


class StoppableServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that runs on its own thread and, when stopped, also breaks the
    connections its handler threads are still serving (kept-alive sockets, open SSE streams)."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # The listen backlog (the standard library's is 5): connections beyond it wait for their SYN
    # to be sent again (1 s, 3 s, ...), so 64 at once took 10 s to be accepted.
    request_queue_size = MAX_CONNECTIONS

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        bounds: Bounds = DEFAULT_BOUNDS,
    ) -> None:
        self.bounds = bounds
        try:
            super().__init__(address, handler)
        except OSError as exc:
            raise ConfigError(f"cannot listen on {address[0]}:{address[1]}: {exc.strerror or exc}") from None
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.stopping = threading.Event()

    @property
    def origin(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"

    def process_request(self, request: JSON, client_address: JSON) -> None:
        with self._conn_lock:
            busy = len(self._connections) >= MAX_CONNECTIONS
            if not busy:
                self._connections.add(request)
        if busy:  # answered here, on the accepting thread, without reading a byte
            try:
                request.settimeout(1.0)
                request.sendall(_BUSY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def handle_error(self, request: JSON, client_address: JSON) -> None:
        """A client that hung up (or a connection broken by ``stop``) is no error; anything else
        is one line on stderr, never the standard library's traceback."""
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError) or self.stopping.is_set():
            return
        log(f"error serving a request: {type(exc).__name__}: {exc}")

    def shutdown_request(self, request: JSON) -> None:
        with self._conn_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def start(self) -> None:
        """Serve on a daemon thread."""
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop accepting, break open connections, release the port. Bounded and idempotent."""
        if self.stopping.is_set():
            return
        self.stopping.set()
        if self._thread is not None:
            self.shutdown()
            self._thread.join(timeout=2.0)
        with self._conn_lock:
            conns = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.server_close()


class _Clock(io.RawIOBase):
    """A connection's reads (under the buffered ``rfile``), each bounded by the idle timeout and,
    while a request head or body is read (``begin`` to ``end``), all of them together: a head
    by ``Bounds.head`` seconds from its first byte (a kept-alive connection may wait before it),
    a body by ``Bounds.body`` seconds from its head's end (it is due at once). A read past that
    raises TimeoutError, which the handler answers by closing the connection."""

    def __init__(self, sock: socket.socket, bounds: Bounds) -> None:
        super().__init__()
        self.sock, self.bounds = sock, bounds
        self.limit: float | None = None  # the bound of what is being read, until its clock starts
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: JSON) -> int:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request did not arrive in time")
            self.sock.settimeout(min(self.bounds.idle, left))
        n = self.sock.recv_into(buffer)
        if self.limit is not None and self.deadline is None and n:
            self.deadline = time.monotonic() + self.limit
        return n

    def begin_head(self) -> None:
        self.limit, self.deadline = self.bounds.head, None

    def begin_body(self) -> None:
        self.limit, self.deadline = self.bounds.body, time.monotonic() + self.bounds.body

    def end(self) -> None:
        if self.deadline is not None:
            self.sock.settimeout(self.bounds.idle)
        self.limit, self.deadline = None, None


class Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 handler with small helpers for JSON bodies and SSE streams."""

    protocol_version = "HTTP/1.1"
    server_version = "mcp-replay"
    sys_version = ""

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
        pass  # request lines are noise on a mock's stderr; the modules log what matters

    def setup(self) -> None:
        super().setup()
        bounds = getattr(self.server, "bounds", DEFAULT_BOUNDS)
        # Every read and write on this connection: the idle bound (a silent client is dropped).
        self.connection.settimeout(bounds.idle)
        # Reads go through the clock instead of the file the standard handler made.
        self.rfile.close()
        self._clock = _Clock(self.connection, bounds)
        self.rfile = io.BufferedReader(self._clock)

    def handle_one_request(self) -> None:
        self._clock.begin_head()  # the request line and headers, read by the standard handler
        super().handle_one_request()

    def parse_request(self) -> bool:
        try:
            parsed = super().parse_request()  # reads the headers
        finally:
            self._clock.end()
        if not parsed:
            return False
        address = self.server.server_address
        bound = str(address[0]) if isinstance(address, tuple) else ""
        why = refusal(bound, self.headers.get("Host"), self.headers.get("Origin"))
        if why:
            self.send_bytes(403, f"forbidden: {why}".encode(), "text/plain")
            return False
        return True

    def _line(self) -> bytes:
        line = self.rfile.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE or not line.endswith(b"\n"):
            raise BodyError(400, "malformed chunked body")
        return line

    def read_body(self) -> bytes:
        """The request body (Content-Length or chunked), whole within ``Bounds.body`` seconds.
        Raises BodyError (400 or 413)."""
        self._clock.begin_body()
        try:
            return self._read_body()
        except TimeoutError:
            raise BodyError(400, "the request body stopped arriving") from None
        finally:
            self._clock.end()

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            total = 0
            while True:
                try:
                    size = int(self._line().split(b";")[0].strip(), 16)
                except ValueError as exc:
                    raise exc if isinstance(exc, BodyError) else BodyError(400, "malformed chunk size") from None
                if size == 0:
                    while self._line().strip():  # trailers, each bounded, until the blank line
                        pass
                    break
                total += size
                if size < 0 or total > MAX_BODY:
                    raise BodyError(413, "request body too large")
                parts.append(self.rfile.read(size))
                if self._line().strip():
                    raise BodyError(400, "malformed chunked body")
            return b"".join(parts)
        raw = (self.headers.get("Content-Length") or "0").strip()
        if not raw.isdigit():
            raise BodyError(400, "malformed Content-Length")
        length = int(raw)
        if length > MAX_BODY:
            raise BodyError(413, "request body too large")
        return self.rfile.read(length) if length > 0 else b""

    def send_bytes(
        self, status: int, body: bytes, content_type: str = "", headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if status in (400, 403, 413):
            # Whatever the client sent after a refused request (the rest of a body) is not a request.
            self.send_header("Connection", "close")
            self.close_connection = True
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status: int, doc: JSON, headers: Mapping[str, str] | None = None) -> None:
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.send_bytes(status, body, "application/json", headers)

    def start_stream(self, status: int, content_type: str, headers: Mapping[str, str] | None = None) -> None:
        """Begin a chunked response (an SSE stream); follow with ``write_chunk`` and ``end_stream``."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def write_chunk(self, data: bytes) -> None:
        if data:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def sse_event(message: JSON, *, event: str = "message", event_id: str | None = None) -> bytes:
    """One SSE event carrying a JSON-RPC message."""
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


def log(text: str) -> None:
    """One line on stderr, for a person watching the proxy or the mock."""
    try:
        from mcp_replay_action.values.safe import no_workflow_commands

        sys.stderr.write(no_workflow_commands(f"mcp-replay: {text}") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


@contextmanager
def stop_requested() -> Iterator[threading.Event]:
    """An event that SIGINT, SIGTERM or SIGHUP sets while the block runs (the previous handlers
    are put back after). Enter it before a listener starts serving, so a stop that lands while it
    starts is seen by ``wait_for_stop`` rather than lost or fatal."""
    from mcp_replay_action.transport.process import trap_stop_signals

    stop = threading.Event()
    restore = trap_stop_signals(stop.set)
    try:
        yield stop
    finally:
        restore()


def wait_for_stop(until: Callable[[], bool] | None, stop: threading.Event) -> None:
    """Block until ``stop`` is set (by ``stop_requested``, entered before serving began) or until
    ``until()`` turns true, polled 10 times a second."""
    try:
        while not stop.wait(0.1):
            if until is not None and until():
                break
    except KeyboardInterrupt:
        pass
