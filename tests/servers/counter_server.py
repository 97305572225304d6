"""A stateful MCP server over Streamable HTTP, started by someone else (a ``--url`` replay): its
count lives in a file (``COUNTER_FILE``) that every ``bump`` raises by 2, so a second pass against
the same running server sees the state the first pass left (2 -> 4 -> 6); each answer also carries
a request tag drawn afresh (noise). Built on the official ``mcp`` SDK (``MCPServer``).

``python counter_server.py PORT`` serves at ``http://127.0.0.1:PORT/mcp``; without a port, stdio.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("counter", version="1.0.0", log_level="WARNING")
COUNTER = Path(os.environ["COUNTER_FILE"])


@server.tool()
def bump() -> str:
    """Raise the count by 2 and say it."""
    count = int(COUNTER.read_text() or "0") + 2 if COUNTER.exists() else 2
    COUNTER.write_text(str(count))
    return f"count {count} (request {secrets.token_hex(4)})"


if __name__ == "__main__":
    if len(sys.argv) > 1:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
    else:
        server.run()
