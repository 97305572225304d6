"""JSON-RPC 2.0 message shapes, as MCP uses them, and the newline-delimited wire encoding.

A *request* has a ``method`` and an ``id``; a *notification* has a ``method`` and no ``id``; a
*response* has an ``id`` and a ``result`` or an ``error``, and no ``method``.
"""

from __future__ import annotations

import json

from mcp_replay_action.model import JSON, JSONObject


def is_failure(msg: JSON) -> bool:
    """A JSON-RPC error, or a tool result that reports failure (``result.isError: true``): the
    success/error class that error parity compares."""
    if not isinstance(msg, dict):
        return False
    if "error" in msg:
        return True
    result = msg.get("result")
    return isinstance(result, dict) and result.get("isError") is True


def is_message(value: JSON) -> bool:
    """Anything that is shaped like a JSON-RPC message at all.

    Servers sometimes print structured logs (``{"level": "info", ...}``) on stdout; those are JSON
    but not messages, and are skipped like any other stray output.
    """
    return isinstance(value, dict) and (
        value.get("jsonrpc") == "2.0" or "method" in value or "result" in value or "error" in value
    )


# Built once: ``json.dumps`` with any option builds a new encoder on every call, and a replay
# encodes every request it sends.
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def encode(msg: JSONObject) -> bytes:
    """One message as a compact JSON line (UTF-8, ending in ``\\n``) for a stdio pipe."""
    return (_COMPACT.encode(msg) + "\n").encode("utf-8")


def decode(line: bytes | str) -> JSONObject | None:
    """The message on one line, or None when the line is not a JSON-RPC message.

    A batch (a JSON array, allowed by protocol versions before 2025-06-18) is not a single message;
    use :func:`decode_all` where batches must be understood.
    """
    try:
        value = json.loads(line)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError both derive from it
        return None
    return value if is_message(value) else None


def decode_all(line: bytes | str) -> list[JSONObject] | None:
    """Every message on one line: one for a plain message, several for a batch, None for no JSON-RPC."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    if isinstance(value, list):
        messages = [item for item in value if is_message(item)]
        return messages or None
    return [value] if is_message(value) else None
