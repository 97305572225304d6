"""A client on the official ``mcp`` SDK 1.x that drives ``tasks_server.py``'s task the way a
2025-11-25 client does: ``tools/call`` augmented with a task, ``tasks/get`` polled every
``--poll-ms`` milliseconds (default 20) until a terminal status, then ``tasks/result``; then one
plain call. Run as ``python tasks_client.py [--poll-ms N] -- COMMAND [ARG...]`` (the server
command, e.g. ``mcp-replay record ...``). Prints the statuses it saw, one a line."""

from __future__ import annotations

import sys
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

warnings.simplefilter("ignore", DeprecationWarning)  # the 1.x SDK's experimental tasks API

TERMINAL = ("completed", "failed", "cancelled")


async def main(poll_ms: int, argv: list[str]) -> None:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        created = await session.experimental.call_tool_as_task("report", {"topic": "tides"})
        task_id = created.task.taskId
        while True:
            status = await session.experimental.get_task(task_id)
            print(status.status, flush=True)
            if status.status in TERMINAL:
                break
            await anyio.sleep(poll_ms / 1000.0)
        result = await session.experimental.get_task_result(task_id, CallToolResult)
        print(result.content[0].text, flush=True)  # type: ignore[union-attr]
        await session.call_tool("echo", {"text": "hi"})


if __name__ == "__main__":
    args = sys.argv[1:]
    poll = 20
    if args[:1] == ["--poll-ms"]:
        poll, args = int(args[1]), args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    anyio.run(main, poll, args)
