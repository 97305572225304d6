"""``mcp-replay record-scenarios``: cassettes from a scenarios file."""

from __future__ import annotations

import click

from mcp_replay_action.cli import handle_errors
from mcp_replay_action.commands.common import setup_option


@click.command("record-scenarios")
@click.argument("scenarios_file", type=click.Path(dir_okay=False))
@click.option(
    "--output-dir",
    "-o",
    type=click.Path(file_okay=False),
    help="Where cassettes go (default: cassettes/ beside the file).",
)
@click.option("--scenario", "only", multiple=True, help="Record only this scenario (repeatable).")
@setup_option
@handle_errors
def record_scenarios_cmd(scenarios_file: str, output_dir: str | None, only: tuple[str, ...], setup: str | None) -> None:
    """Record cassettes from a scenarios.yml, with no client code."""
    from dataclasses import replace
    from pathlib import Path  # here, not at the top: --help never needs it

    from mcp_replay_action.scenarios import load_scenarios, record_scenarios

    scenarios = load_scenarios(scenarios_file)
    if setup:
        scenarios = replace(scenarios, target=replace(scenarios.target, setup=setup))
    out = Path(output_dir) if output_dir else Path(scenarios_file).resolve().parent / "cassettes"
    for path in record_scenarios(scenarios, out, only=only):
        click.echo(f"wrote {path}")
