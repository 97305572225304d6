"""The ``mcp-replay`` command line. Commands are thin: parse options, call one library function,
render the result. Errors become a one-line message and an exit code here and nowhere else."""

from __future__ import annotations

import functools
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import click

from mcp_replay_action import __version__
from mcp_replay_action.errors import (
    EXIT_GATE,
    EXIT_OK,
    EXIT_USAGE,
    ConfigError,
    ReplayError,
    ServerError,
    ServerStartError,
)

F = TypeVar("F", bound=Callable[..., Any])


def _fail(message: str, code: int, detail: Sequence[str] = ()) -> None:
    from mcp_replay_action.report.safe import no_workflow_commands

    # The message may quote a server or a cassette; a CI log must not obey it ("##[error]").
    click.echo(no_workflow_commands(f"mcp-replay: error: {' '.join(message.split())}"), err=True)
    for line in detail:
        click.echo(no_workflow_commands(line), err=True)
    sys.exit(code)


STDERR_LINES = 20


def stderr_detail(exc: ServerError) -> list[str]:
    """The server's last stderr lines under the one-line error: a start-up failure's last line is
    often only the runtime's banner (``Node.js v20...``), its cause a few lines up."""
    lines = [line.rstrip() for line in exc.stderr_tail.splitlines() if line.strip()][-STDERR_LINES:]
    if len(lines) < 2:
        return []  # the message already ends with it
    return ["server stderr (last lines):", *("  " + line for line in lines)]


def shown_server_error(exc: ServerError) -> ServerError:
    """``exc`` as the CLI prints it: message and stderr tail through the built-in redaction rules.

    Each command already redacts its server's words with the rules of the cassette or scenario
    they belong to (replay and calibrate in ``replay_cassette``, record, record-scenarios); this
    is only a safety net for a path that did not. It cannot count a hit twice (this redactor's
    counts go nowhere; a header's were counted when its cassette was redacted) and it does not
    change text a redactor already scrubbed: a placeholder is never redacted again
    (``tests/test_server_text_redaction.py``)."""
    from mcp_replay_action.redact import Redactor

    redactor = Redactor()
    return exc.redacted(lambda text: str(redactor.apply(text)))


def handle_errors(func: F) -> F:
    """Turn every typed error into one line on stderr and its exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ServerError as exc:
            shown = shown_server_error(exc)
            _fail(shown.one_line(), shown.exit_code, stderr_detail(shown))
        except ReplayError as exc:
            _fail(exc.one_line(), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", 130)
        return None

    return wrapper  # type: ignore[return-value]


def parse_env(pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` options into a dict; a pair without ``=`` is a usage error."""
    env: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"--env expects KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def parse_headers(pairs: Sequence[str]) -> dict[str, str]:
    """``Name: value`` options into a dict (values are secrets: never echoed, even in errors)."""
    if not pairs:
        return {}  # a stdio replay never imports the HTTP client
    from mcp_replay_action.transport.http import parse_header

    return dict(parse_header(pair) for pair in pairs)


def env_values(names: Sequence[str], extra: dict[str, str]) -> dict[str, str]:
    """The values ``--redact-env`` names, from ``--env`` first, then our environment. A name
    that is unset, empty or too short to redact safely gets a warning on stderr (stdout may be
    the MCP channel), never an error."""
    from mcp_replay_action.redact import MIN_VALUE_LENGTH

    found: dict[str, str] = {}
    for name in dict.fromkeys(names):
        value = extra.get(name, os.environ.get(name, ""))
        if len(value) < MIN_VALUE_LENGTH:
            why = "is not set" if not value else f"is shorter than {MIN_VALUE_LENGTH} characters"
            click.echo(f"mcp-replay: warning: --redact-env {name} {why}; nothing to redact", err=True)
            continue
        found[name] = value
    return found


def make_redactor(keys: Sequence[str], patterns: Sequence[str], enabled: bool = True) -> Any:
    from mcp_replay_action.redact import Redactor

    return Redactor(keys=keys, patterns=patterns, defaults=enabled)


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"--listen expects HOST:PORT with a port from 0 to 65535, got {value!r}")
    return host or "127.0.0.1", int(port)


class Seconds(click.FloatRange):
    """A number of seconds in a range; ``nan`` (which every range check lets through) and
    ``inf`` are refused."""

    name = "seconds"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds", param, ctx)
        return seconds


def check_outputs(**paths: str | None) -> None:
    """Refuse an output file that cannot be written before any work starts (a recording must not
    be lost to a bad path at the end). Keys are option names without dashes."""
    from mcp_replay_action.files import check_writable

    for option, path in paths.items():
        if path:
            check_writable(path, f"--{option.replace('_', '-')}")


server_option = click.option("--server", "server", metavar="CMD", help="Command that starts a stdio MCP server.")
url_option = click.option("--url", metavar="URL", help="Streamable HTTP endpoint of the MCP server.")
cwd_option = click.option("--cwd", type=click.Path(file_okay=False), help="Working directory for the server.")
env_option = click.option(
    "--env", "env_pairs", multiple=True, metavar="KEY=VALUE", help="Extra environment (repeatable)."
)


def report_options(func: F) -> F:
    """The report sinks ``replay`` and ``merge`` share (console, --json and the files)."""
    for option in reversed(
        (
            click.option("--json", "as_json", is_flag=True, help="Print the full JSON report on stdout."),
            click.option(
                "--report", "report_file", type=click.Path(dir_okay=False), help="Write the JSON report to a file."
            ),
            click.option(
                "--markdown", "markdown_file", type=click.Path(dir_okay=False), help="Write a Markdown report."
            ),
            click.option("--junit", "junit_file", type=click.Path(dir_okay=False), help="Write a JUnit XML report."),
            click.option(
                "--badge", "badge_file", type=click.Path(dir_okay=False), help="Write a shields.io endpoint JSON badge."
            ),
            click.option("-v", "--verbose", is_flag=True, help="Show every finding in full."),
        )
    ):
        func = option(func)
    return func


isolate_option = click.option("--isolate", is_flag=True, help="Give the server a fresh temporary HOME and TMPDIR.")
setup_option = click.option(
    "--setup",
    metavar="CMD",
    help="Run CMD (split like the server command; in its directory and environment) to completion before "
    "each server start, e.g. to reset a memory file or a database to the recorded state.",
)
header_option = click.option(
    "--header", "headers", multiple=True, metavar="'Name: value'", help="HTTP header (repeatable; never printed)."
)
redact_option = click.option(
    "--redact", "redact_keys", multiple=True, metavar="KEY", help="Also redact values under KEY."
)
redact_pattern_option = click.option(
    "--redact-pattern", "redact_patterns", multiple=True, metavar="REGEX", help="Also redact matches of REGEX."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="mcp-replay")
def main() -> None:
    """Record MCP traffic once; replay it against every new build to catch regressions."""


@main.command()
@server_option
@url_option
@click.option("--listen", metavar="HOST:PORT", help="With --url: where the recording HTTP proxy listens.")
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette file to write.")
@cwd_option
@env_option
@isolate_option
@redact_option
@redact_pattern_option
@click.option("--no-default-redaction", is_flag=True, help="Only redact what --redact/--redact-pattern name.")
@click.option(
    "--redact-env",
    "redact_env",
    multiple=True,
    metavar="VAR",
    help="Redact the value of environment variable VAR wherever it appears (repeatable; the header keeps "
    "only the name, and replay redacts the live value the same way).",
)
@handle_errors
def record(
    server: str | None,
    url: str | None,
    listen: str | None,
    cassette: str,
    cwd: str | None,
    env_pairs: tuple[str, ...],
    isolate: bool,
    redact_keys: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    no_default_redaction: bool,
    redact_env: tuple[str, ...],
) -> None:
    """Record a session: a transparent proxy between a real client and a real server.

    stdio: point your MCP client at `mcp-replay record --server CMD --cassette FILE` in place of
    the server. HTTP: `--url UPSTREAM --listen 127.0.0.1:PORT` and point the client at the proxy.
    """
    check_outputs(cassette=cassette)
    if listen:
        parse_listen(listen)
    redactor = make_redactor(redact_keys, redact_patterns, not no_default_redaction)
    if redact_env:
        redactor = redactor.with_env_values(env_values(redact_env, parse_env(env_pairs)))
    if url:
        from mcp_replay_action.record_http import record_http

        host, port = parse_listen(listen or "127.0.0.1:5555")
        record_http(url, host, port, cassette, redactor=redactor)
        return
    if not server:
        raise ConfigError("record needs --server CMD (stdio) or --url URL (HTTP)")
    from mcp_replay_action.record import record_stdio

    summary = record_stdio(server, cassette, redactor=redactor, cwd=cwd, env=parse_env(env_pairs), isolate=isolate)
    if not summary.saved and summary.server_exit_status not in (None, 0):
        tail = [line for line in summary.stderr_tail.splitlines() if line.strip()]
        status = summary.server_exit_status
        raise ServerStartError(
            f"the server exited (status {status}) before anything was recorded"
            # The server's own words pass the recording's redactor, like everything it recorded.
            + (f"; stderr: {redactor.apply(tail[-1][:200])}" if tail else ""),
            stderr_tail=str(redactor.apply(summary.stderr_tail)),
        )


# replay also answers to mcp-recorder's verify spellings (--target-stdio, --target, --target-env,
# --ignore-fields, --ignore-paths), and `verify` is its alias: a CI line written for mcp-recorder
# runs unchanged.
@main.command()
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
    "--env", "--target-env", "env_pairs", multiple=True, metavar="KEY=VALUE", help="Extra environment (repeatable)."
)
@isolate_option
@setup_option
@click.option("--min-grade", type=click.Choice(["A", "B", "C", "D", "F"]), help="Also fail below this grade.")
@click.option(
    "--fail-on",
    type=click.Choice(["breaking", "any", "none"]),
    help="Which changes fail the run: breaking ones and missing responses (the default), any "
    "non-cosmetic one, or none (only report).",
)
@click.option("--fail-on-regression", is_flag=True, help="The same as --fail-on any.")
@click.option(
    "--ignore-path",
    "--ignore-paths",
    "ignore_paths",
    multiple=True,
    metavar="PATH",
    help="Ignore a response path, e.g. result.content[].text.",
)
@click.option(
    "--ignore-key", "--ignore-fields", "ignore_keys", multiple=True, metavar="KEY", help="Ignore a key at any depth."
)
@click.option("--allow-reorder", is_flag=True, help="A list with the same members in another order still matches.")
@click.option(
    "--confirm/--no-confirm",
    default=True,
    show_default=True,
    help="When an interaction fails, replay once more against a fresh start and report what differs "
    "between the two live runs as noise (not gating).",
)
@click.option(
    "--timeout", type=Seconds(min=0.1, max=3600), default=30.0, show_default=True, help="Seconds per request."
)
@click.option(
    "--startup-timeout",
    type=Seconds(min=0.1, max=3600),
    help="Seconds for the first answer (default: --timeout, at least 30).",
)
@click.option(
    "--total-timeout",
    type=Seconds(min=1, max=86400),
    default=900.0,
    show_default=True,
    help="Seconds per cassette.",
)
@redact_option
@redact_pattern_option
@report_options
@click.option(
    "--max-slowdown",
    type=click.FloatRange(min=1.0, min_open=True, max=1e6),
    metavar="X",
    help="Flag an answer that took more than X times its recorded latency (and over 50 ms) as a latency finding.",
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
    " count (combine the shards' --report files with `mcp-replay merge`).",
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
    isolate: bool,
    min_grade: str | None,
    fail_on: str | None,
    fail_on_regression: bool,
    ignore_paths: tuple[str, ...],
    ignore_keys: tuple[str, ...],
    allow_reorder: bool,
    confirm: bool,
    timeout: float,
    startup_timeout: float | None,
    total_timeout: float,
    redact_keys: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    as_json: bool,
    report_file: str | None,
    markdown_file: str | None,
    junit_file: str | None,
    badge_file: str | None,
    verbose: bool,
    max_slowdown: float | None,
    repeat: int,
    shard: str | None,
    jobs: int,
    update: bool,
) -> None:
    """Replay cassettes against a new build of the server and grade it (``verify``: the same, and
    without a gate option any difference fails, as mcp-recorder's verify does).

    Exit 0 when the gate passes, 1 when it fails (by default: a breaking change or a missing
    response; see --fail-on), 2 for a bad option or cassette, 3 when the server cannot be used."""
    from mcp_replay_action.replay import run

    context = click.get_current_context()
    params = dict(context.params)
    if context.info_name == "verify" and not (params.get("fail_on") or params.get("min_grade")):
        params["fail_on_regression"] = True

    check_outputs(report=report_file, markdown=markdown_file, junit=junit_file, badge=badge_file)
    plan = replay_plan(params)
    outcome = run(plan)
    warn_unused_rules(plan.compare, plan.paths)
    emit_report(
        outcome.report,
        as_json=as_json,
        report_file=report_file,
        markdown_file=markdown_file,
        junit_file=junit_file,
        badge_file=badge_file,
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
    global _DONE_WRITING
    _DONE_WRITING = True
    sys.exit(outcome.exit_code)


def _jobs(value: str) -> int:
    from mcp_replay_action.plan import parse_jobs

    try:
        return parse_jobs(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def replay_plan(params: Mapping[str, Any], root: str | None = None) -> Any:
    """The ``Plan`` the ``replay`` command's parsed options (``params``) describe; cassette
    patterns are resolved against ``root`` (default: the working directory)."""
    from mcp_replay_action.compare_options import CompareOptions
    from mcp_replay_action.discovery import find_cassettes
    from mcp_replay_action.gate import GatePolicy, fail_on_from_flags
    from mcp_replay_action.plan import Plan, startup_timeout_for
    from mcp_replay_action.transport import recorder_endpoint

    root = root or os.getcwd()
    url = params.get("url")
    if params.get("recorder_url"):
        if url:
            raise click.UsageError("give --url or --target, not both")
        url = recorder_endpoint(params["recorder_url"])
    target = make_target(
        params.get("server"),
        url,
        parse_headers(params.get("headers") or ()),
        params.get("cwd"),
        parse_env(params.get("env_pairs") or ()),
        bool(params.get("isolate")),
        startup_timeout_for(params["timeout"], params.get("startup_timeout")),
        setup=params.get("setup"),
    )
    paths = tuple(find_cassettes(params["cassettes"], root))
    if params.get("shard"):
        from mcp_replay_action.shard import parse_shard, share

        paths = share(paths, *parse_shard(params["shard"]))
    return Plan(
        paths=paths,
        target=target,
        compare=CompareOptions(
            ignore_paths=params.get("ignore_paths") or (),
            ignore_keys=params.get("ignore_keys") or (),
            allow_reorder=bool(params.get("allow_reorder")),
        ),
        gate=GatePolicy(
            fail_on=fail_on_from_flags(params.get("fail_on"), bool(params.get("fail_on_regression"))),
            min_grade=params.get("min_grade"),
        ),
        mode="update" if params.get("update") else "check",
        timeout=params["timeout"],
        total_timeout=params["total_timeout"],
        redact_keys=tuple(params.get("redact_keys") or ()),
        redact_patterns=tuple(params.get("redact_patterns") or ()),
        root=root,
        jobs=params.get("jobs") or 1,
        max_slowdown=params.get("max_slowdown"),
        repeat=params.get("repeat") or 1,
        confirm=bool(params.get("confirm", True)),
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def make_target(
    server: str | None,
    url: str | None,
    headers: dict[str, str],
    cwd: str | None,
    env: dict[str, str],
    isolate: bool,
    startup_timeout: float = 30.0,
    *,
    setup: str | None = None,
    command: str = "replay",
) -> Any:
    """The ``Target`` the server options describe (``open_transport`` turns it into a transport)."""
    from mcp_replay_action.transport import Target
    from mcp_replay_action.transport.process import split_command

    if not url and not server:
        raise ConfigError(f"{command} needs --server CMD (stdio) or --url URL (HTTP)")
    return Target(
        command=tuple(split_command(server)) if server else (),
        url=url,
        headers=headers,
        cwd=cwd,
        env=env,
        isolate=isolate,
        setup=tuple(split_command(setup)) if setup else (),
        startup_timeout=startup_timeout,
    )


def emit_report(
    report: Any,
    *,
    as_json: bool = False,
    report_file: str | None = None,
    markdown_file: str | None = None,
    junit_file: str | None = None,
    badge_file: str | None = None,
    verbose: bool = False,
) -> None:
    """Render a finished report to the console and every requested file."""
    from mcp_replay_action.report import render
    from mcp_replay_action.report.sinks import write_files

    if as_json:
        click.echo(render(report, "json"), nl=False)
    else:
        from mcp_replay_action.report import console

        for block in console.stream(report, color=sys.stdout.isatty(), verbose=verbose):
            click.echo(block, nl=False)
    write_files(
        report, json_file=report_file, markdown_file=markdown_file, junit_file=junit_file, badge_file=badge_file
    )


main.add_command(replay, name="verify")


@main.command()
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
    verbose: bool,
) -> None:
    """Combine the JSON reports of `replay --shard i/n` runs into one report, graded and gated
    as one run over every cassette would be (exit 0 pass, 1 gate failed, 2 bad report)."""
    from mcp_replay_action.github.event import read_json_object
    from mcp_replay_action.report.json import from_dict
    from mcp_replay_action.shard import merge as merge_reports

    check_outputs(report=report_file, markdown=markdown_file, junit=junit_file, badge=badge_file)
    loaded = [from_dict(read_json_object(path, "report", 256 * 1024 * 1024), where=path) for path in reports]
    report = merge_reports(loaded, reports)
    emit_report(
        report,
        as_json=as_json,
        report_file=report_file,
        markdown_file=markdown_file,
        junit_file=junit_file,
        badge_file=badge_file,
        verbose=verbose,
    )
    sys.exit(EXIT_OK if report.gate.passed else EXIT_GATE)


@main.command()
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette to answer from.")
@click.option("--listen", metavar="HOST:PORT", help="Serve Streamable HTTP here instead of stdio.")
@click.option(
    "--match", type=click.Choice(["method_params", "sequential", "strict"]), default="method_params", show_default=True
)
@handle_errors
def serve(cassette: str, listen: str | None, match: str) -> None:
    """A mock MCP server that answers from a cassette, to test clients without the real server."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.serve import serve_http, serve_stdio

    address = parse_listen(listen) if listen else None
    loaded = load(cassette)
    if address:
        host, port = address
        serve_http(loaded, host, port, match=match)
    else:
        serve_stdio(loaded, match=match)


@main.command()
@server_option
@url_option
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette to calibrate.")
@cwd_option
@env_option
@isolate_option
@setup_option
@click.option("--runs", type=int, default=3, show_default=True, help="Fresh server starts to compare (2-20).")
@click.option("--clear", is_flag=True, help="Remove the stored noise rules instead (no server is started).")
@click.option(
    "--timeout", type=Seconds(min=0.1, max=3600), default=30.0, show_default=True, help="Seconds per request."
)
@handle_errors
def calibrate(
    server: str | None,
    url: str | None,
    cassette: str,
    cwd: str | None,
    env_pairs: tuple[str, ...],
    isolate: bool,
    setup: str | None,
    runs: int,
    clear: bool,
    timeout: float,
) -> None:
    """Learn what varies between fresh runs of the same server and store it in the cassette header
    as noise rules (paths and text patterns, with the values seen): shown by inspect, applied by
    every replay (reported, never gating), removed with --clear."""
    from mcp_replay_action import calibrate as calibration
    from mcp_replay_action.cassette import load
    from mcp_replay_action.plan import startup_timeout_for
    from mcp_replay_action.transport import open_transport

    if clear:
        calibration.store(load(cassette), [])
        click.echo(f"removed the noise rules of {cassette}")
        return
    env = parse_env(env_pairs)
    target = make_target(
        server, url, {}, cwd, env, isolate, startup_timeout_for(timeout), setup=setup, command="calibrate"
    )
    result = calibration.calibrate(
        cassette,
        lambda: open_transport(target),
        runs=runs,
        env=env,
        timeout=timeout,
        startup_timeout=target.startup_timeout,
    )
    click.echo(f"{result.path}: {len(result.rules)} noise rule(s) from {result.runs} runs (see: mcp-replay inspect)")


@main.command()
@click.argument("cassette", type=click.Path(dir_okay=False))
@handle_errors
def inspect(cassette: str) -> None:
    """Summarise a cassette: server, protocol era, interactions, redaction."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.inspect import render_summary, summarize

    click.echo(render_summary(summarize(load(cassette))))


@main.command()
@click.argument("before", type=click.Path(dir_okay=False))
@click.argument("after", type=click.Path(dir_okay=False))
@click.option("--ignore-path", "ignore_paths", multiple=True, metavar="PATH")
@click.option("--ignore-key", "ignore_keys", multiple=True, metavar="KEY")
@click.option("--allow-reorder", is_flag=True)
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
    from mcp_replay_action.compare_options import CompareOptions
    from mcp_replay_action.diff import diff_cassettes
    from mcp_replay_action.gate import GatePolicy, fail_on_from_flags

    policy = GatePolicy(fail_on=fail_on_from_flags(None if fail_on_regression else fail_on, fail_on_regression))
    report = diff_cassettes(
        load(before),
        load(after),
        CompareOptions(ignore_paths=ignore_paths, ignore_keys=ignore_keys, allow_reorder=allow_reorder),
        policy=policy,
    )
    emit_report(report, as_json=as_json)
    sys.exit(EXIT_OK if report.gate.passed else EXIT_GATE)


@main.command()
@click.argument("source", type=click.Path(dir_okay=False))
@click.argument("destination", type=click.Path(dir_okay=False))
@click.option("--to", type=click.Choice(["jsonl", "recorder-json"]), help="Output format (default: by extension).")
@handle_errors
def convert(source: str, destination: str, to: str | None) -> None:
    """Convert between mcp-replay JSONL and mcp-recorder JSON cassettes."""
    from mcp_replay_action.convert import convert_file

    convert_file(source, destination, to=to)
    click.echo(f"wrote {destination}")


@main.command("record-scenarios")
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


@main.command()
@click.option("--keep", type=click.Path(file_okay=False), help="Keep the demo cassette in this directory.")
@handle_errors
def demo(keep: str | None) -> None:
    """Record a session against a bundled sample server, then replay it against a healthy build
    and against a regressed twin whose tools/list is byte-identical."""
    from mcp_replay_action.demo import run_demo

    ok = run_demo(echo=click.echo, keep_dir=keep, color=sys.stdout.isatty())
    sys.exit(EXIT_OK if ok else EXIT_USAGE)


# Set by ``replay`` once everything it writes is written and closed, so ``entry`` may end the
# process without the interpreter's teardown.
_DONE_WRITING = False


def entry() -> None:
    """The console script and ``python -m mcp_replay_action``: ``main``, and after a replay, an
    exit that skips the interpreter's teardown (freeing a 10,000-call cassette object by object
    and clearing every module took ~0.1 s, ~20 ms after a small replay, all after the last byte
    of output). Exit handlers still run and the standard streams are flushed first; anything
    else (another command, an error, a broken pipe, a thread still running, a profiler or
    debugger that writes its findings after the program returns) exits as usual."""
    try:
        main()
    except SystemExit as exc:
        watched = sys.getprofile() is not None or sys.gettrace() is not None
        if _DONE_WRITING and not watched and (exc.code is None or isinstance(exc.code, int)):
            _exit_now(exc.code or 0)
        raise


def _exit_now(code: int) -> None:
    """``os._exit(code)`` once the exit handlers have run and stdout and stderr are flushed;
    returns (for the usual exit) when a flush fails or a non-daemon thread is still running."""
    import atexit
    import threading

    main_thread = threading.main_thread()
    if any(t.is_alive() and not t.daemon and t is not main_thread for t in threading.enumerate()):
        return  # the usual exit waits for it
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed pipe: the usual exit reports it as it always has
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


def warn_unused_rules(options: Any, paths: Sequence[str]) -> None:
    """Name every --ignore-path / --ignore-key that matched nothing in this run (a typo ignores
    nothing, silently, otherwise). On stderr, so --json stays parseable."""
    if not (options.ignore_paths or options.ignore_keys):
        return  # no rule to warn about, and no need to import the normaliser to say so
    from mcp_replay_action.cassette import load
    from mcp_replay_action.normalize import normalize, unused_rules

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


if __name__ == "__main__":  # pragma: no cover  (last: every helper above is defined)
    main()
