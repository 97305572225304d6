"""The session a user runs against an id-minting server, driven by the official Python SDK client
over stdio: the floor of ``bench_minted.py`` (and, pointed at ``mcp-replay record``, the way its
cassette is recorded).

    python benchmarks/_minting_client.py SERVER_ARGV...

Each id the server mints (a note id and customer ref in ``structuredContent`` and its JSON text
copy, a draft id in prose, a ticket number from a counter) is read from an answer and quoted back.
"""

from __future__ import annotations

import re
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROUNDS = 5  # notes created and read back per session


def _text(result: object) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", ()))


async def session(argv: list[str]) -> None:
    params = StdioServerParameters(command=argv[0], args=argv[1:])
    async with Client(params, read_timeout_seconds=30) as client:
        await client.list_tools()
        for n in range(ROUNDS):
            note = (await client.call_tool("create_note", {"title": f"note {n}"})).structured_content
            assert note is not None
            assert not (await client.call_tool("get_note", {"id": note["id"]})).is_error
            assert not (await client.call_tool("get_customer", {"ref": note["ref"]})).is_error
            prose = _text(await client.call_tool("create_draft", {"title": f"draft {n}"}))
            found = re.search(r"Created draft (\S+) \(ref (\w+)\)", prose)
            assert found, prose
            assert not (await client.call_tool("get_draft", {"id": found[1], "ref": found[2]})).is_error
            token = (await client.call_tool("create_token", {"purpose": f"job {n}"})).structured_content
            assert token is not None
            assert not (await client.call_tool("use_token", {"id": token["id"], "ticket": token["ref"]})).is_error
        await client.call_tool("list_notes", {})


if __name__ == "__main__":
    anyio.run(session, sys.argv[1:])
