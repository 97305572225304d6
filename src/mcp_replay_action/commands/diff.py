"""``mcp-replay diff``: two cassettes compared without a server."""

from __future__ import annotations

import sys

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import compare_options, emit_report
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK


@click.command(short_help=short_help("diff"))
@click.argument("before", type=click.Path(dir_okay=False))
@click.argument("after", type=click.Path(dir_okay=False))
@compare_options
@click.option("--json", "as_json", is_flag=True, help="Print the JSON report.")
@click.option(
    "--fail-on",
    type=click.Choice(["breaking", "any", "none"]),
    default="none",
    show_default=True,
    help="Which differences exit 1 (a diff only reports by default).",
)
@click.option("--fail-on-regression", is_flag=True, help="The same as --fail-on any.")
@handle_errors
def diff(
    before: str,
    after: str,
    ignore_paths: tuple[str, ...],
    ignore_keys: tuple[str, ...],
    allow_reorder: bool,
    as_json: bool,
    fail_on: str,
    fail_on_regression: bool,
) -> None:
    """Compare two cassettes' responses request by request, without any server."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.model.gate import GatePolicy, fail_on_from_flags
    from mcp_replay_action.replay.diff import diff_cassettes

    policy = GatePolicy(fail_on=fail_on_from_flags(None if fail_on_regression else fail_on, fail_on_regression))
    report = diff_cassettes(
        load(before),
        load(after),
        CompareOptions(ignore_paths=ignore_paths, ignore_keys=ignore_keys, allow_reorder=allow_reorder),
        policy=policy,
    )
    emit_report(report, as_json=as_json)
    sys.exit(EXIT_OK if report.gate.passed else EXIT_GATE)
