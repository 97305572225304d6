"""The HTTP recording proxy against fake upstreams: streams pass through unbuffered, secrets never
reach the cassette, server-initiated traffic is teed in order, and the legacy SSE transport works."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from fakes.http_fake_server import FakeHttpServer
from http_helpers import free_port
from mcp_replay_action.cassette import load
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.record.http_proxy import RecordingProxy, record_http
from mcp_replay_action.redact import Redactor
from mcp_replay_action.transport.http_client import HttpTransport

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

SECRET = "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def req(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


INIT = req(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})


def test_sse_is_passed_through_as_it_arrives(tmp_path: Path) -> None:
    """The first event reaches the client while the upstream still holds back the answer: a
    buffering proxy would make this read time out."""
    with FakeHttpServer("slow_sse") as fake, RecordingProxy(fake.url, cassette_path=str(tmp_path / "c.jsonl")) as proxy:
        with httpx.Client(timeout=httpx.Timeout(5.0)) as client:
            body = json.dumps(req(7, "tools/call", {"name": "slow"}))
            with client.stream("POST", proxy.url, content=body, headers=ACCEPT) as response:
                assert response.headers["content-type"].startswith("text/event-stream")
                lines = response.iter_lines()
                first = next(line for line in lines if line.startswith("data:"))
                assert json.loads(first[5:])["method"] == "notifications/progress"
                fake.release.set()
                rest = [line for line in lines if line.startswith("data:")]
        assert json.loads(rest[-1][5:])["id"] == 7
        cassette = proxy.save(force=True)
    assert cassette is not None
    kinds = [(i.kind, i.method) for i in cassette.interactions]
    assert kinds == [("request", "tools/call"), ("server-notification", "notifications/progress")]
    assert cassette.interactions[0].transport == {"http_status": 200, "content_type": "text/event-stream", "sse": True}


def test_headers_are_forwarded_never_stored_and_bodies_are_redacted(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    with (
        FakeHttpServer("json") as fake,
        RecordingProxy(fake.url, redactor=Redactor(), cassette_path=str(path)) as proxy,
    ):
        t = HttpTransport(proxy.url, headers={"Authorization": f"Bearer {SECRET}", "X-Api-Key": SECRET})
        t.start()
        try:
            t.send(INIT)
            t.receive(5)
            t.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            t.send(req(2, "tools/call", {"name": "login", "arguments": {"api_key": SECRET, "user": "ada"}}))
            t.receive(5)
        finally:
            t.close()
        proxy.save(force=True)
    upstream_headers = [{k.lower(): v for k, v in s["headers"].items()} for s in fake.posts()]
    assert all(h["authorization"] == f"Bearer {SECRET}" for h in upstream_headers)
    assert upstream_headers[-1]["mcp-session-id"] == "sess-123"
    text = path.read_text("utf-8")
    assert SECRET not in text
    assert "ada" in text and "[REDACTED]" in text
    cassette = load(path)
    assert cassette.meta["transport"] == "http" and cassette.meta["redaction"]
    assert cassette.meta["server_info"] == {"name": "fake-http", "version": "1.0"}
    # The listen GET (refused: 405) and the closing DELETE are HTTP lifecycle, not interactions.
    lifecycle = [(e["http_method"], e["response_status"]) for e in cassette.meta["http_lifecycle"]]
    assert lifecycle == [("GET", 405), ("DELETE", 200)]
    assert cassette.interactions[0].transport == {"http_status": 200, "content_type": "application/json", "sse": False}


def test_server_requests_and_the_clients_answers_are_teed_in_order(tmp_path: Path) -> None:
    with FakeHttpServer("sse") as fake, RecordingProxy(fake.url, cassette_path=str(tmp_path / "c.jsonl")) as proxy:
        t = HttpTransport(proxy.url, listen=False)
        t.start()
        try:
            t.send(INIT)
            t.receive(5)
            t.send(req(2, "tools/call", {"name": "chatty", "arguments": {}}))
            assert t.receive(5)["method"] == "notifications/message"
            asked = t.receive(5)
            t.send({"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}})
            assert t.receive(5)["id"] == 2
        finally:
            t.close()
        cassette = proxy.cassette()
    kinds = [(i.kind, i.method) for i in cassette.interactions]
    assert kinds == [
        ("request", "initialize"),
        ("request", "tools/call"),
        ("server-notification", "notifications/message"),
        ("server-request", "roots/list"),
    ]
    assert cassette.interactions[3].response == {"jsonrpc": "2.0", "id": "srv-1", "result": {"roots": []}}
    assert cassette.interactions[1].response["result"] == {"roots_seen": {"roots": []}}  # type: ignore[index]


def test_legacy_sse_transport_through_the_proxy(tmp_path: Path) -> None:
    with FakeHttpServer("legacy") as fake, RecordingProxy(fake.url, cassette_path=str(tmp_path / "c.jsonl")) as proxy:
        assert proxy.url.endswith("/sse")
        t = HttpTransport(proxy.url)
        t.start()
        try:
            t.send(INIT)
            assert t.receive(5)["id"] == 1
            t.send(req(2, "tools/list"))
            assert t.receive(5)["id"] == 2
        finally:
            t.close()
        cassette = proxy.save(force=True)
    assert cassette is not None and cassette.meta["transport"] == "sse"
    assert [i.method for i in cassette.interactions] == ["initialize", "tools/list"]
    assert all(i.response is not None for i in cassette.interactions)


def test_unreachable_upstream_gets_502_and_records_no_answer(tmp_path: Path) -> None:
    upstream = f"http://127.0.0.1:{free_port()}/mcp"
    with RecordingProxy(upstream, connect_timeout=1.0) as proxy:
        response = httpx.post(proxy.url, json=INIT, headers=ACCEPT, timeout=10)
        assert response.status_code == 502
        assert response.json()["id"] == 1 and "unreachable" in response.json()["error"]["message"]
        assert proxy.cassette().interactions == ()


def test_bad_upstream_url_and_busy_port_are_config_errors() -> None:
    with pytest.raises(ConfigError):
        RecordingProxy("not a url")
    with FakeHttpServer("json") as fake:
        port = int(fake.url.split(":")[2].split("/")[0])
        with pytest.raises(ConfigError, match="cannot listen"):
            RecordingProxy(fake.url, "127.0.0.1", port)


def test_record_http_runs_until_stopped_and_writes_the_cassette(tmp_path: Path) -> None:
    path = tmp_path / "out" / "c.jsonl"
    done = threading.Event()
    ready: list[str] = []

    def client() -> None:
        try:
            t = HttpTransport(ready[0])
            t.start()
            t.send(INIT)
            t.receive(5)
            t.close()
        finally:
            done.set()

    def on_ready(url: str) -> None:
        ready.append(url)
        threading.Thread(target=client, daemon=True).start()

    with FakeHttpServer("json") as fake:
        cassette = record_http(fake.url, "127.0.0.1", 0, str(path), Redactor(), until=done.is_set, on_ready=on_ready)
    assert [i.method for i in cassette.interactions] == ["initialize"]
    assert load(path).interactions[0].response["result"]["serverInfo"]["name"] == "fake-http"  # type: ignore[index]


# Runs in its own process: the stop signal is sent to that process between the proxy starting to
# serve and record_http waiting for a stop (the window on_ready runs in).
_SIGNAL_IN_THE_WINDOW = """
import os, signal, sys
from fakes.http_fake_server import FakeHttpServer
from mcp_replay_action.record.http_proxy import record_http
from mcp_replay_action.transport.http_client import HttpTransport

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}}

def on_ready(url):
    client = HttpTransport(url)
    client.start()
    client.send(INIT)
    client.receive(5)
    client.close()
    os.kill(os.getpid(), getattr(signal, sys.argv[2]))

with FakeHttpServer("json") as fake:
    cassette = record_http(fake.url, "127.0.0.1", 0, sys.argv[1], on_ready=on_ready)
print(len(cassette.interactions))
"""


@pytest.mark.parametrize("signame", ["SIGINT", "SIGTERM"])
def test_a_stop_signal_as_soon_as_the_proxy_serves_still_saves_the_recording(tmp_path: Path, signame: str) -> None:
    """The signals used to be trapped only once record_http waited: a SIGTERM that landed after the
    proxy began serving killed the process with no final save (exit -15), a SIGINT escaped as
    a KeyboardInterrupt past it (exit -2)."""
    path = tmp_path / "c.jsonl"
    tests = Path(__file__).parent
    done = subprocess.run(
        [sys.executable, "-c", _SIGNAL_IN_THE_WINDOW, str(path), signame],
        cwd=tests,
        env={**os.environ, "PYTHONPATH": str(tests)},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    assert (
        done.stdout.strip() == "1" and f"mcp-replay: 1 interaction recorded to {path} (handshake era" in done.stderr
    ), done.stderr
    assert [i.method for i in load(path).interactions] == ["initialize"]


def test_redaction_hits_are_counted_once_however_often_the_cassette_is_saved(tmp_path: Path) -> None:
    """The tape redacts each message as it arrives: before, every save re-redacted everything and
    ``redaction.hits`` grew 2, 4, 6 for the same two messages."""
    path = tmp_path / "c.jsonl"
    with (
        FakeHttpServer("json") as fake,
        RecordingProxy(fake.url, redactor=Redactor(), cassette_path=str(path)) as proxy,
    ):
        t = HttpTransport(proxy.url)
        t.start()
        try:
            t.send(INIT)
            t.receive(5)
            t.send(req(2, "tools/call", {"name": "login", "arguments": {"api_key": SECRET, "password": "hunter2"}}))
            t.receive(5)
        finally:
            t.close()
        hits = []
        for _ in range(3):
            proxy.save(force=True)
            hits.append(load(path).meta["redaction"]["hits"])
    assert hits[0] and hits[0] == hits[1] == hits[2], hits
