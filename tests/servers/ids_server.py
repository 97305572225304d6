"""An MCP server that mints ids in many shapes under plain keys, the way real servers do: a note
store whose ``create_*`` tools answer with a fresh id (in ``structuredContent``, in JSON text, in
prose) that the client then quotes back to ``get_*`` tools and in a resource URI. Built on the
official ``mcp`` SDK (``MCPServer``).

Shapes minted afresh by every start: ``note_`` + 12 base36, ``note_`` + uuid4, ``token_hex(6)``,
``cus_`` + 14 base62, ``token_urlsafe(8)``, an integer counter from a random base, a ULID, a
7-character hash prefix; and one the build derives from the title (a 12-character slug, the same
in every start of one build).

``IDS_SERVER_VARIANT`` makes a changed build: ``scheme`` derives the slug another way (an id
scheme that really changed, the same in every start); ``title`` answers ``get_note`` with the
title changed (a real change in an answer to a threaded call).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import string
import time
import uuid
from typing import Any

from mcp.server.mcpserver import MCPServer

VARIANT = os.environ.get("IDS_SERVER_VARIANT", "")
server = MCPServer("ids-store", version="1.0.0", log_level="WARNING")
NOTES: dict[str, str] = {}
THINGS: dict[str, str] = {}  # every other minted id -> what it names
COUNTER = [secrets.randbelow(9 * 10**8) + 10**8]
_BASE36 = string.digits + string.ascii_lowercase
_BASE62 = string.digits + string.ascii_letters
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _random(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def _ulid() -> str:
    stamp = int(time.time() * 1000)
    head = "".join(_CROCKFORD[(stamp >> (5 * i)) & 31] for i in reversed(range(10)))
    return head + _random(_CROCKFORD, 16)


def _slug(title: str) -> str:
    digest = hashlib.sha1 if VARIANT == "scheme" else hashlib.sha256
    return digest(title.encode()).hexdigest()[:12]


def _known(table: dict[str, str], key: str) -> str:
    if key not in table:
        raise ValueError(f"unknown id {key}")
    return table[key]


@server.tool()
def create_note(title: str) -> dict[str, Any]:
    """Create a note; its id and its customer ref are minted (structuredContent and JSON text)."""
    note_id = "note_" + _random(_BASE36, 12)
    ref = "cus_" + _random(_BASE62, 14)
    NOTES[note_id] = title
    THINGS[ref] = title
    return {"id": note_id, "ref": ref, "title": title}


@server.tool()
def get_note(id: str) -> dict[str, Any]:  # noqa: A002 - the plain key is the point
    """A note by id."""
    title = _known(NOTES, id)
    if VARIANT == "title":
        title = title.upper()
    return {"id": id, "title": title}


@server.tool()
def get_customer(ref: str) -> str:
    """The note a customer ref names, in prose."""
    return f"Customer {ref} owns the note {_known(THINGS, ref)!r}."


@server.tool()
def create_draft(title: str) -> str:
    """Create a draft: its id (note_ + uuid4) and its ref (token_hex(6)) only in prose."""
    draft_id = f"note_{uuid.uuid4()}"
    ref = secrets.token_hex(6)
    THINGS[draft_id] = THINGS[ref] = title
    return f"Created draft {draft_id} (ref {ref}) titled {title!r}."


@server.tool()
def get_draft(id: str, ref: str) -> str:  # noqa: A002
    """A draft by id and ref."""
    title = _known(THINGS, id)
    _known(THINGS, ref)
    return f"Draft {id}: {title}"


@server.tool()
def create_token(purpose: str) -> dict[str, Any]:
    """A token_urlsafe(8) id and a ticket number from a counter with a random base."""
    token = secrets.token_urlsafe(8)
    COUNTER[0] += 1
    ticket = COUNTER[0]
    THINGS[token] = THINGS[str(ticket)] = purpose
    return {"id": token, "ref": ticket, "summary": f"Ticket {ticket} opened for {purpose}."}


@server.tool()
def use_token(id: str, ticket: int) -> dict[str, Any]:  # noqa: A002
    """Spend a token against a ticket."""
    return {"ok": True, "purpose": _known(THINGS, id), "ticket_purpose": _known(THINGS, str(ticket))}


@server.tool(structured_output=False)  # JSON text only: no structuredContent twin
def create_event(name: str) -> str:
    """An event: a ULID and a hash prefix, as JSON text (no structured output)."""
    event = _ulid()
    commit = hashlib.sha1(secrets.token_bytes(16)).hexdigest()[:7]
    slug = _slug(name)
    THINGS[event] = THINGS[commit] = THINGS[slug] = name
    return json.dumps({"event": {"ref": event, "id": commit}, "slug": slug, "name": name})


@server.tool()
def get_event(ref: str, commit: str, slug: str) -> dict[str, Any]:
    """An event by its ULID, the commit prefix and the slug."""
    return {"name": _known(THINGS, ref), "commit_name": _known(THINGS, commit), "slug_name": _known(THINGS, slug)}


@server.tool()
def list_notes() -> dict[str, Any]:
    """Every note, in creation order."""
    return {"notes": [{"id": k, "title": v} for k, v in NOTES.items()]}


@server.resource("notes://{note_id}/body")
def note_body(note_id: str) -> str:
    """A note's body, by a URI that quotes its id."""
    return f"# {_known(NOTES, note_id)}\n"


if __name__ == "__main__":
    server.run()
