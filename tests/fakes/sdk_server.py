"""A real server built on the official SDK (MCPServer), speaking whichever era the client picks."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-notes")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def whoami(api_key: str) -> str:
    """Echo a credential back (a careless tool: the recorder must keep it off disk)."""
    return f"logged in with {api_key}"


if __name__ == "__main__":
    server.run()
