"""Transports move JSON-RPC messages to and from a server. They know servers and nothing of files.

Every transport is message-oriented: ``send`` one message, ``receive`` the next message the server
sent (a response, a server-to-client request or a notification), in arrival order.
"""

from __future__ import annotations

from typing import Any, Protocol


class Transport(Protocol):
    """What the replay engine needs from a connection to a server."""

    def start(self) -> None:
        """Start the server process and/or open the connection. Raises ServerStartError."""

    def send(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message (request, notification or a response to a server request).
        Raises ServerExited when the server is gone."""

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next JSON-RPC message from the server. Raises TransportTimeout after ``timeout``
        seconds, ServerExited when the server has ended and nothing is left to read."""

    def close(self) -> None:
        """End the session and reap every process started. Idempotent, bounded in time."""

    def diagnostics(self) -> dict[str, Any]:
        """Facts that explain a failure: ``stderr_tail`` (str), ``exit_status`` (int|None),
        ``non_json_lines`` (int)."""
