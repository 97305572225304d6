"""A task-tracker MCP server built on the official ``mcp`` SDK's ``MCPServer`` (the FastMCP API),
for the end-to-end tests. Run it as a script; it speaks stdio in both protocol eras (the SDK
answers ``initialize`` and ``server/discover``).

Its answers are what makes replay hard, on purpose:

- ``create_task`` mints a uuid; ``get_task`` / ``export_task`` fail for an id they never minted,
  so a replayed session only passes if the live id is threaded into the later calls;
- ``now`` returns timestamps and dates inside JSON-in-text, ``stamp`` inside plain text;
- ``export_task`` returns an embedded resource whose base64 ``blob`` decodes to JSON with a
  timestamp, and ``notes://readme`` reads as a base64 blob of plain text;
- ``count`` reports progress notifications before its result;
- ``delete_task`` asks the user to confirm: an ``input_required`` round trip with an opaque,
  sealed ``requestState`` at 2026-07-28, a server-to-client ``elicitation/create`` before.

``FAST_SERVER_VARIANT`` (comma-separated) turns it into a drifted build for regression tests:
``value`` (``add`` is off by one), ``added-key`` (``get_task`` gains a key), ``remove-tool``
(``legacy_sum`` is gone), ``error-flip`` (``greet`` fails), ``crash-on-get`` (the process dies
in ``get_task`` with a message on stderr), ``hang-on-get`` (the process stops in ``get_task``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import signal
import sys
import uuid
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import BlobResourceContents, EmbeddedResource
from pydantic import BaseModel

VARIANT = {flag.strip() for flag in os.environ.get("FAST_SERVER_VARIANT", "").split(",") if flag.strip()}

server = MCPServer("fast-tasks", version="3.1.4", log_level="WARNING")
tasks: dict[str, dict[str, Any]] = {}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b + (1 if "value" in VARIANT else 0)


if "remove-tool" not in VARIANT:

    @server.tool()
    def legacy_sum(values: list[int]) -> int:
        """Sum a list of integers (kept for old clients)."""
        return sum(values)


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    if "error-flip" in VARIANT:
        raise ToolError(f"greeting service unavailable for {name}")
    return f"Hello, {name}!"


@server.tool()
def now() -> str:
    """The current time, as JSON in a text block."""
    moment = _now()
    return json.dumps(
        {
            "utc": moment.isoformat(),
            "date": moment.date().isoformat(),
            "http_date": moment.strftime("%a, %d %b %Y %H:%M:%S GMT"),
            "zone": "UTC",
        }
    )


@server.tool()
def stamp(label: str) -> str:
    """A label with the moment it was stamped, in plain text."""
    return f"{label} stamped at {_now().strftime('%Y-%m-%dT%H:%M:%SZ')}"


@server.tool()
def create_task(title: str) -> dict[str, Any]:
    """Create a task; the server mints its id."""
    task_id = str(uuid.uuid4())
    tasks[task_id] = {"id": task_id, "title": title, "created_at": _now().isoformat(), "done": False}
    return dict(tasks[task_id])


@server.tool()
def get_task(task_id: str) -> dict[str, Any]:
    """A task by the id ``create_task`` returned."""
    if "crash-on-get" in VARIANT:
        sys.stderr.write("fatal: task store corrupted (simulated crash)\n")
        sys.stderr.flush()
        os._exit(70)
    if "hang-on-get" in VARIANT:
        # Sync tools run in a worker thread, so sleeping here would hang this call only: stop
        # the whole process instead, as a deadlocked server looks from outside (it ignores
        # stdin EOF and SIGTERM until it is killed).
        os.kill(os.getpid(), signal.SIGSTOP)
    if task_id not in tasks:
        raise ToolError(f"unknown task {task_id}")
    task = dict(tasks[task_id])
    if "added-key" in VARIANT:
        task["priority"] = "normal"
    return task


@server.tool()
def export_task(task_id: str) -> EmbeddedResource:
    """A task exported as an embedded resource with a base64 JSON blob."""
    if task_id not in tasks:
        raise ToolError(f"unknown task {task_id}")
    document = {"task": tasks[task_id], "exported_at": _now().isoformat()}
    blob = base64.b64encode(json.dumps(document).encode()).decode()
    return EmbeddedResource(
        type="resource",
        resource=BlobResourceContents(uri=f"tasks://{task_id}/export", mime_type="application/json", blob=blob),
    )


@server.tool()
async def count(n: int, ctx: Context) -> str:
    """Count to n, reporting progress at each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i}")
    return f"counted to {n}"


class Confirmation(BaseModel):
    confirm: bool


def _ask_to_delete(task_id: str) -> Elicit[Confirmation]:
    return Elicit(f"Delete task {task_id}?", Confirmation)


@server.tool()
def delete_task(task_id: str, answer: Annotated[Confirmation, Resolve(_ask_to_delete)]) -> str:
    """Delete a task once the user confirms."""
    if task_id not in tasks:
        raise ToolError(f"unknown task {task_id}")
    if not answer.confirm:
        return f"kept {task_id}"
    del tasks[task_id]
    return f"deleted {task_id}"


@server.resource("tasks://{task_id}", mime_type="application/json")
def task_resource(task_id: str) -> str:
    """A task read as a resource, at a URI that holds the id the server minted."""
    if task_id not in tasks:
        raise ValueError(f"unknown task {task_id}")
    return json.dumps(tasks[task_id])


@server.resource("notes://readme", mime_type="text/plain")
def readme() -> bytes:
    """A static note, served as a binary blob."""
    return b"fast-tasks keeps a list of tasks.\nIds are minted by the server.\n"


@server.resource("notes://today", mime_type="application/json")
def today() -> str:
    """Today's date as JSON."""
    return json.dumps({"today": _now().date().isoformat(), "generated": _now().isoformat()})


@server.prompt()
def plan(goal: str) -> str:
    """A prompt to plan towards a goal."""
    return f"Break the goal '{goal}' into three tasks."


if __name__ == "__main__":
    server.run()
