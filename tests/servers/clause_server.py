"""A notes server whose answers quote a freshly minted id inside prose, and a page stamped with the
time it was rendered: the places where noise at the token must not swallow a real change. Built on
the official ``mcp`` SDK (``MCPServer``).

``create_note`` answers ``Created note n_<hex> (<title>).``; ``get_note`` quotes the id back;
the resource ``ui://clause/page.html`` is an MCP App's page (``PAGE_KIB`` long, 256 by default)
carrying the ISO time it was rendered, the UUID of its render and the PID that served it.

``CLAUSE_SERVER_VARIANT`` makes a changed build: ``clause`` drops the title clause
(``Created note n_<hex>.``), ``word`` changes a word beside the id (``Made note ...``), ``byte``
changes one byte deep inside the page.
"""

from __future__ import annotations

import datetime
import os
import secrets
import uuid

from mcp.server.mcpserver import MCPServer

VARIANT = os.environ.get("CLAUSE_SERVER_VARIANT", "")
PAGE_KIB = int(os.environ.get("PAGE_KIB", "256"))
server = MCPServer("clause-notes", version="1.0.0", log_level="WARNING")
NOTES: dict[str, str] = {}


@server.tool()
def create_note(title: str) -> str:
    """Create a note; its id is new in every start."""
    note_id = "n_" + secrets.token_hex(4)
    NOTES[note_id] = title
    verb = "Made" if VARIANT == "word" else "Created"
    if VARIANT == "clause":
        return f"{verb} note {note_id}."
    return f"{verb} note {note_id} ({title})."


@server.tool()
def get_note(id: str) -> str:  # noqa: A002 - the tool's argument name, as a client sends it
    """A note by its id, quoted back in prose."""
    return f"Note {id}: {NOTES[id]}"


@server.resource("ui://clause/page.html", mime_type="text/html;profile=mcp-app")
def page() -> str:
    """An MCP App's page (a document) stamped with the time it was rendered."""
    now = datetime.datetime.now(datetime.UTC).isoformat()
    rows = []
    for i in range(PAGE_KIB * 1024 // 64):
        cell = "dlrow" if VARIANT == "byte" and i == PAGE_KIB * 8 else "world"
        rows.append(f"<tr><td>{i:06d}</td><td>hello {cell}</td><td>steady row</td></tr>\n")
        if i == 100:  # no mask knows a PID: only the confirmation pass tells it is noise
            rows.append(f"<tr><td>served by worker pid {os.getpid()}</td></tr>\n")
    return (
        f'<!doctype html><html><head><meta name="rendered" content="{now}">'
        f'<meta name="render-id" content="{uuid.uuid4()}"></head><body><table>\n'
        + "".join(rows)
        + f"</table><footer>rendered at {now}</footer></body></html>\n"
    )


if __name__ == "__main__":
    server.run()
