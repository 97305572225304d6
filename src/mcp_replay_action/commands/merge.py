"""``mcp-replay merge``: shard reports combined into one."""

from __future__ import annotations

import sys

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import check_outputs, emit_report, report_options
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK


@click.command(short_help=short_help("merge"))
@click.argument("reports", nargs=-1, required=True, type=click.Path(dir_okay=False))
@report_options
@handle_errors
def merge(
    reports: tuple[str, ...],
    as_json: bool,
    report_file: str | None,
    markdown_file: str | None,
    junit_file: str | None,
    badge_file: str | None,
    sarif_file: str | None,
    verbose: bool,
) -> None:
    """Combine the JSON reports of 'replay --shard i/n' runs into one report, graded and gated
    as one run over every cassette would be (exit 0 pass, 1 gate failed, 2 bad report)."""
    from mcp_replay_action.host.files import read_json_object
    from mcp_replay_action.replay.shard import merge as merge_reports
    from mcp_replay_action.report.json_report import from_dict

    check_outputs(report=report_file, markdown=markdown_file, junit=junit_file, badge=badge_file, sarif=sarif_file)
    loaded = [from_dict(read_json_object(path, "report", 256 * 1024 * 1024), where=path) for path in reports]
    report = merge_reports(loaded, reports)
    emit_report(
        report,
        as_json=as_json,
        report_file=report_file,
        markdown_file=markdown_file,
        junit_file=junit_file,
        badge_file=badge_file,
        sarif_file=sarif_file,
        verbose=verbose,
    )
    sys.exit(EXIT_OK if report.gate.passed else EXIT_GATE)
