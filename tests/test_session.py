"""``ClientSession``: the one send-and-wait loop (replay, scenario recording, demo) against real
fake servers: server requests answered on the way, even one reusing our pending id; strays kept
aside; waits bounded."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.errors import ServerExited, TransportTimeout
from mcp_replay_action.session import ClientSession, result_answer
from mcp_replay_action.transport import Target, open_transport

FAKES = Path(__file__).parent / "fakes"
INIT = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "1"}}

pytestmark = pytest.mark.timeout(60)


def started(name: str) -> Any:
    transport = open_transport(Target(command=(sys.executable, str(FAKES / f"{name}.py"))))
    transport.start()
    return transport


def test_answers_a_server_request_that_reuses_the_pending_id() -> None:
    transport = started("roots_server")
    seen: list[tuple[str, Any]] = []
    try:
        client = ClientSession(
            transport,
            answer=lambda req: result_answer(req, {"roots": [{"uri": "file:///w"}]}),
            on_server_request=lambda req, answer: seen.append((req["method"], answer["result"])),
            timeout=10,
        )
        assert client.call("initialize", INIT)["id"] == 0
        client.notify("notifications/initialized")
        reply = client.call("tools/call", {"name": "roots", "arguments": {}})
    finally:
        transport.close()
    assert reply["id"] == 1 and reply["result"]["content"][0]["text"] == '["file:///w"]'
    assert seen == [("roots/list", {"roots": [{"uri": "file:///w"}]})]


def test_a_response_to_another_id_is_set_aside_and_the_wait_is_bounded() -> None:
    transport = started("wrong_id_server")
    try:
        client = ClientSession(transport, timeout=10)
        client.call("initialize", INIT)
        with pytest.raises(TransportTimeout, match="within"):
            client.request(client.message("tools/call", {"name": "echo", "arguments": {}}), 0.5)
    finally:
        transport.close()
    assert client.stray_ids == [1001]


def test_a_crash_is_server_exited() -> None:
    transport = started("crash_server")
    try:
        client = ClientSession(transport, timeout=10)
        client.call("initialize", INIT)
        with pytest.raises(ServerExited, match="status 3"):
            client.call("tools/call", {"name": "echo", "arguments": {}})
    finally:
        transport.close()
