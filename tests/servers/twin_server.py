"""One small server, the same tools on both official Python SDKs, for replay across eras.

Run with PyPI ``mcp`` 1.x (``tests/servers/.venv-sdk1/bin/python``) it is a handshake-era server
(``initialize``, server-to-client requests mid-call); run with ``mcp`` 2.x (the suite's python) it
speaks only the stateless 2026-07-28 revision (the SDK's own stateless loop, as
``era_server.py`` drives it): no handshake, ``server/discover``, and the user asked through
``input_required`` results. ``--regressed`` changes one tool's answer (``add`` is off by one), the
change a replay across eras must still catch.

Tools: ``echo``, ``add``, ``confirm`` (asks the user: elicitation), ``roots`` (asks the client's
roots), ``summarize`` (asks the client's model: sampling); resource ``note://hello`` (and any other ``note://`` URI is not found).
"""

from __future__ import annotations

import argparse
import sys

from pydantic import BaseModel

parser = argparse.ArgumentParser()
parser.add_argument("--regressed", action="store_true")
REGRESSED = parser.parse_args().regressed
SDK2 = not __import__("importlib.metadata").metadata.version("mcp").startswith("1.")


class Confirm(BaseModel):
    ok: bool


def add_numbers(a: int, b: int) -> int:
    return a + b + (1 if REGRESSED else 0)


def confirmed(action: str, outcome: str, ok: bool | None) -> str:
    return f"{action}: {outcome}" + ("" if ok is None else f" ok={ok}")


def root_names(uris: list[str]) -> str:
    return ", ".join(sorted(uris)) or "no roots"


def summary_request(text: str) -> tuple[str, int]:
    return f"Summarize: {text}", 50


def sampled(text: str) -> str:
    return f"summary: {text}"


if SDK2:
    from typing import Annotated

    import anyio
    from mcp.server.elicitation import AcceptedElicitation, ElicitationResult
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
    from mcp.server.runner import _serve_modern_stream
    from mcp.server.stdio import stdio_server
    from mcp_types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent

    # No ``subscriptions/listen``: its handshake twin sends no change notifications either.
    server = MCPServer("twin", version="1.0.0", log_level="WARNING", subscriptions=False)

    def ask(action: str) -> Elicit[Confirm]:
        return Elicit(f"Really {action}?", Confirm)

    def ask_roots() -> ListRoots:
        return ListRoots()

    @server.tool()
    def confirm(action: str, answer: Annotated[ElicitationResult[Confirm], Resolve(ask)]) -> str:
        """Ask the user to confirm an action."""
        ok = answer.data.ok if isinstance(answer, AcceptedElicitation) else None
        return confirmed(action, answer.action, ok)

    @server.tool()
    def roots(found: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
        """Name the client's roots."""
        return root_names([str(r.uri) for r in found.roots])

    def ask_model(text: str) -> Sample:
        prompt, tokens = summary_request(text)
        return Sample([SamplingMessage(role="user", content=TextContent(type="text", text=prompt))], max_tokens=tokens)

    @server.tool()
    def summarize(text: str, reply: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
        """Summarize a text with the client's model."""
        return sampled(reply.content.text if isinstance(reply.content, TextContent) else "")

else:
    from mcp.server.fastmcp import Context, FastMCP
    from mcp.shared.exceptions import McpError
    from mcp.types import ErrorData

    server = FastMCP("twin", log_level="WARNING")  # type: ignore[assignment]
    server._mcp_server.version = "1.0.0"
    read_known = server.read_resource

    async def read(uri: object) -> object:
        # The handshake era's code for a missing resource, -32002 (the 1.x SDK itself sends 0).
        if str(uri) != "note://hello":
            raise McpError(ErrorData(code=-32002, message=f"Unknown resource: {uri}", data={"uri": str(uri)}))
        return await read_known(uri)  # type: ignore[arg-type]

    server._mcp_server.read_resource()(read)  # type: ignore[arg-type]

    @server.tool()
    async def confirm(action: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Ask the user to confirm an action."""
        answer = await ctx.elicit(f"Really {action}?", Confirm)
        ok = answer.data.ok if answer.action == "accept" else None
        return confirmed(action, answer.action, ok)

    @server.tool()
    async def roots(ctx: Context) -> str:  # type: ignore[type-arg]
        """Name the client's roots."""
        found = await ctx.session.list_roots()
        return root_names([str(r.uri) for r in found.roots])

    @server.tool()
    async def summarize(text: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Summarize a text with the client's model."""
        from mcp.types import SamplingMessage, TextContent

        prompt, tokens = summary_request(text)
        message = SamplingMessage(role="user", content=TextContent(type="text", text=prompt))
        reply = await ctx.session.create_message(messages=[message], max_tokens=tokens)
        return sampled(reply.content.text if isinstance(reply.content, TextContent) else "")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return add_numbers(a, b)


@server.resource("note://hello")
def hello() -> str:
    """A short note."""
    return "hello, world"


if __name__ == "__main__":
    if not SDK2:
        server.run()
        sys.exit(0)

    async def serve() -> None:
        low = server._lowlevel_server
        async with stdio_server() as (read_stream, write_stream), low.lifespan(low) as state:
            await _serve_modern_stream(low, read_stream, write_stream, lifespan_state=state, raise_exceptions=False)

    anyio.run(serve)
