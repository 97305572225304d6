"""Standard-library HTTP serving shared by the recording proxy (``record_http.py``) and the mock
server (``serve.py``): a threaded HTTP/1.1 server that stops cleanly, and a request handler that can
answer with JSON, with an empty status, or with a Server-Sent Events stream written as it goes.

The standard library is enough here: one thread per connection, chunked transfer encoding for
streams, and nothing to add to the action's image.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from mcp_replay_action.errors import ConfigError

# Request bodies larger than this are refused: a JSON-RPC message is never this big in practice.
MAX_BODY = 64 * 1024 * 1024


class StoppableServer(ThreadingHTTPServer):
    """A ThreadingHTTPServer that runs on its own thread and, when stopped, also breaks the
    connections its handler threads are still serving (kept-alive sockets, open SSE streams)."""

    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
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

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conn_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
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


class Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 handler with small helpers for JSON bodies and SSE streams."""

    protocol_version = "HTTP/1.1"
    server_version = "mcp-replay"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass  # request lines are noise on a mock's stderr; the modules log what matters

    def read_body(self) -> bytes:
        """The request body (Content-Length or chunked)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts: list[bytes] = []
            total = 0
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                total += size
                if total > MAX_BODY:
                    raise ValueError("request body too large")
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            raise ValueError("request body too large")
        return self.rfile.read(length) if length > 0 else b""

    def send_bytes(
        self, status: int, body: bytes, content_type: str = "", headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status: int, doc: Any, headers: Mapping[str, str] | None = None) -> None:
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


def sse_event(message: Any, *, event: str = "message", event_id: str | None = None) -> bytes:
    """One SSE event carrying a JSON-RPC message."""
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    head = f"id: {event_id}\n" if event_id else ""
    return f"{head}event: {event}\ndata: {data}\n\n".encode()


def log(text: str) -> None:
    """One line on stderr, for a person watching the proxy or the mock."""
    try:
        sys.stderr.write(f"mcp-replay: {text}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def wait_for_stop(until: Callable[[], bool] | None = None) -> None:
    """Block until SIGINT, SIGTERM or SIGHUP (or until ``until()`` turns true, polled 10 times a second)."""
    from mcp_replay_action.transport.process import trap_stop_signals

    stop = threading.Event()
    restore = trap_stop_signals(stop.set)
    try:
        while not stop.wait(0.1):
            if until is not None and until():
                break
    except KeyboardInterrupt:
        pass
    finally:
        restore()
