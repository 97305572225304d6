"""The bare minimum of an MCP server over stdio, for fault-injection fakes. Plain Python, no SDK:
each fake misbehaves in one precise way that a real server could."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import Any

PROTOCOL_VERSION = "2025-06-18"

Message = dict[str, Any]


def send(message: Message) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def messages() -> Iterator[Message]:
    """Every JSON message the client sends, until stdin closes."""
    for line in sys.stdin:
        if line.strip():
            yield json.loads(line)


def result(request: Message, value: Any) -> Message:
    return {"jsonrpc": "2.0", "id": request["id"], "result": value}


def initialize_result(name: str) -> dict[str, Any]:
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1.0.0"},
    }


def text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def standard(request: Message, name: str) -> Message | None:
    """Answers to the lifecycle and listing requests every fake shares; None for others."""
    method = request.get("method")
    if method == "initialize":
        return result(request, initialize_result(name))
    if method == "ping":
        return result(request, {})
    if method == "tools/list":
        tool = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
        return result(request, {"tools": [tool]})
    if method == "server/discover":
        return {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}}
    return None


def serve(name: str, handle: Callable[[Message], None]) -> None:
    """Answer lifecycle requests, hand every other request to ``handle``, ignore notifications."""
    for message in messages():
        if "id" not in message or "method" not in message:
            continue
        answer = standard(message, name)
        if answer is not None:
            send(answer)
        else:
            handle(message)
