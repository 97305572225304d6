"""A notes server on the official ``mcp`` SDK's ``MCPServer`` whose tools return what the
explanation tests need to see explained: a dict (the SDK sends it twice, as ``structuredContent``
and as JSON text in ``content[0].text``), a multi-line text, and a lookup that can fail.

``NOTES_VARIANT=regressed`` is its drifted twin: ``get_note``'s ``count`` becomes the string
``"2"``, one line of ``report`` changes, and ``lookup`` fails with an error text that quotes a
token-like secret and tries to inject a workflow command.
"""

from __future__ import annotations

import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

REGRESSED = os.environ.get("NOTES_VARIANT") == "regressed"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # shaped like a GitHub token, not one

server = MCPServer("notes-dict", version="1.0.0", log_level="WARNING")


@server.tool()
def get_note(note_id: str) -> dict[str, Any]:
    """A note as a dict."""
    return {"id": note_id, "title": "Groceries", "count": "2" if REGRESSED else 2}


@server.tool()
def report() -> str:
    """A multi-line report."""
    lines = ["Weekly report", "notes: 12", "tags: 4", "shared: 3", "archived: 1", "end"]
    if REGRESSED:
        lines[3] = "shared: 5"
    return "\n".join(lines)


@server.tool()
def lookup(key: str) -> str:
    """The value stored under a key."""
    if REGRESSED:
        raise ToolError(f"lookup of {key} refused: token {SECRET} expired ::warning::injected")
    return f"value of {key}"


if __name__ == "__main__":
    server.run()
