"""A ticket desk written the way a user writes an MCP server: the official Python SDK's
``MCPServer``, tools that return plain values, and integer ids from a counter that starts wherever
the database left it (a random base below 100,000 on every start, as a sequence kept across
restarts would be).

The SDK sends a returned dict as ``structuredContent`` and again as JSON text in
``content[0].text`` (the id in both), and a returned int as ``structuredContent: {"result": N}``
plus the text ``"N"``. ``count_tickets`` answers a count that a later ``list_tickets`` quotes as
its ``limit``: a count, never an id. ``export_tickets`` echoes the ids in a long answer (over a
megabyte of JSON text).

``TICKETS_STARTS``: a file this server appends one line to on every start (a replay's starts are
counted from it). ``TICKETS_VARIANT=miscount`` makes a changed build whose count is one too many.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

from mcp.server.mcpserver import MCPServer

if os.environ.get("TICKETS_STARTS"):
    with open(os.environ["TICKETS_STARTS"], "a", encoding="utf-8") as starts:
        starts.write(f"{os.getpid()}\n")

VARIANT = os.environ.get("TICKETS_VARIANT", "")
server = MCPServer("ticket-desk", version="1.0.0", log_level="WARNING")
TICKETS: dict[int, str] = {}
NEXT = [10_000 + secrets.randbelow(80_000)]  # e.g. 23014: where the sequence stands today


@server.tool()
def open_ticket(title: str) -> dict[str, Any]:
    """Open a ticket; its id is the next number of the sequence."""
    ticket = NEXT[0]
    NEXT[0] += 1 + secrets.randbelow(7)  # other clients take numbers too
    TICKETS[ticket] = title
    return {"id": ticket, "title": title, "status": "open"}


@server.tool()
def open_quick(title: str) -> int:
    """Open a ticket and answer with its number alone."""
    ticket = open_ticket(title)["id"]
    return int(ticket)


@server.tool()
def get_ticket(id: int) -> dict[str, Any]:  # noqa: A002 - the tool's argument name, as a client sends it
    """A ticket by its id."""
    if id not in TICKETS:
        raise ValueError(f"no ticket {id}")
    return {"id": id, "title": TICKETS[id], "status": "open"}


@server.tool()
def close_ticket(ticket: int) -> str:
    """Close a ticket, said in prose."""
    if ticket not in TICKETS:
        raise ValueError(f"no ticket {ticket}")
    return f"Ticket {ticket} closed."


@server.tool()
def count_tickets() -> int:
    """How many tickets are open."""
    return len(TICKETS) + (1 if VARIANT == "miscount" else 0)


@server.tool()
def list_tickets(limit: int) -> dict[str, Any]:
    """The first ``limit`` tickets, oldest first."""
    return {"tickets": [{"id": k, "title": v} for k, v in list(TICKETS.items())[:limit]], "count": len(TICKETS)}


@server.tool()
def export_tickets() -> dict[str, Any]:
    """Every ticket with its log: a long answer (over a megabyte of JSON text) that echoes the ids."""
    log = "status: open; " * 45_000
    return {"tickets": [{"id": k, "title": v, "log": log} for k, v in TICKETS.items()]}


if __name__ == "__main__":
    server.run()
