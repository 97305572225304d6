"""``ClientSession``: the one send-and-wait loop (replay, scenario recording, demo) against real
fake servers: server requests answered on the way, even one reusing our pending id; strays kept
aside; waits bounded."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.errors import ServerExited, TransportTimeout
from mcp_replay_action.transport import Target, open_transport
from mcp_replay_action.transport.session import ClientSession, result_answer

FAKES = Path(__file__).parent / "fakes"
INIT = {"protocolVersion": "2025-06-18", "capabilities": {"roots": {}}, "clientInfo": {"name": "t", "version": "1"}}

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


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


def test_work_waiting_for_a_slow_answer_is_done_a_step_at_a_time_and_never_delays_it() -> None:
    """``idle`` runs only once a server is slow (nothing within ``IDLE_AFTER``), a step per look
    at the transport, until it says it is done; the answer is the one awaited either way, and the
    wait stays bounded while it runs."""
    from mcp_replay_action.transport.session import IDLE_AFTER

    def work(steps: int) -> tuple[list[float], Any]:
        done: list[float] = []

        def idle() -> bool:
            done.append(time.monotonic())
            time.sleep(0.001)
            return len(done) < steps

        return done, idle

    for delay, steps in ((0.0, 100), (0.3, 5), (0.3, 10_000)):
        transport = started_with("echo_server", "--delay", str(delay))
        try:
            client = ClientSession(transport, timeout=10)
            client.call("initialize", INIT)
            done, idle = work(steps)
            message = client.message("tools/call", {"name": "echo", "arguments": {"n": steps}})
            sent = time.monotonic()
            transport.send(message)
            answer = client.await_response(message["id"], 10, idle)
            took = time.monotonic() - sent
        finally:
            transport.close()
        assert answer["id"] == message["id"] and answer["result"]["structuredContent"] == {"n": steps}
        if delay == 0.0:
            assert done == [] or done[0] - sent >= IDLE_AFTER  # a quick answer: no work begun
        else:
            assert done[0] - sent >= IDLE_AFTER
            assert len(done) == steps if steps == 5 else 0 < len(done) < steps  # all done, or stopped
            assert took < delay + 1.0
    transport = started_with("hang_server")
    try:
        client = ClientSession(transport, timeout=10)
        client.call("initialize", INIT)
        done, idle = work(10_000)
        with pytest.raises(TransportTimeout, match="within"):
            client.request(client.message("tools/call", {"name": "echo", "arguments": {}}), 0.3)
        message = client.message("tools/call", {"name": "echo", "arguments": {}})
        transport.send(message)
        with pytest.raises(TransportTimeout, match="within"):
            client.await_response(message["id"], 0.3, idle)
    finally:
        transport.close()
    assert 0 < len(done) < 10_000


def started_with(name: str, *args: str) -> Any:
    transport = open_transport(Target(command=(sys.executable, str(FAKES / f"{name}.py"), *args)))
    transport.start()
    return transport
