"""The messages themselves: JSON-RPC classification and MCP protocol eras."""
