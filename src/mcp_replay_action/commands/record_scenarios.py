"""``mcp-replay record-scenarios``: cassettes from a scenarios file."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import setup_option

if TYPE_CHECKING:
    from mcp_replay_action.model.cassette import Cassette
    from mcp_replay_action.scenarios import Scenario


@click.command("record-scenarios", short_help=short_help("record-scenarios"))
@click.argument("scenarios_file", type=click.Path(dir_okay=False))
@click.option(
    "--output-dir",
    "-o",
    type=click.Path(file_okay=False),
    help="Where cassettes go (default: cassettes/ beside the file).",
)
@click.option("--scenario", "only", multiple=True, help="Record only this scenario (repeatable).")
@click.option(
    "--strict",
    is_flag=True,
    help="A call_tool of a tool the server does not list is an error (exit 2, nothing written), not a warning.",
)
@setup_option
@handle_errors
def record_scenarios_cmd(
    scenarios_file: str, output_dir: str | None, only: tuple[str, ...], strict: bool, setup: str | None
) -> None:
    """Record cassettes from a scenarios.yml, with no client code.

    Each scenario's line is printed as it is recorded; the files are written once all are.
    """
    from dataclasses import replace
    from pathlib import Path  # here, not at the top: --help never needs it

    from mcp_replay_action.scenarios import load_scenarios, record_scenarios

    scenarios = load_scenarios(scenarios_file)
    if setup:
        scenarios = replace(scenarios, target=replace(scenarios.target, setup=setup))
    out = Path(output_dir) if output_dir else Path(scenarios_file).resolve().parent / "cassettes"
    from mcp_replay_action.cassette.header import recorded_line
    from mcp_replay_action.values.safe import no_workflow_commands

    def recorded(scenario: Scenario, cassette: Cassette) -> None:
        click.echo(f"{scenario.name}: " + recorded_line(None, len(cassette.interactions), cassette.meta))

    def warn(text: str) -> None:
        # It may quote a tool name the server sent: a CI log must not obey it.
        click.echo(no_workflow_commands(f"mcp-replay: warning: {text}"), err=True)

    from mcp_replay_action.errors import Interrupted
    from mcp_replay_action.transport.process import trap_stop_signals

    def stop() -> None:
        # Raised where the recording is (the main thread), which keeps what it has and says where.
        raise Interrupted("interrupted")

    restore = trap_stop_signals(stop)
    try:
        paths = record_scenarios(scenarios, out, only=only, strict=strict, warn=warn, on_recorded=recorded)
    finally:
        restore()
    names = ", ".join(path.name for path in paths)
    click.echo(f"wrote {len(paths)} cassette{'s' if len(paths) != 1 else ''} to {out}: {names}")
