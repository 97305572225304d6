"""``mcp-replay compare-builds``: explore a base build, replay that against a head build."""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import click

from mcp_replay_action.cli import done_writing, handle_errors, short_help
from mcp_replay_action.commands.common import F, check_outputs, emit_report, report_options
from mcp_replay_action.commands.explore import explore_options, options_from
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.options import OPTIONS, from_flags

# The table's rows that name one server or cassettes (given per build here, or made by the
# exploration), or that explore_options spells already.
NOT_SHARED = frozenset(
    {"server", "url", "recorder_url", "cassettes", "update", "shard", "jobs", "era", "timeout", "startup_timeout"}
)


def _table_options(func: F) -> F:
    """The replay options both builds share, from the options table, in its order."""
    for row in reversed(OPTIONS):
        if row.key not in NOT_SHARED:
            func = row.click_option()(func)
    return func


@click.command(short_help=short_help("compare-builds"))
@click.option("--base", metavar="CMD", help="Command that starts the base build (stdio).")
@click.option("--head", metavar="CMD", help="Command that starts the head build (stdio).")
@click.option("--base-url", metavar="URL", help="Streamable HTTP endpoint of the base build.")
@click.option("--head-url", metavar="URL", help="Streamable HTTP endpoint of the head build.")
@click.option(
    "--cassette",
    "cassette",
    type=click.Path(dir_okay=False),
    help="Keep the base's explored cassette here (commit it to replay it from then on).",
)
@explore_options
@_table_options
@report_options
@handle_errors
def compare_builds(
    base: str | None,
    head: str | None,
    base_url: str | None,
    head_url: str | None,
    cassette: str | None,
    as_json: bool,
    report_file: str | None,
    markdown_file: str | None,
    junit_file: str | None,
    badge_file: str | None,
    sarif_file: str | None,
    verbose: bool,
    **params: Any,
) -> None:
    """Compare two builds with no cassette: explore the base (as 'explore' does), learn its noise
    from two more starts of it, replay the exploration against the head and report as 'replay'
    does (same classes, grade, gate and exit codes; exit 3 naming the base when it cannot start)."""
    from mcp_replay_action.explore.builds import compare_builds as run_compare
    from mcp_replay_action.explore.explorer import skipped_lines
    from mcp_replay_action.values.safe import visible

    if not (base or base_url) or not (head or head_url):
        raise ConfigError("compare-builds needs --base CMD (or --base-url URL) and --head CMD (or --head-url URL)")
    if sarif_file and not cassette:
        # SARIF points each finding at a line of a file; without --cassette the exploration is a
        # temporary file, gone when the command ends.
        raise ConfigError("--sarif needs --cassette FILE: the findings point at the lines of the kept exploration")
    check_outputs(
        cassette=cassette,
        report=report_file,
        markdown=markdown_file,
        junit=junit_file,
        badge=badge_file,
        sarif=sarif_file,
    )
    values = from_flags(params)
    with tempfile.TemporaryDirectory(prefix="mcp-replay-builds-") as scratch:
        path = cassette or os.path.join(scratch, "explored-base.jsonl")
        compared = run_compare(
            values,
            from_flags({"server": base, "url": base_url}),
            from_flags({"server": head, "url": head_url}),
            path,
            root=os.getcwd(),
            options=options_from(params),
        )
        outcome = compared.outcome
        # On stderr, so --json stays parseable: what the base's exploration called and left alone.
        for line in skipped_lines(compared.explored.skipped):
            click.echo(f"skipped {visible(line)}", err=True)
        click.echo(f"base: {compared.explored.line}", err=True)
        emit_report(
            outcome.report,
            as_json=as_json,
            report_file=report_file,
            markdown_file=markdown_file,
            junit_file=junit_file,
            badge_file=badge_file,
            sarif_file=sarif_file,
            verbose=verbose,
        )
    done_writing()
    sys.exit(outcome.exit_code)
