"""An MCP server on the official ``mcp`` SDK 1.x (the 2025-11-25 revision's experimental Tasks,
``server.experimental.enable_tasks()``): its ``report`` tool runs as a task when the client
augments the call with one, and the SDK serves ``tasks/get``, ``tasks/result``, ``tasks/list``
and ``tasks/cancel`` and sends ``notifications/tasks/status``.

The work takes ``--steps N`` steps of ``--step-ms`` milliseconds each (defaults 3 and 60), with a
``working`` status message per step, so a client polling ``tasks/get`` sees ``working`` a number
of times that depends on the build and on the machine, and then ``completed``. ``--changed`` is
the regressed build: the task's result text says something else. ``--poll-log FILE`` appends a
line to FILE for every ``tasks/get`` the server answers (how many polls the task took).
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.types import CallToolResult, GetTaskRequest, ServerResult, TextContent, Tool, ToolExecution


def _flag(name: str, default: int) -> int:
    if name in sys.argv:
        return int(sys.argv[sys.argv.index(name) + 1])
    return default


STEPS = _flag("--steps", 3)
STEP_MS = _flag("--step-ms", 60)
CHANGED = "--changed" in sys.argv
POLL_LOG = sys.argv[sys.argv.index("--poll-log") + 1] if "--poll-log" in sys.argv else None

server: Server = Server("tasks")
server.experimental.enable_tasks()

if POLL_LOG is not None:
    answer_poll = server.request_handlers[GetTaskRequest]

    async def counted_poll(request: GetTaskRequest) -> ServerResult:
        with open(POLL_LOG, "a", encoding="utf-8") as log:
            log.write("tasks/get\n")
        return await answer_poll(request)

    server.request_handlers[GetTaskRequest] = counted_poll  # type: ignore[assignment]


@server.list_tools()
async def list_tools() -> list[Tool]:
    return [
        Tool(
            name="report",
            description="Summarise a topic (a long-running job: call it as a task).",
            inputSchema={"type": "object", "properties": {"topic": {"type": "string"}}, "required": ["topic"]},
            execution=ToolExecution(taskSupport="optional"),
        ),
        Tool(
            name="echo",
            description="Echo a text at once.",
            inputSchema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        ),
    ]


def _summary(topic: str) -> str:
    if CHANGED:
        return f"report on {topic}: 2 sources, no conclusion"
    return f"report on {topic}: 3 sources, all agree"


@server.call_tool()
async def call_tool(name: str, arguments: dict[str, str]) -> list[TextContent] | CallToolResult:
    if name == "echo":
        return [TextContent(type="text", text=arguments["text"])]
    topic = arguments["topic"]
    ctx = server.request_context
    if ctx.experimental.is_task:

        async def work(task: ServerTaskContext) -> CallToolResult:
            for step in range(STEPS):
                await task.update_status(f"step {step + 1} of {STEPS}")
                await anyio.sleep(STEP_MS / 1000.0)
            return CallToolResult(content=[TextContent(type="text", text=_summary(topic))])

        return await ctx.experimental.run_task(work)  # type: ignore[return-value]
    return [TextContent(type="text", text=_summary(topic))]


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
