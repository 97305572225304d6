"""mcp-replay: record MCP traffic once, replay it against every new build, catch regressions."""

__version__ = "0.1.0"
