"""The task-tracker test server (tests/servers/fast_server.py, built on the SDK's ``MCPServer``)
served over Streamable HTTP on 127.0.0.1: ``python http_fast_server.py PORT [--json]``.

``--json`` answers with JSON bodies instead of SSE streams (the SDK's ``json_response``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "servers"))

from fast_server import server  # noqa: E402

if __name__ == "__main__":
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=int(sys.argv[1]),
        json_response="--json" in sys.argv[2:],
    )
