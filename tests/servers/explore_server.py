"""A stdio MCP server (stdlib only) for ``mcp-replay explore``: it appends every ``tools/call`` it
gets to the file ``CALL_LOG`` names (one JSON line each), so a test can prove what was called.

Tools (listed over two pages of ``tools/list``): ``lookup`` (read-only; its arguments exercise the
rules: ``examples``, ``default``, ``const``, ``enum``, a ``$ref``, a format, a minimum, an optional
property), ``wipe`` (read-only and destructive at once), ``drop_table`` (destructive), ``plain`` (no
annotations), ``broken`` (read-only, an inputSchema that is not JSON Schema), ``picky`` (read-only,
a pattern no made string meets), ``stall`` (read-only, never answered); with ``EXPLORE_ADDED`` set,
``added_later`` (read-only) too. One prompt with a required and an optional argument, one
resource, one resource template.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

READ_ONLY = {"readOnlyHint": True}
TOOLS: list[dict[str, Any]] = [
    {
        "name": "lookup",
        "description": "Look a word up.",
        "annotations": READ_ONLY,
        "inputSchema": {
            "type": "object",
            "properties": {
                "word": {"type": "string", "examples": ["hello", "world"]},
                "limit": {"type": "integer", "default": 5},
                "mode": {"const": "exact"},
                "lang": {"type": "string", "enum": ["en", "fr"]},
                "since": {"type": "string", "format": "date"},
                "page": {"type": "integer", "minimum": 1},
                "filter": {"$ref": "#/$defs/Filter"},
                "verbose": {"type": "boolean"},
            },
            "required": ["word", "limit", "mode", "lang", "since", "page", "filter"],
            "$defs": {
                "Filter": {
                    "type": "object",
                    "properties": {"tags": {"type": "array", "items": {"type": "string"}, "minItems": 1}},
                    "required": ["tags"],
                }
            },
        },
    },
    {
        "name": "wipe",
        "annotations": {"readOnlyHint": True, "destructiveHint": True},
        "inputSchema": {"type": "object"},
    },
    {"name": "drop_table", "annotations": {"destructiveHint": True}, "inputSchema": {"type": "object"}},
    {"name": "plain", "inputSchema": {"type": "object"}},
]
TOOLS_PAGE_2: list[dict[str, Any]] = [
    {"name": "broken", "annotations": READ_ONLY, "inputSchema": {"type": "objekt"}},
    {
        "name": "picky",
        "annotations": READ_ONLY,
        "inputSchema": {
            "type": "object",
            "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$"}},
            "required": ["code"],
        },
    },
    {"name": "stall", "annotations": READ_ONLY, "inputSchema": {"type": "object"}},
]


if os.environ.get("EXPLORE_ADDED"):
    TOOLS_PAGE_2.append({"name": "added_later", "annotations": READ_ONLY, "inputSchema": {"type": "object"}})


def answer(msg: dict[str, Any]) -> dict[str, Any] | None:
    method, params = msg.get("method"), msg.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "explore-test", "version": "1.0.0"},
        }
    if method == "tools/list":
        if params.get("cursor") == "page-2":
            return {"tools": TOOLS_PAGE_2}
        return {"tools": TOOLS, "nextCursor": "page-2"}
    if method == "tools/call":
        with open(os.environ.get("CALL_LOG", os.devnull), "a", encoding="utf-8") as log:
            log.write(json.dumps(params) + "\n")
        if params.get("name") == "stall":
            return None  # never answered: the caller's --timeout bounds it
        text = json.dumps({"called": params.get("name"), "with": params.get("arguments")}, sort_keys=True)
        return {"content": [{"type": "text", "text": text}]}
    if method == "prompts/list":
        return {
            "prompts": [
                {
                    "name": "greet",
                    "arguments": [{"name": "who", "required": True}, {"name": "tone", "required": False}],
                }
            ]
        }
    if method == "prompts/get":
        who = (params.get("arguments") or {}).get("who")
        return {"messages": [{"role": "user", "content": {"type": "text", "text": f"greet {who!r}"}}]}
    if method == "resources/list":
        return {"resources": [{"uri": "memo://one", "name": "one"}]}
    if method == "resources/templates/list":
        return {"resourceTemplates": [{"uriTemplate": "memo://{id}", "name": "memo"}]}
    if method == "resources/read":
        return {"contents": [{"uri": params.get("uri"), "text": f"memo {params.get('uri')}"}]}
    if method == "ping":
        return {}
    raise LookupError(method)


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        try:
            result = answer(msg)
        except LookupError as exc:
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": str(exc)}}
        else:
            if result is None:
                continue
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
