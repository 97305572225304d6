"""A server whose change notice comes on some starts and not others, as the Go mcp-cron server's
``notifications/tools/list_changed`` does (its tools register in a race with the session: seen
missing on about 1 start in 13). Here the race is made certain: ``refresh`` sends the notice on
even starts only, counted in ``STARTS_FILE`` (the recording is start 0, a replay's first pass
start 1, its confirmation pass start 2). With ``DROPPED=1`` it also sends
``notifications/resources/list_changed`` on start 0 only: a notice the recording heard and every
later start dropped. Built on the official ``mcp`` SDK (``MCPServer``); stdio.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer

STARTS = Path(os.environ["STARTS_FILE"])
START = len(STARTS.read_text().splitlines()) if STARTS.exists() else 0
with STARTS.open("a") as starts:
    starts.write("start\n")
DROPPED = os.environ.get("DROPPED") == "1"

server = MCPServer("racy-notice", version="1.0.0", log_level="WARNING")


@server.tool()
async def refresh(ctx: Context) -> str:
    """Reload the tool set and say so."""
    if START % 2 == 0:
        await ctx.session.send_tool_list_changed()
    if DROPPED and START == 0:
        await ctx.session.send_resource_list_changed()
    return "reloaded"


if __name__ == "__main__":
    server.run()
