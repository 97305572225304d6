"""``mcp-replay inspect``: a cassette summarised."""

from __future__ import annotations

import click

from mcp_replay_action.cli import handle_errors, short_help


@click.command(short_help=short_help("inspect"))
@click.argument("cassette", type=click.Path(dir_okay=False))
@handle_errors
def inspect(cassette: str) -> None:
    """Summarise a cassette: server, protocol era, interactions, redaction."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.report.inspection import render_summary, summarize

    click.echo(render_summary(summarize(load(cassette))))
