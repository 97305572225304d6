"""A tiny Streamable HTTP MCP server whose misbehaviour is chosen per test, for the HTTP transport,
proxy and fault tests. Runs in-process on a thread (``FakeHttpServer(...).start()``) or as a script
(``python http_fake_server.py BEHAVIOUR PORT``) for the ``--server CMD --url URL`` tests.

Behaviours:

- ``json``: answers every request with a JSON body (``initialize`` mints a session id); the result
  of any other request echoes its method and params.
- ``sse``: answers over SSE; ``tools/call`` of ``chatty`` sends a log notification and a
  ``roots/list`` request first, and answers only after the client answered that request.
- ``status500``: every request after ``initialize`` gets ``500`` with a plain-text body.
- ``jsonrpc500``: every request after ``initialize`` gets ``500`` with a JSON-RPC error for its id.
- ``truncate``: after ``initialize``, an SSE answer sends one notification, then the connection drops.
- ``hang``: after ``initialize``, a request is read and never answered.
- ``resume``: the SSE answer carries event ids and ends before the response; a ``GET`` with
  ``Last-Event-ID`` delivers the response.
- ``legacy``: the 2024-11-05 HTTP+SSE transport (``GET /sse`` announces ``/messages?session=...``).
- ``slow_sse``: the SSE answer sends one notification, then waits for ``release`` before the
  response (to prove a proxy passes streams through unbuffered).
- ``late_get``: answers as ``json``, and refuses the ``GET`` stream (400) until the client has
  posted ``notifications/initialized``; from then on it opens it and announces
  ``notifications/tools/list_changed`` on it at once.

Everything received is kept in ``seen`` (method, path, headers, body) for assertions.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler
from typing import Any

from mcp_replay_action.transport.httpd import StoppableServer

PROTOCOL = "2025-06-18"
# These misbehave on every request but ``initialize``, so a session starts and then meets the fault.
_FAULTS = frozenset({"status500", "jsonrpc500", "truncate", "hang"})


class FakeHttpServer:
    def __init__(self, behaviour: str = "json", port: int = 0) -> None:
        self.behaviour = behaviour
        self.seen: list[dict[str, Any]] = []
        self.stop_event = threading.Event()
        self.release = threading.Event()
        self.client_answers: queue.Queue[dict[str, Any]] = queue.Queue()
        self.legacy_streams: dict[str, queue.Queue[bytes | None]] = {}
        self.pending_resume: dict[str, dict[str, Any]] = {}
        self.initialized = threading.Event()  # the client posted notifications/initialized
        # StoppableServer also breaks kept-alive connections on stop, so a stopped fake is gone.
        self.httpd = StoppableServer(("127.0.0.1", port), _handler(self))

    @property
    def url(self) -> str:
        path = "/sse" if self.behaviour == "legacy" else "/mcp"
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def start(self) -> FakeHttpServer:
        self.httpd.start()
        return self

    def stop(self) -> None:
        self.stop_event.set()
        self.release.set()
        for q in self.legacy_streams.values():
            q.put(None)
        self.httpd.stop()

    def __enter__(self) -> FakeHttpServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def posts(self) -> list[dict[str, Any]]:
        return [s for s in self.seen if s["method"] == "POST"]


def _result_for(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("method") == "initialize":
        return {
            "protocolVersion": PROTOCOL,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-http", "version": "1.0"},
        }
    if message.get("method") == "tools/list":
        schema = {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer"}},
        }
        return {"tools": [{"name": "chatty", "inputSchema": schema}]}
    return {"echo": {"method": message.get("method"), "params": message.get("params")}}


def _event(message: Any, event_id: str | None = None, event: str | None = None) -> bytes:
    head = (f"id: {event_id}\n" if event_id else "") + (f"event: {event}\n" if event else "")
    data = message if isinstance(message, str) else json.dumps(message)
    return f"{head}data: {data}\n\n".encode()


def _handler(fake: FakeHttpServer) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _record(self, body: bytes = b"") -> Any:
            doc = json.loads(body) if body else None
            fake.seen.append({"method": self.command, "path": self.path, "headers": dict(self.headers), "body": doc})
            return doc

        def _json(self, status: int, doc: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(doc).encode() if doc is not None else b""
            self.send_response(status)
            if doc is not None:
                self.send_header("Content-Type", "application/json")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)
            self.wfile.flush()

        def _start_sse(self, headers: dict[str, str] | None = None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            self.wfile.flush()

        def _send(self, data: bytes) -> None:
            self.wfile.write(data)
            self.wfile.flush()

        def do_DELETE(self) -> None:  # noqa: N802
            self._record()
            self._json(200, None)

        def do_GET(self) -> None:  # noqa: N802
            self._record()
            b = fake.behaviour
            if b == "legacy" and self.path.startswith(("/sse", "/events")):
                session = uuid.uuid4().hex
                q: queue.Queue[bytes | None] = queue.Queue()
                fake.legacy_streams[session] = q
                self._start_sse()
                self._send(_event(f"/messages?session={session}", event="endpoint"))
                while not fake.stop_event.is_set():
                    item = q.get()
                    if item is None:
                        break
                    self._send(item)
                return
            if b == "late_get":
                if not fake.initialized.is_set():
                    self._json(400, {"jsonrpc": "2.0", "error": {"code": -32000, "message": "not initialized"}})
                    return
                self._start_sse()
                self._send(_event({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}))
                fake.stop_event.wait(60)
                return
            last = self.headers.get("Last-Event-ID")
            if b == "resume" and last in fake.pending_resume:
                self._start_sse()
                self._send(_event(fake.pending_resume.pop(last), event_id="e3"))
                return
            self._json(405, None)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            msg = self._record(self.rfile.read(length))
            b = fake.behaviour
            if b == "legacy":
                session = self.path.partition("session=")[2]
                q = fake.legacy_streams.get(session)
                if q is None:
                    self._json(404, None)
                    return
                self._json(202, None)
                if "method" in msg and "id" in msg:
                    q.put(_event({"jsonrpc": "2.0", "id": msg["id"], "result": _result_for(msg)}))
                return
            if "id" not in msg or "method" not in msg:
                if "method" not in msg:
                    fake.client_answers.put(msg)
                elif msg["method"] == "notifications/initialized":
                    fake.initialized.set()
                self._json(202, None)
                return
            answer = {"jsonrpc": "2.0", "id": msg["id"], "result": _result_for(msg)}
            headers = {"Mcp-Session-Id": "sess-123"} if msg["method"] == "initialize" else {}
            if b in ("json", "late_get") or (msg["method"] == "initialize" and b in _FAULTS):
                self._json(200, answer, headers)
            elif b == "status500":
                raw = b"Internal Server Error: boom"
                self.send_response(500)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            elif b == "jsonrpc500":
                self._json(500, {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": "boom"}})
            elif b == "hang":
                fake.stop_event.wait(60)
            elif b == "truncate":
                self._start_sse(headers)
                self._send(_event({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}}))
                # then the connection drops without the response
            elif b == "resume":
                if msg["method"] == "initialize":
                    self._json(200, answer, headers)
                    return
                self._start_sse(headers)
                self._send(b"id: e1\nretry: 10\ndata: \n\n")  # priming event
                note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "before"}}
                self._send(_event(note, event_id="e2"))
                fake.pending_resume["e2"] = answer
            elif b == "slow_sse":
                self._start_sse(headers)
                note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}
                self._send(_event(note))
                fake.release.wait(30)
                self._send(_event(answer))
            elif b == "sse":
                self._start_sse(headers)
                if msg["method"] == "tools/call" and (msg.get("params") or {}).get("name") == "chatty":
                    log = {
                        "jsonrpc": "2.0",
                        "method": "notifications/message",
                        "params": {"level": "info", "data": "hi"},
                    }
                    self._send(_event(log))
                    self._send(_event({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}))
                    try:
                        reply = fake.client_answers.get(timeout=10)
                    except queue.Empty:
                        return
                    answer["result"] = {"roots_seen": reply.get("result")}
                self._send(_event(answer))
            else:
                self._json(500, None)

    return H


if __name__ == "__main__":
    server = FakeHttpServer(sys.argv[1], int(sys.argv[2])).start()
    print(f"fake listening on {server.url}", flush=True)
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        server.stop()
