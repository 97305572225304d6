"""Issue 8 item 5: a legacy HTTP+SSE server whose ``endpoint`` event names another origin (here
another port on 127.0.0.1) is refused, as the official SDK does, and the ``--header`` credentials
never reach that origin. Driven through the real ``mcp-replay replay`` command."""

from __future__ import annotations

import http.server
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from mcp_replay_action.demo import record_demo_session

pytestmark = pytest.mark.integration

SECRET = "Bearer legacy-secret-" + "9f" * 10


class Elsewhere:
    """A raw listener on another port that keeps whatever bytes any connection sends it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    self.received += conn.recv(65536)
                except OSError:
                    pass

    def close(self) -> None:
        self.stop.set()
        self.thread.join(5)
        self.sock.close()


def legacy_server(endpoint: str) -> http.server.ThreadingHTTPServer:
    """POST is refused (so the client falls back to the old transport); GET opens an SSE stream
    whose endpoint event names ``endpoint``, then stays open for a few seconds."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(f"event: endpoint\ndata: {endpoint}\n\n".encode())
            self.wfile.flush()
            self.server.done.wait(5)  # type: ignore[attr-defined]

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.done = threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def elsewhere() -> Iterator[Elsewhere]:
    listener = Elsewhere()
    try:
        yield listener
    finally:
        listener.close()


def test_endpoint_on_another_origin_is_refused_and_gets_no_credentials(tmp_path: Path, elsewhere: Elsewhere) -> None:
    cassette = tmp_path / "demo.jsonl"
    record_demo_session(cassette)
    server = legacy_server(f"http://127.0.0.1:{elsewhere.port}/messages?session=1")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/sse"
        done = subprocess.run(
            [sys.executable, "-m", "mcp_replay_action", "replay", "--url", url, "--header",
             f"Authorization: {SECRET}", "--cassette", str(cassette), "--startup-timeout", "5"],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        server.done.set()  # type: ignore[attr-defined]
        server.shutdown()
        server.server_close()
    assert bytes(elsewhere.received) == b""  # nothing at all went there, so no credential
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"another origin (http://127.0.0.1:{elsewhere.port}/messages)" in done.stderr
    assert SECRET not in done.stderr + done.stdout
