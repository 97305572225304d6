"""A notes server on the official Python SDK (MCPServer): each note gets a fresh random id, sent in
``structuredContent`` and as JSON in the text, that later calls must quote back."""

import secrets

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

server = MCPServer("notes")
NOTES: dict[str, "Note"] = {}


class Note(BaseModel):
    id: str
    title: str


@server.tool()
def create_note(title: str) -> Note:
    """Create a note; its id is new every time."""
    note = Note(id=f"note_{secrets.token_hex(6)}", title=title)
    NOTES[note.id] = note
    return note


@server.tool()
def get_note(id: str) -> Note:  # noqa: A002 - the tool's argument name, as a client sends it
    """A note by its id."""
    return NOTES[id]


if __name__ == "__main__":
    server.run()
