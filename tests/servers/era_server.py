"""An MCP server on the official ``mcp`` SDK that speaks ONE protocol era, as a server built for
only one era does: ``--era handshake`` serves the ``initialize`` handshake and refuses the
2026-07-28 per-request envelope (``server/discover`` included); ``--era stateless`` serves only
enveloped requests and refuses ``initialize``; ``--era both`` is the SDK's own ``run``, which
serves both (the client's first request decides). For one era, that era's serving loop is driven
alone, with the SDK's own refusals. ``mcp`` is pinned in pyproject.toml; ``_serve_modern_stream`` is the SDK's loop for the
stateless era (what ``Server.run`` calls for a stateless client).

Tools: ``echo`` and ``add`` (stable answers, so any finding is about the era, not the data).
"""

from __future__ import annotations

import argparse

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import _serve_modern_stream, serve_loop
from mcp.server.stdio import stdio_server

server = MCPServer("one-era", version="1.0.0", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def serve(era: str) -> None:
    low = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream), low.lifespan(low) as state:
        if era == "handshake":
            await serve_loop(
                low, read_stream, write_stream, lifespan_state=state, init_options=low.create_initialization_options()
            )
        else:
            await _serve_modern_stream(low, read_stream, write_stream, lifespan_state=state, raise_exceptions=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--era", choices=("handshake", "stateless", "both"), required=True)
    era = parser.parse_args().era
    if era == "both":
        server.run()
    else:
        anyio.run(serve, era)
