"""``mcp-replay replay`` (and its alias ``verify``): replay cassettes against a server and grade it."""

from __future__ import annotations

import os
import sys
from dataclasses import replace
from typing import Any

import click

from mcp_replay_action.cli import done_writing, handle_errors, short_help
from mcp_replay_action.commands.common import F, check_outputs, emit_report, report_options
from mcp_replay_action.options import OPTIONS, from_flags, plan_from, target_from


def _replay_options(func: F) -> F:
    """Every row of the options table as a click option, in the table's order, with the report
    sinks (``report_options``) where the help has always listed them: after ``--no-thread``."""
    for row in reversed(OPTIONS):
        if row.key == "no_thread":
            func = report_options(func)
        func = row.click_option()(func)
    return func


# replay also answers to mcp-recorder's verify spellings (the table's second spellings), and
# `verify` is its alias: a CI line written for mcp-recorder runs unchanged.
@click.command(short_help=short_help("replay"))
@_replay_options
@handle_errors
def replay(
    as_json: bool,
    report_file: str | None,
    markdown_file: str | None,
    junit_file: str | None,
    badge_file: str | None,
    sarif_file: str | None,
    verbose: bool,
    **params: Any,
) -> None:
    """Replay cassettes against a new build of the server and grade it ('verify': the same, and
    without a gate option any difference fails, as mcp-recorder's verify does).

    Exit 0 when the gate passes, 1 when it fails (by default: a breaking change or a missing
    response; see --fail-on), 2 for a bad option or cassette, 3 when the server cannot be used."""
    values = from_flags(params)
    if click.get_current_context().info_name == "verify" and not (params["fail_on"] or params["min_grade"]):
        values["fail_on_regression"] = True

    check_outputs(report=report_file, markdown=markdown_file, junit=junit_file, badge=badge_file, sarif=sarif_file)
    target = target_from(values)
    from mcp_replay_action.early import spawn_early

    # The server starts as soon as it is known; the rest of the plan is made, the replay engine
    # imported and the cassette read while it does (a server no replay takes is stopped).
    early = spawn_early(target, values["jobs"])
    try:
        plan = plan_from(values, root=os.getcwd(), target=target)
        from mcp_replay_action.replay.engine import run
    except BaseException:
        if early is not None:
            early.discard()
        raise
    from mcp_replay_action.report.progress import ConsoleProgress

    # On stderr, as the cassettes finish; the report on stdout is unchanged (and --json parseable).
    progress = ConsoleProgress(sys.stderr, live=sys.stderr.isatty(), lines=len(plan.paths) > 1)
    outcome = run(plan, early, progress)
    for flag, rule in outcome.unused_rules:
        # On stderr, so --json stays parseable; a typo'd rule ignores nothing, silently, otherwise.
        click.echo(f"warning: {flag} {rule!r} matched nothing in this run", err=True)
    report = outcome.report
    if plan.mode == "check":
        report = replace(report, accept=_accept(values))
    from mcp_replay_action.cassette import cut_short_line, cut_short_note

    for path in plan.paths:
        if line := cut_short_line(path):
            click.echo(f"warning: {cut_short_note(plan.shown(path), line)}", err=True)
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
    for summary in outcome.updates:
        # With --json on stdout, these lines go to stderr so the JSON stays parseable.
        if summary.updated:
            click.echo(f"updated {summary.path}: {_count(summary.updated, 'interaction')}", err=as_json)
        if summary.kept > summary.asked:
            click.echo(
                f"not updated in {summary.path}: {_count(summary.kept - summary.asked, 'interaction')} without a"
                " live response (the recording is kept)",
                err=as_json,
            )
        if summary.asked:
            click.echo(
                f"not written to {summary.path}: {_count(summary.asked, 'new request')} to the client"
                " (what a client would answer, a replay cannot know: record that session again)",
                err=as_json,
            )
    if outcome.settled and not outcome.report.gate.passed:
        click.echo("exit 0: --update rewrote every change the gate failed on", err=as_json)
    done_writing()
    sys.exit(outcome.exit_code)


def _accept(values: dict[str, Any]) -> str:
    """This run's command with ``--update``: what the reports name to accept its changes."""
    from mcp_replay_action.accept_command import update_command

    cwd = values.get("cwd")
    return update_command(
        server=values.get("server") or (),
        url=values.get("url"),
        cassettes=values.get("cassettes") or (),
        cwd=os.path.relpath(cwd) if cwd else ".",
        env=values.get("env") or (),
        setup=values.get("setup") or (),
        reset=values.get("reset") or (),
        ignore_paths=values.get("ignore_paths") or (),
        ignore_keys=values.get("ignore_keys") or (),
        ignore_notifications=values.get("ignore_notifications") or (),
        allow_reorder=bool(values.get("allow_reorder")),
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
