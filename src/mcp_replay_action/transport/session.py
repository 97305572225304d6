"""The client side of one MCP session over a transport: the one "send and pump until my answer"
loop, shared by replay (answers from the cassette), scenario recording and the demo.

``request`` sends a request and reads messages until the response with its id arrives. On the
way, every server-to-client request is answered at once by the ``answer`` handler (a server may
ask for roots or a sampling result before it can answer us), every server notification goes to
``on_notification``, and a response to an id we are not waiting for is set aside in
``stray_ids``. Every wait is bounded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp_replay_action.errors import Diagnostics, ServerExited, TransportTimeout
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.transport import Transport

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared

Message = JSONObject
# A server-to-client request -> the full JSON-RPC answer to send back.
AnswerServerRequest = Callable[[Message], Message]


def refuse(request: Message) -> Message:
    """The default answer to a server request: method not found."""
    return error_answer(request, f"mcp-replay: no answer for {request.get('method')}")


def error_answer(request: Message, text: str, code: int = -32601) -> Message:
    """A JSON-RPC error answer to ``request``."""
    return {"jsonrpc": "2.0", "id": request.get("id"), "error": {"code": code, "message": text}}


def result_answer(request: Message, result: JSONObject) -> Message:
    """A JSON-RPC result answer to ``request``."""
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}


# A server that has not answered within this long is slow: work waiting for it may begin.
IDLE_AFTER = 0.005


class ClientSession:
    """A client talking to a started transport. ``answer`` answers server-to-client requests;
    ``on_server_request(request, answer)`` and ``on_notification(message)`` see them as they pass
    (a recorder keeps them); ``answer_errors`` says whether a failure to send an answer is raised
    (a recorder wants to know) or left for the next request to report."""

    def __init__(
        self,
        transport: Transport,
        *,
        answer: AnswerServerRequest = refuse,
        on_server_request: Callable[[Message, Message], None] | None = None,
        on_notification: Callable[[Message], None] | None = None,
        answer_errors: bool = False,
        timeout: float = 30.0,
    ) -> None:
        self.transport = transport
        self.answer = answer
        self.on_server_request = on_server_request
        self.on_notification = on_notification
        self.answer_errors = answer_errors
        self.timeout = timeout  # for ``call``
        self.stray_ids: list[JSON] = []  # ids of responses that answered nothing we waited for
        self._next_id = 0

    def new_id(self) -> int:
        """A request id not used before in this session (0, 1, 2, ...)."""
        self._next_id += 1
        return self._next_id - 1

    def message(self, method: str, params: JSONObject | None = None, *, request: bool = True) -> Message:
        """A request (with a fresh id) or a notification; ``params`` left out when None."""
        message: Message = {"jsonrpc": "2.0"}
        if request:
            message["id"] = self.new_id()
        message["method"] = method
        if params is not None:
            message["params"] = params
        return message

    def call(self, method: str, params: JSONObject | None = None) -> Message:
        """Send a new request and return the server's response (result or error) within ``timeout``."""
        return self.request(self.message(method, params), self.timeout)

    def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification."""
        self.transport.send(self.message(method, params, request=False))

    def request(self, message: Message, timeout: float) -> Message:
        """Send ``message`` (a request) and return the response carrying its id, answering server
        requests meanwhile. Raises TransportTimeout after ``timeout`` seconds in all, ServerExited
        when the server is gone."""
        self.transport.send(message)
        return self.await_response(message.get("id"), timeout)

    def await_response(
        self,
        request_id: JSON,
        timeout: float,
        idle: Callable[[], bool] | None = None,
        prepared: Prepared | None = None,
    ) -> Message:
        """Read until the response to ``request_id`` arrives (see ``request``). ``idle``: work to
        do while a slow server works, a short step per call (False once there is none left),
        begun once nothing has arrived for ``IDLE_AFTER``; the transport is looked at between
        steps, so an answer waits for one step at most. ``prepared`` is handed to the
        transport's ``receive`` (``prepared.py``)."""
        until = time.monotonic() + timeout
        quiet = IDLE_AFTER
        while True:
            left = until - time.monotonic()
            if left <= 0:
                raise TransportTimeout(f"no response within {timeout:g} s", **diag_kwargs(self.transport))
            if idle is None:
                msg = self.transport.receive(left, prepared)
            else:
                try:
                    msg = self.transport.receive(min(quiet, left), prepared)
                except TransportTimeout:
                    quiet = 0.0
                    if not idle():
                        idle = None  # nothing (left) to do: wait as usual
                    continue
            if "method" in msg:
                if "id" in msg:
                    self._answer(msg)
                elif self.on_notification is not None:
                    self.on_notification(msg)
                continue  # a notification is never taken for the response
            if msg.get("id") == request_id:
                return msg
            self.stray_ids.append(msg.get("id"))

    def read_while(self, wanting: Callable[[], bool], until: float) -> None:
        """Read on while ``wanting()`` and until ``until`` (monotonic), answering server requests
        and handing notifications to ``on_notification`` as ``await_response`` does: the messages
        a server sends after its last answer (a stream's events, a change notice). A silent or
        departed server ends it."""
        while wanting():
            left = until - time.monotonic()
            if left <= 0:
                return
            try:
                msg = self.transport.receive(left)
            except (TransportTimeout, ServerExited):
                return
            if "method" in msg and "id" in msg:
                self._answer(msg)
            elif "method" in msg and self.on_notification is not None:
                self.on_notification(msg)

    def _answer(self, request: Message) -> None:
        answer = self.answer(request)
        if self.on_server_request is not None:
            self.on_server_request(request, answer)
        try:
            self.transport.send(answer)
        except ServerExited:
            if self.answer_errors:
                raise
            # The server is gone: the request we are waiting for reports it, with diagnostics.


def diag_kwargs(transport: Transport) -> Diagnostics:
    """``stderr_tail`` and ``exit_status`` of a transport, as keyword arguments for a ServerError."""
    try:
        diag = transport.diagnostics()
    except Exception:  # diagnostics must never hide the error they explain
        return {}
    status = diag.get("exit_status")
    return {
        "stderr_tail": str(diag.get("stderr_tail") or ""),
        "exit_status": status if isinstance(status, int) else None,
    }
