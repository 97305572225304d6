"""A local stand-in for mcp-recorder's public demo server (the ``target`` of its own demo
``scenarios.yml``), so that file records and replays here without reaching the internet: the
tools the demo scenarios and mcp-recorder's README example call (``add``, ``greet``,
``lookup_status``, ``roll_dice``, ``search``), and ``firecrawl_scrape`` for the scenarios file
firecrawl-mcp-server ships (its target is its own server on localhost:3000), built on the
official SDK and served over
Streamable HTTP at ``http://127.0.0.1:PORT/mcp``: the demo's ``target: https://mcp.devhelm.io``
means ``https://mcp.devhelm.io/mcp`` to mcp-recorder, so the file needs only its scheme and host
changed to point here.

usage: python recorder_demo_server.py PORT
The answers are this stand-in's own (the public server's are not known here); only the tool
names and arguments follow the demo file. Every answer is deterministic except ``roll_dice``,
which no scenario calls.
"""

from __future__ import annotations

import random
import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("mcp-recorder demo stand-in", version="0.1.0")

GREETINGS = {"plain": "Hello, {name}!", "pirate": "Ahoy, {name}! Welcome aboard, matey.", "formal": "Good day, {name}."}
STATUS = {"api": "operational", "web": "operational", "db": "degraded"}


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def greet(name: str, style: str = "plain") -> str:
    """Greet someone in a style: plain, pirate or formal."""
    return GREETINGS.get(style, GREETINGS["plain"]).format(name=name)


@server.tool()
def lookup_status(service: str) -> dict[str, str]:
    """The status of one service."""
    return {"service": service, "status": STATUS.get(service, "unknown")}


@server.tool()
def roll_dice(sides: int = 6) -> int:
    """Roll one die."""
    return random.randint(1, sides)  # noqa: S311 (a die, not a secret)


@server.tool()
def search(query: str) -> list[str]:
    """Search the demo catalogue."""
    return [f"result for {query!r}"]


@server.tool()
def firecrawl_scrape(url: str) -> str:
    """Scrape one page to Markdown."""
    return f"# Example Domain\n\nThis domain ({url}) is for use in documentation examples."


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
