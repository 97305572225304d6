"""``mcp-replay convert``: between our JSONL and mcp-recorder's JSON."""

from __future__ import annotations

import click

from mcp_replay_action.cli import handle_errors, short_help


@click.command(short_help=short_help("convert"))
@click.argument("source", type=click.Path(dir_okay=False))
@click.argument("destination", type=click.Path(dir_okay=False))
@click.option("--to", type=click.Choice(["jsonl", "recorder-json"]), help="Output format (default: by extension).")
@handle_errors
def convert(source: str, destination: str, to: str | None) -> None:
    """Convert between mcp-replay JSONL and mcp-recorder JSON cassettes."""
    from mcp_replay_action.cassette.convert import convert_file

    convert_file(source, destination, to=to)
    click.echo(f"wrote {destination}")
