"""The task-tracker test server (tests/servers/fast_server.py, built on the SDK's ``MCPServer``)
served over Streamable HTTP on 127.0.0.1: ``python http_fast_server.py PORT [--json]``.

The script runs as ``__main__`` exactly as it does over stdio (its elicitation keys name the
module), only its ``server.run()`` is pointed at Streamable HTTP. ``--json`` answers with JSON
bodies instead of SSE streams (the SDK's ``json_response``).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

FAST_SERVER = Path(__file__).resolve().parents[1] / "servers" / "fast_server.py"


def main() -> None:
    port = int(sys.argv[1])
    json_response = "--json" in sys.argv[2:]
    run = MCPServer.run

    def run_over_http(self: MCPServer[Any], *args: Any, **kwargs: Any) -> None:
        run(self, "streamable-http", host="127.0.0.1", port=port, json_response=json_response)

    MCPServer.run = run_over_http  # type: ignore[method-assign]
    sys.argv = [str(FAST_SERVER)]
    runpy.run_path(str(FAST_SERVER), run_name="__main__")


if __name__ == "__main__":
    main()
