"""What several commands share: option parsing helpers, the server and report options, the
target the server options describe, and the report sinks."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from mcp_replay_action.errors import ConfigError

F = TypeVar("F", bound=Callable[..., Any])


def parse_headers(pairs: Sequence[str]) -> dict[str, str]:
    """``Name: value`` options into a dict (values are secrets: never echoed, even in errors)."""
    if not pairs:
        return {}  # a stdio replay never imports the HTTP client
    from mcp_replay_action.transport.http_client import parse_header

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
    for option, path in paths.items():
        if path:
            from mcp_replay_action.host.files import check_writable  # with pathlib: only when needed

            check_writable(path, f"--{option.replace('_', '-')}")


server_option = click.option("--server", "server", metavar="CMD", help="Command that starts a stdio MCP server.")
url_option = click.option("--url", metavar="URL", help="Streamable HTTP endpoint of the MCP server.")
cwd_option = click.option("--cwd", type=click.Path(file_okay=False), help="Working directory for the server.")
env_option = click.option(
    "--env",
    "env_pairs",
    multiple=True,
    metavar="KEY=VALUE",
    help="Extra environment (repeatable); every value is redacted wherever it shows up, unless --env-public.",
)
env_public_option = click.option(
    "--env-public",
    "env_public",
    multiple=True,
    metavar="NAME",
    help="An --env variable whose value may be shown and recorded as it is (repeatable).",
)


class Size(click.ParamType):
    """A size in bytes: ``64MiB``, ``512KiB``, ``1G`` or a plain number of bytes."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        from mcp_replay_action.plan import parse_size

        try:
            return parse_size(str(value))
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


max_message_option = click.option(
    "--max-message-size",
    "max_message",
    type=Size(),
    default="128MiB",
    show_default=True,
    metavar="SIZE",
    help="The longest message read from the server (a stdio line, an HTTP body, an SSE event); "
    "a longer one is dropped and reported, never held whole.",
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
            click.option(
                "--sarif",
                "sarif_file",
                type=click.Path(dir_okay=False),
                help="Write a SARIF 2.1.0 log (breaking and definition-drift findings) for code scanning.",
            ),
            click.option("-v", "--verbose", is_flag=True, help="Show every finding in full."),
        )
    ):
        func = option(func)
    return func


def compare_options(func: F) -> F:
    """How responses are compared, for ``replay`` and ``diff`` alike (mcp-recorder's spellings,
    ``--ignore-paths`` and ``--ignore-fields``, as aliases)."""
    for option in reversed(
        (
            click.option(
                "--ignore-path",
                "--ignore-paths",
                "ignore_paths",
                multiple=True,
                metavar="PATH",
                help="Ignore a response path, e.g. result.content[].text.",
            ),
            click.option(
                "--ignore-key",
                "--ignore-fields",
                "ignore_keys",
                multiple=True,
                metavar="KEY",
                help="Ignore a key at any depth.",
            ),
            click.option(
                "--allow-reorder", is_flag=True, help="A list with the same members in another order still matches."
            ),
        )
    ):
        func = option(func)
    return func


thread_option = click.option(
    "--thread",
    "thread",
    multiple=True,
    metavar="KEY|PATH",
    help="Thread the value at this answer key (any depth) or path into later requests that quote it, "
    "whatever its length (repeatable; see docs/threading.md).",
)
no_thread_option = click.option(
    "--no-thread",
    "no_thread",
    multiple=True,
    metavar="KEY|PATH",
    help="Never thread a value found at this answer key or path (repeatable).",
)


def thread_rules(thread: Sequence[str], no_thread: Sequence[str]) -> Any:
    """The declared threading rules of ``--thread``/``--no-thread`` (``correlate.ThreadRules``)."""
    from mcp_replay_action.compare.correlate import ThreadRules

    return ThreadRules(tuple(thread), tuple(no_thread))


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


def emit_report(
    report: Any,
    *,
    as_json: bool = False,
    report_file: str | None = None,
    markdown_file: str | None = None,
    junit_file: str | None = None,
    badge_file: str | None = None,
    sarif_file: str | None = None,
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
        report,
        json_file=report_file,
        markdown_file=markdown_file,
        junit_file=junit_file,
        badge_file=badge_file,
        sarif_file=sarif_file,
    )
