"""``mcp-replay serve``: a mock server answering from a cassette."""

from __future__ import annotations

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import parse_listen


@click.command(short_help=short_help("serve"))
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette to answer from.")
@click.option("--listen", metavar="HOST:PORT", help="Serve Streamable HTTP here instead of stdio.")
@click.option(
    "--match",
    type=click.Choice(["method_params", "sequential", "strict"]),
    default="method_params",
    show_default=True,
    help="How a request finds its recorded answer: the same method and params, _meta aside "
    "(method_params); the next recording in order (sequential); the whole request, _meta included (strict).",
)
@handle_errors
def serve(cassette: str, listen: str | None, match: str) -> None:
    """A mock MCP server that answers from a cassette, to test clients without the real server."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.serve import serve_http, serve_stdio

    address = parse_listen(listen) if listen else None
    loaded = load(cassette)
    if address:
        host, port = address
        serve_http(loaded, host, port, match=match)
    else:
        serve_stdio(loaded, match=match)
