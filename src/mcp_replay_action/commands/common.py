"""What several commands share: option parsing helpers, the server and report options (the
server's are rows of the options table, ``options.py``), and the report sinks."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import click

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.options import shared_option

if TYPE_CHECKING:
    from mcp_replay_action.compare.correlate import ThreadRules
    from mcp_replay_action.model.results import Report
    from mcp_replay_action.redact import Redactor

F = TypeVar("F", bound=Callable[..., object])


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


def make_redactor(keys: Sequence[str], patterns: Sequence[str], enabled: bool = True) -> Redactor:
    from mcp_replay_action.redact import Redactor

    return Redactor(keys=keys, patterns=patterns, defaults=enabled)


def parse_listen(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"--listen expects HOST:PORT with a port from 0 to 65535, got {value!r}")
    return host or "127.0.0.1", int(port)


def check_outputs(**paths: str | None) -> None:
    """Refuse an output file that cannot be written before any work starts (a recording must not
    be lost to a bad path at the end). Keys are option names without dashes."""
    for option, path in paths.items():
        if path:
            from mcp_replay_action.host.files import check_writable  # with pathlib: only when needed

            check_writable(path, f"--{option.replace('_', '-')}")


# The options other commands share with ``replay``: rows of the options table (``options.py``),
# with the spellings each command takes.
server_option = shared_option("server", ("--server",))
url_option = shared_option("url")
cwd_option = shared_option("cwd")
env_option = shared_option("env", ("--env",))
env_public_option = shared_option("env_public")
max_message_option = shared_option("max_message")
isolate_option = shared_option("isolate")
setup_option = shared_option("setup")
redact_option = shared_option("redact_keys")
redact_pattern_option = shared_option("redact_patterns")
thread_option = shared_option("thread")
no_thread_option = shared_option("no_thread")


def report_options(func: F) -> F:
    """The report sinks ``replay`` and ``merge`` share (console, --json and the files)."""
    for sink in reversed(
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
        func = sink(func)
    return func


def compare_options(func: F) -> F:
    """How responses are compared, for ``replay`` and ``diff`` alike (mcp-recorder's spellings,
    ``--ignore-paths`` and ``--ignore-fields``, as aliases): the table's rows."""
    for key in reversed(("ignore_paths", "ignore_keys", "allow_reorder")):
        func = shared_option(key)(func)
    return func


def thread_rules(thread: Sequence[str], no_thread: Sequence[str]) -> ThreadRules:
    """The declared threading rules of ``--thread``/``--no-thread`` (``correlate.ThreadRules``)."""
    from mcp_replay_action.compare.correlate import ThreadRules

    return ThreadRules(tuple(thread), tuple(no_thread))


def emit_report(
    report: Report,
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
