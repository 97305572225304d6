"""An MCP server on the official ``mcp`` SDK 2.x (MCPServer) that serves ``subscriptions/listen``
(2026-07-28): the SDK's own listen handler acknowledges the stream and forwards the events a tool
publishes. ``notes://{name}`` are resources; ``write(name, text)`` changes one (a
``notifications/resources/updated`` for its URI), ``create(name)`` adds one (also a
``notifications/resources/list_changed``).

``--quiet`` is the regressed build: ``write`` changes the note but forgets to publish the update.
``--extra`` publishes a tools ``list_changed`` too on every ``write`` (an event the client asked
for that the recording never saw).
"""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

QUIET = "--quiet" in sys.argv
EXTRA = "--extra" in sys.argv

server = MCPServer("listen", version="1.0.0", log_level="WARNING")
notes: dict[str, str] = {"todo": "milk"}


@server.resource("notes://{name}")
def note(name: str) -> str:
    """One note's text."""
    return notes.get(name, "")


@server.tool()
async def write(name: str, text: str, ctx: Context) -> str:
    """Change a note."""
    notes[name] = text
    if not QUIET:
        await ctx.notify_resource_updated(f"notes://{name}")
    if EXTRA:
        await ctx.notify_tools_changed()
    return f"{name} written"


@server.tool()
async def create(name: str, ctx: Context) -> str:
    """Add a note."""
    notes[name] = ""
    await ctx.notify_resources_changed()
    return f"{name} created"


if __name__ == "__main__":
    if "--http" in sys.argv:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run()
