"""Issue 8 item 6: raw-socket abuse of both HTTP listeners, each started through the real CLI
(``mcp-replay serve --listen`` and ``mcp-replay record --url --listen``, the latter recording the
former): DNS-rebinding ``Host`` and foreign ``Origin`` get 403; an endless chunk-size line and an
oversized body are refused and the connection closed, so the rest of the body is never parsed as
a request; connections beyond the bound get 503; an idle connection is closed. Every socket has a
timeout and the count of connections is bounded."""

from __future__ import annotations

import contextlib
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakes.http_fake_server import FakeHttpServer
from http_helpers import free_port
from mcp_replay_action.cassette import load
from mcp_replay_action.record.http_proxy import RecordingProxy
from mcp_replay_action.serve import MockHttpServer
from mcp_replay_action.transport.httpd import MAX_BODY, MAX_CONNECTIONS, Bounds

pytestmark = pytest.mark.integration

INIT = (
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
    b'"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}'
)


def wait_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(150):
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@pytest.fixture(scope="module")
def cassette(calc_cassette: Path) -> Path:
    return calc_cassette


@pytest.fixture(scope="module")
def listeners(cassette: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, int]]:
    """The mock on one port and the recording proxy (in front of the mock) on another."""
    serve_port, record_port = free_port(), free_port()
    cli = [sys.executable, "-m", "mcp_replay_action"]
    mock = subprocess.Popen(
        [*cli, "serve", "--cassette", str(cassette), "--listen", f"127.0.0.1:{serve_port}"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    procs = [mock]
    try:
        wait_port(serve_port, mock)
        out = tmp_path_factory.mktemp("listen") / "proxy.jsonl"
        proxy = subprocess.Popen(
            [*cli, "record", "--url", f"http://127.0.0.1:{serve_port}/mcp", "--listen", f"127.0.0.1:{record_port}",
             "--cassette", str(out)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        procs.append(proxy)
        wait_port(record_port, proxy)
        yield {"serve": serve_port, "record": record_port}
    finally:
        for proc in reversed(procs):
            stop(proc)


def exchange(port: int, data: bytes, *, timeout: float = 5.0) -> bytes:
    """Send raw bytes; read until the server closes the connection (or the timeout)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the server may close before reading everything: that is the point
        received = bytearray()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            except OSError:
                break
            if not chunk:
                return bytes(received)
            received += chunk
        raise AssertionError(f"the connection stayed open; got {bytes(received[:200])!r}")


def post(body: bytes, *, host: str = "127.0.0.1", extra: str = "") -> bytes:
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\n{extra}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


BOTH = ["serve", "record"]


@pytest.mark.parametrize("which", BOTH)
def test_a_normal_request_still_works(listeners: dict[str, int], which: str) -> None:
    reply = exchange(listeners[which], post(INIT, host=f"127.0.0.1:{listeners[which]}"))
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]
    ok = exchange(listeners[which], post(INIT, host="localhost", extra="Origin: http://localhost:6274\r\n"))
    assert ok.startswith(b"HTTP/1.1 200"), ok[:200]


@pytest.mark.parametrize("which", BOTH)
@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("rebind.attacker.example", None),
        ("rebind.attacker.example:80", None),
        ("127.0.0.1", "http://attacker.example"),
        ("127.0.0.1", "null"),
    ],
)
def test_dns_rebinding_host_and_foreign_origin_get_403(
    listeners: dict[str, int], which: str, host: str, origin: str | None
) -> None:
    extra = f"Origin: {origin}\r\n" if origin else ""
    reply = exchange(listeners[which], post(INIT, host=host, extra=extra).replace(b"Connection: close\r\n", b""))
    assert reply.startswith(b"HTTP/1.1 403"), reply[:200]
    assert b"connection: close" in reply.lower()


@pytest.mark.parametrize("which", BOTH)
def test_endless_chunk_size_line_is_400_and_closed(listeners: dict[str, int], which: str) -> None:
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    reply = exchange(listeners[which], head + b"f" * 200_000)
    assert reply.startswith(b"HTTP/1.1 400"), reply[:200]


@pytest.mark.parametrize("which", BOTH)
def test_oversized_body_is_413_and_the_rest_is_not_a_request(listeners: dict[str, int], which: str) -> None:
    smuggled = post(INIT).replace(b"Connection: close\r\n", b"")
    head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n".encode()
    reply = exchange(listeners[which], head + smuggled)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]
    assert reply.count(b"HTTP/1.1 ") == 1  # the smuggled request got no answer
    chunked = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    reply = exchange(listeners[which], chunked + b"%x\r\n" % (MAX_BODY + 1) + smuggled)
    assert reply.startswith(b"HTTP/1.1 413") and reply.count(b"HTTP/1.1 ") == 1, reply[:200]


@pytest.mark.parametrize("which", BOTH)
def test_bad_content_length_is_400_and_closed(listeners: dict[str, int], which: str) -> None:
    reply = exchange(listeners[which], b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 400"), reply[:200]


@pytest.mark.parametrize("which", BOTH)
def test_connections_beyond_the_bound_get_503(listeners: dict[str, int], which: str) -> None:
    port = listeners[which]
    held = []
    try:
        for _ in range(MAX_CONNECTIONS):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        time.sleep(0.5)  # let the server account for every one
        assert exchange(port, post(INIT)).startswith(b"HTTP/1.1 503")
    finally:
        for sock in held:
            sock.close()
    for _ in range(50):  # the handler threads notice the closed sockets
        reply = exchange(port, post(INIT))
        if not reply.startswith(b"HTTP/1.1 503"):
            break
        time.sleep(0.1)
    assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


def test_an_idle_connection_is_closed(cassette: Path) -> None:
    with MockHttpServer(load(cassette), bounds=Bounds(idle=0.5)) as mock:
        port = int(mock.url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            started = time.monotonic()
            assert sock.recv(1024) == b""  # closed by the server, not by our timeout
            assert time.monotonic() - started < 9
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:  # half a request, then silence
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
            assert sock.recv(1024).startswith(b"HTTP/1.1 400")


def _trickle_every_slot(port: int, at_once: bytes, trickled: bytes, rounds: int = 80) -> tuple[list[bool], bytes]:
    """Fill every slot with a client that sends ``at_once``, then ``trickled`` a byte at a time
    (well inside the idle bound at each read), and never ends its request: whether the server
    closed each connection within ``rounds`` rounds of 0.1 s, and the answer to a fresh request
    sent then, while the clients it did not close still trickle."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(MAX_CONNECTIONS)]
    closed = [False] * len(socks)
    try:
        for sock in socks:
            sock.sendall(at_once)
        for step in range(rounds):
            for i, sock in enumerate(socks):
                if closed[i]:
                    continue
                try:
                    sock.sendall(trickled[step : step + 1])
                    if select.select([sock], [], [], 0)[0]:
                        closed[i] = sock.recv(1024) == b""
                except OSError:  # reset by the server
                    closed[i] = True
            if all(closed):
                break
            time.sleep(0.1)
        return closed, exchange(port, post(INIT, host=f"127.0.0.1:{port}"))
    finally:
        for sock in socks:
            sock.close()


@contextlib.contextmanager
def listener(cassette: Path, which: str, bounds: Bounds) -> Iterator[int]:
    """The port of the mock, or of the recording proxy in front of it, both with ``bounds``."""
    with contextlib.ExitStack() as stack:
        mock = stack.enter_context(MockHttpServer(load(cassette), bounds=bounds))
        url = mock.url
        if which == "record":
            url = stack.enter_context(RecordingProxy(mock.url, bounds=bounds)).url
        yield int(url.split(":")[2].split("/")[0])


@pytest.mark.parametrize("which", BOTH)
def test_a_trickled_request_head_is_bounded_as_a_whole(cassette: Path, which: str) -> None:
    # Each byte arrives 0.1 s after the last, far inside the 5 s idle bound: only a bound on the
    # whole head (0.5 s here) frees the slots.
    with listener(cassette, which, Bounds(idle=5, head=0.5)) as port:
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 10_000
        closed, reply = _trickle_every_slot(port, b"", head)
        assert all(closed), f"{closed.count(False)} of {len(closed)} trickling clients still hold a slot"
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


@pytest.mark.parametrize("which", BOTH)
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_trickled_request_body_is_bounded_as_a_whole(cassette: Path, which: str, chunked: bool) -> None:
    # The head arrives whole at once, then the body a byte every 0.1 s, far inside the 5 s idle
    # bound: only a bound on the whole body (0.5 s here) frees the slots.
    with listener(cassette, which, Bounds(idle=5, head=5, body=0.5)) as port:
        framing = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: 10000"
        head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + framing + b"\r\n\r\n"
        body = b"2710\r\n" + b" " * 10_000 if chunked else b" " * 10_000
        closed, reply = _trickle_every_slot(port, head, body)
        assert all(closed), f"{closed.count(False)} of {len(closed)} trickling clients still hold a slot"
        assert reply.startswith(b"HTTP/1.1 200"), reply[:200]


@pytest.mark.parametrize(
    ("request_head", "status"),
    [
        # What a page's <img> or a navigation sends: no Origin, so the Origin check lets it by.
        (b"GET /admin/delete HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: image/*\r\n\r\n", b"404"),
        (b"GET /admin/delete HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", b"404"),
        (b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/html\r\n\r\n", b"406"),
        (b"GET /mcp/../admin HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n", b"404"),
        (b"DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", b"400"),
        (b"DELETE /admin/users HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: s\r\n\r\n", b"404"),
        (b"POST /admin/delete HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}", b"404"),
        (b"POST /messages?session=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}", b"404"),
    ],
)
def test_the_recording_proxy_forwards_only_what_an_mcp_client_sends(request_head: bytes, status: bytes) -> None:
    with FakeHttpServer("json") as upstream, RecordingProxy(upstream.url) as proxy:
        port = int(proxy.url.split(":")[2].split("/")[0])
        reply = exchange(port, request_head)
        assert reply.startswith(b"HTTP/1.1 " + status), reply[:200]
        assert upstream.seen == []  # nothing reached the server
        ok = exchange(port, post(INIT, host=f"127.0.0.1:{port}"))  # an MCP client still gets through
        assert ok.startswith(b"HTTP/1.1 200"), ok[:200]
        assert [s["path"] for s in upstream.seen] == ["/mcp"]
