"""``mcp-replay demo``: record, then replay against a healthy and a regressed build."""

from __future__ import annotations

import sys

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.errors import EXIT_OK, EXIT_USAGE


@click.command(short_help=short_help("demo"))
@click.option("--keep", type=click.Path(file_okay=False), help="Keep the demo cassette in this directory.")
@handle_errors
def demo(keep: str | None) -> None:
    """Record a session against a bundled sample server, then replay it against a healthy build
    and against a regressed twin whose tools/list is byte-identical."""
    from mcp_replay_action.demo import run_demo

    ok = run_demo(echo=click.echo, keep_dir=keep, color=sys.stdout.isatty())
    sys.exit(EXIT_OK if ok else EXIT_USAGE)
