"""An MCP server whose answers vary from one start to the next in ways no mask knows: a PID and a
duration inside prose, a duration under a key that does not name a time, a random sample. Built on
the official ``mcp`` SDK. ``NOISY_SERVER_VARIANT=jobs`` is a drifted build: it reports one more
queued job in the same sentence (a real change next to the noise).
"""

from __future__ import annotations

import os
import random
import time
from typing import Any

from mcp.server.mcpserver import MCPServer

server = MCPServer("noisy-worker", version="1.0.0", log_level="WARNING")
STARTED = time.monotonic()
JOBS = 4 if os.environ.get("NOISY_SERVER_VARIANT") == "jobs" else 3


@server.tool()
def status() -> dict[str, Any]:
    """The worker's status, in prose and as data."""
    # A thousandth of a millisecond over a wide range: the two live runs a confirmation pass
    # compares agree on it by chance once in about 900,000 (at 90 ms to the hundredth they did once
    # in 9,000, and the duration then stood as a real difference, as the data said it was).
    took = round(random.uniform(0.5, 900.0), 3)
    return {
        "summary": f"worker pid {os.getpid()} ready after {took} ms; {JOBS} jobs queued, oldest first",
        "duration_ms": took,
        "jobs": JOBS,
        "sample": random.randint(1, 10**9),
    }


@server.tool()
def echo(text: str) -> str:
    """Echo the text back (stable: the control)."""
    return text


if __name__ == "__main__":
    server.run()
