"""``mcp-replay calibrate``: learn a server's noise from fresh runs."""

from __future__ import annotations

import os

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import (
    cwd_option,
    env_option,
    env_public_option,
    isolate_option,
    no_thread_option,
    server_option,
    setup_option,
    thread_option,
    url_option,
)
from mcp_replay_action.options import Seconds, from_flags, plan_from


@click.command(short_help=short_help("calibrate"))
@server_option
@url_option
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette to calibrate.")
@cwd_option
@env_option
@env_public_option
@isolate_option
@setup_option
@click.option("--runs", type=int, default=3, show_default=True, help="Fresh server starts to compare (2-20).")
@click.option("--clear", is_flag=True, help="Remove the stored noise rules instead (no server is started).")
@click.option(
    "--timeout", type=Seconds(min=0.1, max=3600), default=30.0, show_default=True, help="Seconds per request."
)
@thread_option
@no_thread_option
@handle_errors
def calibrate(
    server: str | None,
    url: str | None,
    cassette: str,
    cwd: str | None,
    env: tuple[str, ...],
    env_public: tuple[str, ...],
    isolate: bool,
    setup: str | None,
    runs: int,
    clear: bool,
    timeout: float,
    thread: tuple[str, ...],
    no_thread: tuple[str, ...],
) -> None:
    """Learn what varies between fresh runs of the same server and store it in the cassette header
    as noise rules (paths and text patterns, with the values seen): shown by inspect, applied by
    every replay (reported, never gating), removed with --clear."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.replay import calibrate as calibration

    if clear:
        calibration.store(load(cassette), [])
        click.echo(f"removed the noise rules of {cassette}")
        return
    # The values ``replay`` reads from the same options (``options.py``), for this one cassette.
    values = from_flags(click.get_current_context().params)
    plan = plan_from(values, root=os.getcwd(), command="calibrate", paths=(cassette,))
    result = calibration.calibrate(plan, runs=runs)
    click.echo(f"{result.path}: {len(result.rules)} noise rule(s) from {result.runs} runs (see: mcp-replay inspect)")
