"""A client on the official ``mcp`` SDK 1.x that drives ``tasks_server.py``'s task the way a
2025-11-25 client does: ``tools/call`` augmented with a task, ``tasks/get`` polled every
``--poll-ms`` milliseconds (default 20) until a terminal status, then ``tasks/result``; then one
plain call. Run as ``python tasks_client.py [--poll-ms N] [--tool NAME] [--echo-key KEY] -- COMMAND
[ARG...]`` (the server command, e.g. ``mcp-replay record ...``; the task's tool, ``report`` by
default; the key of the ``echo`` tool's argument, ``text`` by default: npm server-everything's
research task is ``--tool simulate-research-query --echo-key message``). Prints the statuses it
saw, one a line."""

from __future__ import annotations

import sys
import warnings

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

warnings.simplefilter("ignore", DeprecationWarning)  # the 1.x SDK's experimental tasks API

TERMINAL = ("completed", "failed", "cancelled")


async def main(poll_ms: int, tool: str, echo_key: str, argv: list[str]) -> None:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()
        created = await session.experimental.call_tool_as_task(tool, {"topic": "tides"})
        task_id = created.task.taskId
        while True:
            status = await session.experimental.get_task(task_id)
            print(status.status, flush=True)
            if status.status in TERMINAL:
                break
            await anyio.sleep(poll_ms / 1000.0)
        result = await session.experimental.get_task_result(task_id, CallToolResult)
        print(result.content[0].text, flush=True)  # type: ignore[union-attr]
        await session.call_tool("echo", {echo_key: "hi"})


if __name__ == "__main__":
    args = sys.argv[1:]
    options = {"--poll-ms": "20", "--tool": "report", "--echo-key": "text"}
    while args[:1] and args[0] in options:
        options[args[0]], args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    anyio.run(main, int(options["--poll-ms"]), options["--tool"], options["--echo-key"], args)
