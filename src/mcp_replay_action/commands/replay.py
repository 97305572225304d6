"""``mcp-replay replay`` (and its alias ``verify``): replay cassettes against a server and grade it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

from mcp_replay_action.cli import done_writing, handle_errors, short_help
from mcp_replay_action.commands.common import (
    Seconds,
    check_outputs,
    compare_options,
    cwd_option,
    emit_report,
    env_public_option,
    header_option,
    isolate_option,
    max_message_option,
    no_thread_option,
    parse_headers,
    redact_option,
    redact_pattern_option,
    report_options,
    setup_option,
    thread_option,
    thread_rules,
)
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.plan import REQUEST_TIMEOUT, make_target, parse_env


# replay also answers to mcp-recorder's verify spellings (--target-stdio, --target, --target-env,
# --ignore-fields, --ignore-paths), and `verify` is its alias: a CI line written for mcp-recorder
# runs unchanged.
@click.command(short_help=short_help("replay"))
@click.option("--server", "--target-stdio", "server", metavar="CMD", help="Command that starts a stdio MCP server.")
@click.option("--url", "url", metavar="URL", help="Streamable HTTP endpoint of the MCP server.")
@click.option(
    "--target",
    "recorder_url",
    metavar="URL",
    help="mcp-recorder's spelling, with its meaning: URL + /mcp unless it ends in /mcp.",
)
@header_option
@click.option("--cassette", "cassettes", multiple=True, required=True, help="Cassette file or glob (repeatable).")
@cwd_option
@click.option(
    "--env",
    "--target-env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Extra environment (repeatable); every value is redacted wherever it shows up, unless --env-public.",
)
@env_public_option
@isolate_option
@setup_option
@click.option("--min-grade", type=click.Choice(["A", "B", "C", "D", "F"]), help="Also fail below this grade.")
@click.option(
    "--min-coverage",
    type=click.FloatRange(0, 100),
    metavar="PCT",
    help="Also fail when fewer than PCT percent of the tools, prompts and resource templates the live"
    " server lists are called by some cassette (the uncovered ones are named).",
)
@click.option(
    "--fail-on",
    type=click.Choice(["breaking", "any", "none"]),
    help="Which changes fail the run: breaking ones and missing responses (the default), any "
    "non-cosmetic one, or none (only report).",
)
@click.option("--fail-on-regression", is_flag=True, help="The same as --fail-on any.")
@compare_options
@click.option(
    "--confirm/--no-confirm",
    default=True,
    show_default=True,
    help="When an interaction fails, replay once more against a fresh start and report what differs "
    "between the two live runs as noise (not gating).",
)
@click.option(
    "--timeout",
    type=Seconds(min=0.1, max=3600),
    default=REQUEST_TIMEOUT,
    show_default=True,
    help="Seconds per request.",
)
@click.option(
    "--startup-timeout",
    type=Seconds(min=0.1, max=3600),
    help="Seconds for the first answer (default: --timeout, at least 30).",
)
@max_message_option
@click.option(
    "--total-timeout",
    type=Seconds(min=1, max=86400),
    default=900.0,
    show_default=True,
    help="Seconds per cassette.",
)
@redact_option
@redact_pattern_option
@thread_option
@no_thread_option
@report_options
@click.option(
    "--max-slowdown",
    type=click.FloatRange(min=1.0, min_open=True, max=1e6),
    metavar="X",
    help="Flag an answer that took more than X times its recorded latency (and over 50 ms) as a latency finding.",
)
@click.option(
    "--max-growth",
    type=click.FloatRange(min=1.0, min_open=True, max=1e6),
    metavar="X",
    help="Flag an answer more than X times its recorded size in bytes (and over 1 KiB) as a size finding.",
)
@click.option(
    "--era",
    type=click.Choice(("recorded", "handshake", "stateless")),
    default="recorded",
    show_default=True,
    help="Send each cassette in this protocol era: a handshake-era recording translated to the"
    " stateless 2026-07-28 revision or the reverse, answers compared by meaning (docs/eras.md).",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Send each side-effect-free request (tools/list, resources/read, a tool annotated"
    " readOnlyHint) N times and report the median latency.",
)
@click.option(
    "--shard",
    metavar="I/N",
    help="Replay only shard I of N: a deterministic share of the cassettes, balanced by interaction"
    " count (combine the shards' --report files with 'mcp-replay merge').",
)
@click.option(
    "--jobs",
    default="1",
    metavar="N|auto",
    callback=lambda _ctx, _param, value: _jobs(value),
    help="Replay N cassettes at once, each with its own server (auto: one per core); safe only when"
    " no two servers share state (files, ports, a database).  [default: 1]",
)
@click.option(
    "--update",
    is_flag=True,
    help="Intentional change: rewrite each cassette's changed responses with the live ones (redacted; "
    "a request with no live response keeps its recording). Exits 0 once every change is rewritten.",
)
@handle_errors
def replay(
    server: str | None,
    setup: str | None,
    url: str | None,
    recorder_url: str | None,
    headers: tuple[str, ...],
    cassettes: tuple[str, ...],
    cwd: str | None,
    env_pairs: tuple[str, ...],
    env_public: tuple[str, ...],
    isolate: bool,
    min_grade: str | None,
    min_coverage: float | None,
    fail_on: str | None,
    fail_on_regression: bool,
    ignore_paths: tuple[str, ...],
    ignore_keys: tuple[str, ...],
    allow_reorder: bool,
    confirm: bool,
    timeout: float,
    startup_timeout: float | None,
    max_message: int,
    total_timeout: float,
    redact_keys: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    thread: tuple[str, ...],
    no_thread: tuple[str, ...],
    as_json: bool,
    report_file: str | None,
    markdown_file: str | None,
    junit_file: str | None,
    badge_file: str | None,
    sarif_file: str | None,
    verbose: bool,
    max_slowdown: float | None,
    max_growth: float | None,
    era: str,
    repeat: int,
    shard: str | None,
    jobs: int,
    update: bool,
) -> None:
    """Replay cassettes against a new build of the server and grade it ('verify': the same, and
    without a gate option any difference fails, as mcp-recorder's verify does).

    Exit 0 when the gate passes, 1 when it fails (by default: a breaking change or a missing
    response; see --fail-on), 2 for a bad option or cassette, 3 when the server cannot be used."""
    context = click.get_current_context()
    params = dict(context.params)
    if context.info_name == "verify" and not (params.get("fail_on") or params.get("min_grade")):
        params["fail_on_regression"] = True

    check_outputs(report=report_file, markdown=markdown_file, junit=junit_file, badge=badge_file, sarif=sarif_file)
    target = replay_target(params)
    from mcp_replay_action.early import spawn_early

    # The server starts as soon as it is known; the rest of the plan is made, the replay engine
    # imported and the cassette read while it does (a server no replay takes is stopped).
    early = spawn_early(target, jobs)
    try:
        plan = replay_plan(params, target=target)
        from mcp_replay_action.replay.engine import run
    except BaseException:
        if early is not None:
            early.discard()
        raise
    from mcp_replay_action.report.progress import ConsoleProgress

    # On stderr, as the cassettes finish; the report on stdout is unchanged (and --json parseable).
    progress = ConsoleProgress(sys.stderr, live=sys.stderr.isatty(), lines=len(plan.paths) > 1)
    outcome = run(plan, early, progress)
    warn_unused_rules(plan.compare, plan.paths)
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
    for summary in outcome.updates:
        # With --json on stdout, these lines go to stderr so the JSON stays parseable.
        if summary.updated:
            click.echo(f"updated {summary.path}: {_count(summary.updated, 'interaction')}", err=as_json)
        if summary.kept:
            click.echo(
                f"not updated in {summary.path}: {_count(summary.kept, 'interaction')} without a live response"
                " (the recording is kept)",
                err=as_json,
            )
    if outcome.settled and not outcome.report.gate.passed:
        click.echo("exit 0: --update rewrote every change the gate failed on", err=as_json)
    done_writing()
    sys.exit(outcome.exit_code)


def _jobs(value: str) -> int:
    from mcp_replay_action.plan import parse_jobs

    try:
        return parse_jobs(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def replay_target(params: Mapping[str, Any]) -> Any:
    """The ``Target`` the ``replay`` command's server options (``params``) describe."""
    from mcp_replay_action.plan import startup_timeout_for
    from mcp_replay_action.transport import recorder_endpoint

    url = params.get("url")
    if params.get("recorder_url"):
        if url:
            raise click.UsageError("give --url or --target, not both")
        url = recorder_endpoint(params["recorder_url"])
    return make_target(
        params.get("server"),
        url,
        parse_headers(params.get("headers") or ()),
        params.get("cwd"),
        parse_env(params.get("env_pairs") or ()),
        bool(params.get("isolate")),
        startup_timeout_for(params["timeout"], params.get("startup_timeout")),
        setup=params.get("setup"),
        max_message=params.get("max_message"),
    )


def replay_plan(params: Mapping[str, Any], root: str | None = None, target: Any = None) -> Any:
    """The ``Plan`` the ``replay`` command's parsed options (``params``) describe, for
    ``target`` (default: ``replay_target(params)``); cassette patterns are resolved against
    ``root`` (default: the working directory)."""
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.host.discovery import find_cassettes
    from mcp_replay_action.model.gate import GatePolicy, fail_on_from_flags
    from mcp_replay_action.plan import Plan

    root = root or os.getcwd()
    target = target or replay_target(params)
    paths = tuple(find_cassettes(params["cassettes"], root))
    if params.get("shard"):
        from mcp_replay_action.replay.shard import parse_shard, share

        paths = share(paths, *parse_shard(params["shard"]))
    return Plan(
        paths=paths,
        target=target,
        compare=CompareOptions(
            ignore_paths=params.get("ignore_paths") or (),
            ignore_keys=params.get("ignore_keys") or (),
            allow_reorder=bool(params.get("allow_reorder")),
            budget=params["timeout"],  # a comparison has the request's time
        ),
        gate=GatePolicy(
            fail_on=fail_on_from_flags(params.get("fail_on"), bool(params.get("fail_on_regression"))),
            min_grade=params.get("min_grade"),
            min_coverage=params.get("min_coverage"),
        ),
        mode="update" if params.get("update") else "check",
        timeout=params["timeout"],
        total_timeout=params["total_timeout"],
        redact_keys=tuple(params.get("redact_keys") or ()),
        redact_patterns=tuple(params.get("redact_patterns") or ()),
        public_env=tuple(params.get("env_public") or ()),
        root=root,
        jobs=params.get("jobs") or 1,
        max_slowdown=params.get("max_slowdown"),
        max_growth=params.get("max_growth"),
        era=_era(params),
        repeat=params.get("repeat") or 1,
        confirm=bool(params.get("confirm", True)),
        **_threading(params),
    )


def _era(params: Mapping[str, Any]) -> str:
    """``--era``; an update keeps each cassette's own era, so it cannot send another one."""
    era = str(params.get("era") or "recorded")
    if era != "recorded" and params.get("update"):
        raise ConfigError(f"--era {era} cannot be combined with --update: re-record the cassette in that era")
    return era


def _threading(params: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """``--thread`` / ``--no-thread``, checked now (a rule that cannot be read is a usage error
    before any server starts)."""
    thread, no_thread = tuple(params.get("thread") or ()), tuple(params.get("no_thread") or ())
    if thread or no_thread:
        thread_rules(thread, no_thread)
    return {"thread": thread, "no_thread": no_thread}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def warn_unused_rules(options: Any, paths: Sequence[str]) -> None:
    """Name every --ignore-path / --ignore-key that matched nothing in this run (a typo ignores
    nothing, silently, otherwise). On stderr, so --json stays parseable."""
    if not (options.ignore_paths or options.ignore_keys):
        return  # no rule to warn about, and no need to import the normaliser to say so
    from mcp_replay_action.cassette import load
    from mcp_replay_action.compare.normalize import normalize, unused_rules

    # Identical answers skip normalisation: a rule that fits the recording is not unused. The
    # cassettes are read a line at a time, and only until every rule has matched something.
    for path in paths:
        if not unused_rules(options):
            break
        for inter in load(path, stream=True).interactions:
            normalize(inter.response, options)
            if not unused_rules(options):
                break
    for flag, name in unused_rules(options):
        click.echo(f"warning: {flag} {name!r} matched nothing in this run", err=True)
