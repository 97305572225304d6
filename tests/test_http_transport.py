"""The Streamable HTTP (and legacy HTTP+SSE) transport against small fake servers
(tests/fakes/http_fake_server.py): headers, sessions, SSE interleaving, resumption, and faults."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from fakes.http_fake_server import FakeHttpServer
from http_helpers import free_port
from mcp_replay_action.errors import ConfigError, ServerExited, ServerStartError, TransportTimeout
from mcp_replay_action.transport.http_client import (
    HttpStatusError,
    HttpTransport,
    display_url,
    encode_header_value,
    param_header_map,
    parse_header,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

FAKE_SCRIPT = Path(__file__).parent / "fakes" / "http_fake_server.py"
SECRET = "s3cr3t-token-value-0123456789"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def request(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


INIT = request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def handshake(t: HttpTransport) -> None:
    t.send(INIT)
    assert t.receive(5)["result"]["protocolVersion"] == "2025-06-18"
    t.send(INITIALIZED)


def headers_of(seen: dict[str, Any]) -> dict[str, str]:
    return {k.lower(): v for k, v in seen["headers"].items()}


# -- unit helpers ----------------------------------------------------------------------------------


def test_parse_header_and_display_url_hide_secrets() -> None:
    assert parse_header(f"Authorization: Bearer {SECRET}") == ("Authorization", f"Bearer {SECRET}")
    with pytest.raises(ConfigError) as err:
        parse_header(f"Bearer{SECRET}")
    assert SECRET not in str(err.value)
    assert display_url(f"https://user:{SECRET}@example.test:8443/mcp?key={SECRET}") == "https://example.test:8443/mcp"


def test_header_value_encoding_and_param_map() -> None:
    assert encode_header_value("add") == "add"
    assert encode_header_value("héllo").startswith("=?base64?")
    schema = {"properties": {"a": {"x-mcp-header": "A"}, "nest": {"properties": {"b": {"x-mcp-header": "B"}}}}}
    assert param_header_map(schema) == {("a",): "A", ("nest", "b"): "B"}


def test_bad_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        HttpTransport("ftp://example.test/mcp")


# -- the happy paths -------------------------------------------------------------------------------


def test_json_answers_session_and_protocol_headers() -> None:
    with FakeHttpServer("json") as fake:
        t = HttpTransport(fake.url, headers={"Authorization": f"Bearer {SECRET}"})
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/list"))
            assert t.receive(5)["id"] == 2
            assert t.transport_facts(2) == {"http_status": 200, "content_type": "application/json", "sse": False}
            diag = repr(t.diagnostics())
        finally:
            t.close()
        posts = fake.posts()
        first, note, listing = (headers_of(p) for p in posts)
        assert "mcp-session-id" not in first and "mcp-protocol-version" not in first
        assert first["accept"] == "application/json, text/event-stream"
        assert first["authorization"] == f"Bearer {SECRET}"
        assert note["mcp-session-id"] == listing["mcp-session-id"] == "sess-123"
        assert listing["mcp-protocol-version"] == "2025-06-18"
        deletes = [s for s in fake.seen if s["method"] == "DELETE"]
        assert len(deletes) == 1 and headers_of(deletes[0])["mcp-session-id"] == "sess-123"
        assert SECRET not in diag


def test_stateless_era_headers_come_from_each_request() -> None:
    with FakeHttpServer("json") as fake:
        t = HttpTransport(fake.url)
        t.start()
        try:
            t.send(request(1, "tools/list", {"_meta": MODERN_META}))
            t.receive(5)
            call = {"name": "chatty", "arguments": {"region": "eu-west", "n": 3}, "_meta": MODERN_META}
            t.send(request(2, "tools/call", call))
            t.receive(5)
            t.send(request(3, "resources/read", {"uri": "file:///tmp/ünï.txt", "_meta": MODERN_META}))
            t.receive(5)
        finally:
            t.close()
        listing, calling, reading = (headers_of(p) for p in fake.posts())
        assert listing["mcp-protocol-version"] == "2026-07-28" and listing["mcp-method"] == "tools/list"
        assert "mcp-name" not in listing
        assert calling["mcp-method"] == "tools/call" and calling["mcp-name"] == "chatty"
        assert calling["mcp-param-region"] == "eu-west"  # learned from the tool's x-mcp-header
        assert reading["mcp-name"].startswith("=?base64?")
        assert not any(s["method"] == "DELETE" for s in fake.seen)  # no session, nothing to delete


def test_sse_interleaving_and_answering_while_the_stream_is_open() -> None:
    with FakeHttpServer("sse") as fake:
        t = HttpTransport(fake.url, listen=False)
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/call", {"name": "chatty", "arguments": {}}))
            log = t.receive(5)
            assert log["method"] == "notifications/message"
            asked = t.receive(5)
            assert asked == {"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"}
            # The POST stream is still open; the answer travels on its own POST.
            t.send({"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": [{"uri": "file:///w"}]}})
            final = t.receive(5)
            assert final["id"] == 2
            assert final["result"] == {"roots_seen": {"roots": [{"uri": "file:///w"}]}}
            assert t.transport_facts(2)["sse"] is True
        finally:
            t.close()


def asked(fake: FakeHttpServer) -> list[str]:
    """What the fake was sent, in order: each GET, and each POSTed message by its method."""
    return [s["method"] if s["method"] == "GET" else s["body"]["method"] for s in fake.seen if s["method"] != "DELETE"]


def test_the_get_stream_is_opened_before_initialized_and_asked_again_when_refused() -> None:
    """The GET stream is asked for before ``notifications/initialized`` is posted (a notice sent
    as the handshake ends then has a stream to ride); a server that refuses it until then is asked
    once more after the notice, and what it announces arrives. One that offers no such stream
    (405) is not asked twice."""
    with FakeHttpServer("late_get") as fake:
        t = HttpTransport(fake.url)
        t.start()
        try:
            handshake(t)
            assert t.receive(5) == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        finally:
            t.close()
        assert asked(fake) == ["initialize", "GET", "notifications/initialized", "GET"], fake.seen
    with FakeHttpServer("json") as fake:
        t = HttpTransport(fake.url)
        t.start()
        try:
            handshake(t)
            t.send(request(2, "ping"))
            assert t.receive(5)["id"] == 2
        finally:
            t.close()
        assert asked(fake) == ["initialize", "GET", "notifications/initialized", "ping"], fake.seen


def test_stream_is_resumed_with_last_event_id() -> None:
    with FakeHttpServer("resume") as fake:
        t = HttpTransport(fake.url, listen=False)
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/call", {"name": "x"}))
            assert t.receive(5)["method"] == "notifications/message"
            assert t.receive(5)["id"] == 2
        finally:
            t.close()
        gets = [s for s in fake.seen if s["method"] == "GET"]
        assert headers_of(gets[0])["last-event-id"] == "e2"


def test_legacy_http_sse_transport() -> None:
    with FakeHttpServer("legacy") as fake:
        t = HttpTransport(fake.url)  # a URL ending in /sse selects the old transport
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/list"))
            assert t.receive(5)["id"] == 2
            assert t.diagnostics()["transport"] == "sse"
        finally:
            t.close()
        assert all(p["path"].startswith("/messages?session=") for p in fake.posts())


def test_auto_mode_falls_back_to_legacy_when_post_is_refused() -> None:
    with FakeHttpServer("legacy") as fake:
        # POST to /events is refused (404), so the transport opens the old GET stream there instead.
        t = HttpTransport(fake.url.removesuffix("/sse") + "/events", mode="auto")
        t.start()
        try:
            t.send(INIT)
            assert t.receive(5)["id"] == 1
            assert t.diagnostics()["transport"] == "sse"
        finally:
            t.close()


# -- faults ----------------------------------------------------------------------------------------


def test_connection_refused_at_start() -> None:
    t = HttpTransport(f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(ServerStartError, match="connection refused|Connection refused|cannot connect"):
        t.start()
    assert time.monotonic() - started < 5
    t.close()


def test_connection_refused_mid_session() -> None:
    fake = FakeHttpServer("json").start()
    t = HttpTransport(fake.url, listen=False)
    t.start()
    try:
        handshake(t)
        fake.stop()
        t.send(request(2, "tools/list"))
        with pytest.raises(ServerExited, match="connection refused|cannot reach"):
            t.receive(5)
    finally:
        t.close()


def test_http_500_without_jsonrpc_body_is_a_typed_error() -> None:
    with FakeHttpServer("status500") as fake:
        t = HttpTransport(fake.url, listen=False)
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/list"))
            with pytest.raises(HttpStatusError) as err:
                t.receive(5)
            assert err.value.status == 500 and "boom" in str(err.value)
            assert isinstance(err.value, ServerExited)
        finally:
            t.close()


def test_http_500_with_jsonrpc_error_is_the_answer() -> None:
    with FakeHttpServer("jsonrpc500") as fake:
        t = HttpTransport(fake.url, listen=False)
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/list"))
            answer = t.receive(5)
            assert answer["error"]["message"] == "boom"
            assert t.transport_facts(2)["http_status"] == 500
        finally:
            t.close()


def test_stream_that_stops_mid_answer() -> None:
    with FakeHttpServer("truncate") as fake:
        t = HttpTransport(fake.url, listen=False)
        t.start()
        try:
            handshake(t)
            t.send(request(2, "tools/list"))
            assert t.receive(5)["method"] == "notifications/message"
            with pytest.raises(ServerExited, match="ended before the response"):
                t.receive(5)
        finally:
            t.close()


def test_server_that_never_answers_times_out_and_close_is_bounded() -> None:
    with FakeHttpServer("hang") as fake:
        t = HttpTransport(fake.url, listen=False)
        t.start()
        handshake(t)
        t.send(request(2, "tools/list"))
        with pytest.raises(TransportTimeout):
            t.receive(0.5)
        started = time.monotonic()
        t.close()
        assert time.monotonic() - started < 5


def test_receive_after_close_and_send_after_close() -> None:
    with FakeHttpServer("json") as fake:
        t = HttpTransport(fake.url)
        t.start()
        t.close()
        t.close()  # idempotent
        with pytest.raises(ServerExited):
            t.send(INIT)


# -- --server CMD --url URL ------------------------------------------------------------------------


def test_server_command_is_started_waited_for_and_stopped() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    t = HttpTransport(url, server=[sys.executable, str(FAKE_SCRIPT), "json", str(port)], startup_timeout=20)
    t.start()
    try:
        handshake(t)
        pid = t._process.pid if t._process else None
    finally:
        t.close()
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_server_command_that_dies_is_a_start_error_with_its_output() -> None:
    port = free_port()
    script = "import sys; print('cannot bind: config missing', flush=True); sys.exit(4)"
    t = HttpTransport(f"http://127.0.0.1:{port}/mcp", server=[sys.executable, "-c", script], startup_timeout=20)
    started = time.monotonic()
    with pytest.raises(ServerStartError) as err:
        t.start()
    t.close()
    assert time.monotonic() - started < 15
    assert "config missing" in err.value.stderr_tail
    assert err.value.exit_status == 4


def test_server_command_not_found() -> None:
    t = HttpTransport(f"http://127.0.0.1:{free_port()}/mcp", server="definitely-not-a-server-binary-xyz")
    with pytest.raises(ServerStartError, match="not found"):
        t.start()
    t.close()
