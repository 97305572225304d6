"""An MCP server on the official ``mcp`` SDK 2.x that serves the 2026-07-28 Tasks extension
(``io.modelcontextprotocol/tasks``, SEP-2663) through the SDK's own extension API (``Extension``:
``MethodBinding`` for ``tasks/get``, ``tasks/update`` and ``tasks/cancel``, and a ``tools/call``
interceptor). The SDK ships no tasks runtime yet; this extension follows the extension's wire
shapes: a ``tools/call`` answered with a task handle (``resultType: "task"``, the task's fields
flat in the result) whatever the client asked (server-directed: the handle is unsolicited), a
``tasks/get`` answering the task (``status``, ``pollIntervalMs``; ``inputRequests`` while it is
``input_required``, ``result`` once ``completed``), ``tasks/update`` delivering
``inputResponses`` with an empty acknowledgment.

Tools: ``report(topic)`` works ``--steps`` x ``--step-ms`` ms (defaults 3 and 60) and completes;
``approve(item)`` first asks for a confirmation (``input_required`` with one input request,
``confirm``), then works and completes with what was answered. ``--changed`` is the regressed
build: ``report``'s result says something else.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolRequestParams, RequestParams


def _flag(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


STEPS = _flag("--steps", 3)
STEP_MS = _flag("--step-ms", 60)
CHANGED = "--changed" in sys.argv
POLL_MS = 50


class TaskParams(RequestParams):
    taskId: str


class UpdateParams(RequestParams):
    taskId: str
    inputResponses: dict[str, Any]


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


class Job:
    def __init__(self, result: Any, ask: dict[str, Any] | None) -> None:
        self.task_id = str(uuid.uuid4())
        self.created = _now()
        self.result = result  # the CallToolResult, or a function of the input responses
        self.ask = ask  # the one input request asked first, if any
        self.answers: dict[str, Any] | None = None
        self.started = time.monotonic() if ask is None else None

    def view(self) -> dict[str, Any]:
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "createdAt": self.created,
            "lastUpdatedAt": _now(),
            "ttlMs": 60000,
            "pollIntervalMs": POLL_MS,
        }
        if self.started is None:
            return {**task, "status": "input_required", "inputRequests": {"confirm": self.ask}}
        if time.monotonic() - self.started < STEPS * STEP_MS / 1000.0:
            return {**task, "status": "working", "statusMessage": "working"}
        result = self.result(self.answers) if callable(self.result) else self.result
        return {**task, "status": "completed", "result": result}


JOBS: dict[str, Job] = {}


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class Tasks(Extension):
    identifier = "io.modelcontextprotocol/tasks"

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskParams, self.get),
            MethodBinding("tasks/update", UpdateParams, self.update),
            MethodBinding("tasks/cancel", TaskParams, self.cancel),
        )

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        args = params.arguments or {}
        if params.name == "report":
            summary = "2 sources, no conclusion" if CHANGED else "3 sources, all agree"
            job = Job(_text(f"report on {args.get('topic')}: {summary}"), None)
        elif params.name == "approve":
            ask = {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": f"Approve {args.get('item')}?",
                    "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
                },
            }

            def verdict(answers: dict[str, Any] | None) -> dict[str, Any]:
                answer = (answers or {}).get("confirm") or {}
                ok = (answer.get("content") or {}).get("ok")
                return _text(f"{args.get('item')}: {'approved' if ok else 'refused'}")

            job = Job(verdict, ask)
        else:
            return await call_next(ctx)
        JOBS[job.task_id] = job
        view = job.view()
        view.pop("result", None)
        view.pop("inputRequests", None)  # a handle carries neither (SEP-2663)
        return {**view, "resultType": "task"}

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        job = JOBS.get(params.taskId)
        if job is None:
            raise ValueError(f"no task {params.taskId}")
        return job.view()

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> HandlerResult:
        job = JOBS.get(params.taskId)
        if job is not None and job.started is None and "confirm" in params.inputResponses:
            job.answers = params.inputResponses
            job.started = time.monotonic()
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> HandlerResult:
        return {}


server = MCPServer("tasks-ext", version="1.0.0", log_level="WARNING", extensions=[Tasks()])


@server.tool()
def report(topic: str) -> str:
    """Summarise a topic (answered with a task)."""
    return topic  # never reached: the extension answers with a task


@server.tool()
def approve(item: str) -> str:
    """Approve an item after a confirmation (answered with a task)."""
    return item  # never reached: the extension answers with a task


if __name__ == "__main__":
    server.run()
