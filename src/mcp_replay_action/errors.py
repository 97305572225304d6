"""Typed errors. Each is raised where it is detected and turned into a one-line message and an
exit code in exactly one place: the CLI (``cli.py``) or the action entrypoint."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TypedDict

# Exit codes shared by the CLI and the action.
EXIT_OK = 0
EXIT_GATE = 1  # a regression with --fail-on-regression, or a grade below --min-grade
EXIT_USAGE = 2  # usage, configuration or cassette error
EXIT_INFRA = 3  # infrastructure: server not found, never answered, cannot connect
EXIT_INTERRUPTED = 130  # a stop signal (Ctrl-C, SIGTERM, SIGHUP) ended the command early


class ReplayError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code = EXIT_USAGE

    def one_line(self) -> str:
        """The message as one line, as the CLI prints it."""
        return " ".join(str(self).split())


class ConfigError(ReplayError):
    """A bad option, input or configuration value."""


class Interrupted(ReplayError):
    """A stop signal (Ctrl-C, SIGTERM, SIGHUP) ended a command before it was done."""

    exit_code = EXIT_INTERRUPTED


class CassetteError(ReplayError):
    """A cassette that cannot be read or written; names ``file:line``."""

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}:{line}" if line else self.path
        super().__init__(f"{where}: {reason}")


class ServerError(ReplayError):
    """The server under test could not be used (start, crash, hang, bad output)."""

    exit_code = EXIT_INFRA

    def __init__(self, message: str, *, stderr_tail: str = "", exit_status: int | None = None) -> None:
        self.stderr_tail = stderr_tail
        self.exit_status = exit_status
        super().__init__(message)

    def redacted(self, scrub: Callable[[str], str]) -> ServerError:
        """A copy of the same type whose message and stderr tail (the server's own words) have
        passed ``scrub``: the redaction of the cassette or scenario the error belongs to."""
        clean = copy.copy(self)
        clean.args = tuple(scrub(a) if isinstance(a, str) else a for a in self.args)
        clean.stderr_tail = scrub(self.stderr_tail)
        return clean


class Diagnostics(TypedDict, total=False):
    """What a ``ServerError`` tells of the server besides its message, as its keyword arguments
    (``ServerError(message, **diagnostics)``)."""

    stderr_tail: str
    exit_status: int | None


class ServerStartError(ServerError):
    """The server command was not found, or it exited / never answered during start-up."""


class ServerExited(ServerError):
    """The server process ended (or the connection closed) while a response was awaited."""


class CommandNotFound(ServerStartError):
    """The server's program is not on PATH (or its path does not exist): the spawn's ENOENT, which
    leaves no stderr to read. ``program`` is the command's first word."""

    def __init__(self, program: str) -> None:
        self.program = program
        super().__init__(f"server command not found: {program}")

    def redacted(self, scrub: Callable[[str], str]) -> ServerError:
        clean = super().redacted(scrub)
        assert isinstance(clean, CommandNotFound)  # a copy of this one
        clean.program = scrub(self.program)  # what install_advice names, redacted like the message
        return clean


class MessageTooLarge(ServerExited):
    """The server sent a message longer than the cap (``--max-message-size``): what it sent is
    dropped, and it is read no further (as good as gone)."""


class MessageTooDeep(ServerError):
    """The server sent a message nested too deeply to read (past Python's recursion limit): it is
    dropped, and what follows it is read on. ``depth``: how deep it was."""

    def __init__(self, message: str, *, depth: int = 0, stderr_tail: str = "", exit_status: int | None = None) -> None:
        self.depth = depth
        super().__init__(message, stderr_tail=stderr_tail, exit_status=exit_status)


class ServerExitedAtStart(ServerStartError, ServerExited):
    """The server exited before it sent a single message: a start-up failure, whichever call saw it."""


class TransportTimeout(ServerError):
    """No message arrived within the bounded timeout."""
