"""An indexing MCP server that times its own work, the shape of PyPI's ``jcodemunch-mcp``: its
``index`` tool reports progress per file and a log line, and answers with how long the call took
(``duration_seconds``, measured with ``perf_counter`` and rounded as that server rounds); its
``track`` tool answers with a length that is data (``duration_seconds: 215``), far longer than any
call. Built with the official SDK's ``MCPServer``; run as a script (stdio).

``TIMED_SERVER_VARIANT`` makes a drifted build: ``fewer`` (``index`` skips the last file),
``recut`` (the track is a second shorter), ``quiet`` (``index`` reports no progress), ``unfinished`` (``index`` reports progress as time
allows, as jcodemunch's every 100 ms, and never its last step: it lands on other files on each
start, taken from how many lines ``TIMED_SERVER_STARTS`` holds, so its count and last value vary
between starts while every start stops short of the total).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

VARIANT = os.environ.get("TIMED_SERVER_VARIANT", "")

server = MCPServer("timed-indexer", version="1.0.0", log_level="WARNING")


@server.tool()
async def index(files: list[str], ctx: Context, pause: float = 0.0, every: float = 0.0) -> dict[str, Any]:
    """Parse each file (``pause`` seconds more each: a long call), reporting progress, and say how
    long it took. With ``every``, progress goes out as time allows, as jcodemunch's does: the first
    file, then at most once per ``every`` seconds, and the last."""
    started = sent = time.perf_counter()
    await ctx.info(f"indexing {len(files)} files")
    done = files[:-1] if VARIANT == "fewer" else files
    reported = _reported(len(done))
    for i, name in enumerate(done, start=1):
        time.sleep(pause + random.uniform(0.002, 0.02))  # parsing: a different time on every run
        if every and 1 < i < len(done) and time.perf_counter() - sent < every:
            continue  # too soon after the last one sent
        if i in reported and VARIANT != "quiet":
            sent = time.perf_counter()
            await ctx.report_progress(i, len(done), f"parsed {name}")
    return {"indexed": len(done), "files": done, "duration_seconds": round(time.perf_counter() - started, 3)}


def _reported(files: int) -> range:
    """The steps whose progress is sent: each one; in the ``unfinished`` build every other one,
    from the first or the second as the start count alternates, never the last."""
    if VARIANT != "unfinished":
        return range(1, files + 1)
    starts = Path(os.environ["TIMED_SERVER_STARTS"]).read_text().count("\n")
    return range(1 + starts % 2, files, 2)


@server.tool()
def track(title: str) -> dict[str, Any]:
    """A track's length: data, not timing."""
    return {"title": title, "duration_seconds": 214 if VARIANT == "recut" else 215}


if __name__ == "__main__":
    server.run()
