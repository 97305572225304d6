"""A notes server that says what it does in log messages and progress, each quoting an id minted
afresh by every start: the places where noise at the token must not swallow a real change in a
notification. Built on the official ``mcp`` SDK (``MCPServer``); stdio.

``create_note`` answers with the note's new id (``n_<hex>``), logs
``created note n_<hex> (<title>)`` and ends its progress with ``note n_<hex> stored (<title>)``; ``get_note`` quotes the id back (so the recording proves its
flow: it is threaded, and expected to differ in the log message too). ``sync`` runs a job whose id
(``j_<hex>``) no answer gives: it logs ``sync job j_<hex> started (<n> notes)`` and, with the same
data, ``{"event": "job j_<hex>", "summary": "<n> notes synced"}``, and its last progress says
``job j_<hex> done (<n> notes)``; only a confirmation pass tells that id is noise. ``purge``
asks the client to confirm ``Purge job j_<hex> (<n> notes)?`` (an elicitation) with such an id.

``LOGGED_NOTES_VARIANT=clause`` makes a changed build: every one of those texts loses its
parenthesised clause (``created note n_<hex>``, ``sync job j_<hex> started``, ...) and the nested
summary its count. ``LOGGED_NOTES_VARIANT=twice`` makes ``purge`` ask a second time (a request to
the client the recording never saw). With ``STARTS_FILE`` set, each start appends a line to it (a test counts the
server starts a replay made).
"""

from __future__ import annotations

import os
import secrets

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

CLAUSE = os.environ.get("LOGGED_NOTES_VARIANT") == "clause"
TWICE = os.environ.get("LOGGED_NOTES_VARIANT") == "twice"
if os.environ.get("STARTS_FILE"):
    with open(os.environ["STARTS_FILE"], "a") as starts:
        starts.write("start\n")
server = MCPServer("logged-notes", version="1.0.0", log_level="WARNING")
NOTES: dict[str, str] = {}


def _said(text: str, clause: str) -> str:
    return text if CLAUSE else f"{text} ({clause})"


@server.tool()
async def create_note(title: str, ctx: Context) -> str:
    """Create a note; its id is new in every start."""
    note_id = "n_" + secrets.token_hex(4)
    NOTES[note_id] = title
    await ctx.info(_said(f"created note {note_id}", title))
    await ctx.report_progress(1, 1, _said(f"note {note_id} stored", title))
    return note_id


@server.tool()
async def get_note(id: str, ctx: Context) -> str:  # noqa: A002 - the tool's argument name, as a client sends it
    """A note's title, by its id."""
    await ctx.info(f"read note {id}")
    return NOTES[id]


@server.tool()
async def sync(ctx: Context) -> str:
    """Sync the notes in a job whose id no answer gives."""
    job = "j_" + secrets.token_hex(4)
    count = f"{len(NOTES)} notes"
    await ctx.info(_said(f"sync job {job} started", count))
    await ctx.info({"event": f"job {job}", "summary": "synced" if CLAUSE else f"{count} synced"})
    await ctx.report_progress(1, 1, _said(f"job {job} done", count))
    return "synced"


class Confirm(BaseModel):
    ok: bool


@server.tool()
async def purge(ctx: Context) -> str:
    """Purge the notes in a job whose id no answer gives, once the user confirms."""
    job = "j_" + secrets.token_hex(4)
    answer = await ctx.elicit(_said(f"Purge job {job}", f"{len(NOTES)} notes") + "?", Confirm)
    if TWICE and answer.action == "accept":
        answer = await ctx.elicit("Purge for good?", Confirm)
    return "purged" if answer.action == "accept" else "kept"


if __name__ == "__main__":
    server.run()
