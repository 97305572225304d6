"""An MCP server (the official ``mcp`` SDK's ``MCPServer``) whose tools are named by the command
line, for the coverage tests: names a report must show as text, never act on (``@someone``, ``#1``,
``::warning::``), and a prompt and a resource template beside them.

    python named_server.py NAME [NAME ...]
"""

from __future__ import annotations

import logging
import sys

from mcp.server.mcpserver import MCPServer

logging.disable(logging.WARNING)  # the SDK warns, at length, of the names these tests want

server = MCPServer("named", version="1.0.0", log_level="WARNING")


def _tool(name: str) -> None:
    def tool(text: str = "") -> str:
        return f"{name}: {text}"

    server.add_tool(tool, name=name, description=f"The tool called {name}.")


for _name in sys.argv[1:]:
    _tool(_name)


@server.prompt()
def brief(topic: str) -> str:
    """A prompt about a topic."""
    return f"Write about {topic}."


@server.resource("notes://{day}/entry")
def note(day: str) -> str:
    """A note for a day."""
    return f"note of {day}"


if __name__ == "__main__":
    server.run()
