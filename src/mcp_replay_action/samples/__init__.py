"""Small sample MCP servers bundled for ``mcp-replay demo``, the dogfood workflow and tests.

``calc_server`` is healthy; ``calc_server_regressed`` is its twin whose ``tools/list`` is
byte-identical but whose behaviour has drifted.
"""
