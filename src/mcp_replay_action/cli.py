"""The ``mcp-replay`` command line. Commands are thin: parse options, call one library function,
render the result. Errors become a one-line message and an exit code here and nowhere else.

Each command lives in its own module under ``commands/``, imported only when that command runs
or shows its own help (click's lazy-loading pattern): ``mcp-replay --help`` lists the commands
from ``COMMANDS`` without building any of them, and ``replay`` builds only itself."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import click

from mcp_replay_action import __version__

if TYPE_CHECKING:
    from mcp_replay_action.errors import ServerError

F = TypeVar("F", bound=Callable[..., object])


def _fail(message: str, code: int, detail: Sequence[str] = ()) -> None:
    from mcp_replay_action.values.safe import no_workflow_commands

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
    """Turn every typed error into one line on stderr and its exit code; and any other failure
    (a bug of ours, a limit no check foresaw) into one line and exit 3, never a traceback and
    never exit 1, which says a gate failed."""

    @functools.wraps(func)
    def wrapper(*args: object, **kwargs: object) -> object:
        from mcp_replay_action.errors import EXIT_INFRA, EXIT_INTERRUPTED, ReplayError, ServerError

        try:
            return func(*args, **kwargs)
        except ServerError as exc:
            shown = shown_server_error(exc)
            _fail(shown.one_line(), shown.exit_code, stderr_detail(shown))
        except ReplayError as exc:
            _fail(exc.one_line(), exc.exit_code)
        except KeyboardInterrupt:
            _fail("interrupted", EXIT_INTERRUPTED)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise  # click's own (a usage error, exit 2; an exit asked for), said its way
        except Exception as exc:
            _fail(internal_error(exc), EXIT_INFRA)
        return None

    return wrapper  # type: ignore[return-value]


def internal_error(exc: Exception) -> str:
    """The line an unexpected error is told in: its type and text, which may quote a server, so
    through the built-in redaction rules, and cut short."""
    from mcp_replay_action.redact import Redactor

    text = " ".join(str(Redactor().apply(str(exc))).split())[:300]
    return f"internal error: {type(exc).__name__}" + (f": {text}" if text else "") + " (please report it)"


# Every command: its module under ``mcp_replay_action.commands``, the name it has there, and its
# short help, a whole sentence that fits one line of an 80-column listing: all ``mcp-replay
# --help`` lists of it (click would cut a first paragraph mid-sentence; a short help it shows
# whole, wrapped on a narrower terminal). Each command takes its
# ``short_help`` from here (``short_help(name)``), and ``tests/test_help_output.py`` checks every
# help page against what it was before the commands were split out.
COMMANDS: dict[str, tuple[str, str, str]] = {
    "calibrate": ("calibrate", "calibrate", "Learn a server's noise and store it in the cassette."),
    "convert": ("convert", "convert", "Convert between mcp-replay and mcp-recorder cassettes."),
    "demo": ("demo", "demo", "Record, then replay against a healthy and a broken build."),
    "compare-builds": (
        "compare_builds",
        "compare_builds",
        "Explore one build and replay that against another one.",
    ),
    "diff": ("diff", "diff", "Compare two cassettes' responses, without a server."),
    "explore": ("explore", "explore", "Write a cassette by exploring a server: no client needed."),
    "inspect": ("inspection", "inspect", "Summarise a cassette: server, era, interactions."),
    "merge": ("merge", "merge", "Combine the reports of sharded replays into one."),
    "record": ("record", "record", "Record a session through a transparent proxy."),
    "record-scenarios": (
        "record_scenarios",
        "record_scenarios_cmd",
        "Record cassettes from a scenarios.yml, no client code.",
    ),
    "replay": ("replay", "replay", "Replay cassettes against a server and grade it."),
    "serve": ("serve", "serve", "Answer MCP clients from a cassette: a mock server."),
    # mcp-recorder's name for replay: the same command, listed with what it does differently.
    "verify": ("replay", "replay", "replay, mcp-recorder's way: any difference fails."),
}


def short_help(name: str) -> str:
    """The one-sentence summary ``mcp-replay --help`` lists for command ``name``."""
    return COMMANDS[name][2]


class _Commands(Mapping[str, click.Command]):
    """``Group.commands`` for ``main``: the names are known up front (so listing them and
    suggesting one for a typo load nothing); a command is built when it is first looked up."""

    def __getitem__(self, name: str) -> click.Command:
        import importlib

        module, attribute, _ = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(f"mcp_replay_action.commands.{module}"), attribute)
        return command

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class _Context(click.Context):
    """click's context with the help's width worked out here, once, for the whole command line
    (a subcommand's context inherits it): left to click, formatting a help page or a usage error
    imports ``shutil`` (with zlib, bz2 and lzma) to call ``get_terminal_size``. The width is
    click's own formula (the terminal's columns, at most ``max_content_width``, less 2, at least
    50), and click's test runner's forced width still wins; ``tests/test_help_output.py`` holds
    the help at several widths, from ``COLUMNS`` and from a pseudo-terminal's size."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.terminal_width is None and self.parent is None and click.formatting.FORCED_WIDTH is None:
            self.terminal_width = max(min(terminal_columns(), self.max_content_width or 80) - 2, 50)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, without importing shutil: ``COLUMNS`` when it is
    a positive number, else the width of the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # no stdout, closed, or not a terminal
            columns = 0
    return columns or 80


class _Main(click.Group):
    context_class = _Context

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list, from each command's short help: click's own listing of stand-ins that
        have only that short help, so it is laid out exactly as it would be for the command."""
        listed = {name: click.Command(name, short_help=summary) for name, (_, _, summary) in COMMANDS.items()}
        click.Group(commands=listed).format_commands(ctx, formatter)


@click.group(
    cls=_Main,
    commands=_Commands(),  # type: ignore[arg-type]  # read-only: nothing adds a command at run time
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="mcp-replay")
def main() -> None:
    """Record MCP traffic once; replay it against every new build to catch regressions."""


def done_writing() -> None:
    """Called by ``replay`` once everything it writes is written and closed: what it built is
    garbage from here on, and ``entry`` lets the process end without collecting it."""
    global _DONE_WRITING
    _DONE_WRITING = True


_DONE_WRITING = False


def entry() -> None:
    """The console script and ``python -m mcp_replay_action``: ``main``, and after a replay, every
    object left is moved out of the cyclic collector's reach (``gc.freeze``) before the usual
    exit. The replay runs with the collector held off its data (``gcpause``), so the exit's last
    collection would walk and free all of it, after the last byte of output: 70,000 objects in
    ~0.5 s after a 10,000-call replay, ~50 ms after a 30-call one (2 loaded cores). The memory
    is the system's to reclaim as the process ends; exit handlers, flushes and thread joins run
    as in any exit."""
    try:
        main()
    except SystemExit:
        if _DONE_WRITING:
            import gc

            gc.freeze()
        raise


if __name__ == "__main__":  # pragma: no cover  (last: every helper above is defined)
    main()
