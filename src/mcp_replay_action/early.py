"""The first server of a replay, spawned as soon as the server options are parsed: a server takes
a while to start (node: a few hundred milliseconds before its first answer), and making the rest
of the plan (finding the cassettes), importing the replay engine and reading the cassette can
happen meanwhile instead of before.

Nothing else changes: the server is spawned exactly as ``replay_cassette`` would spawn it (the
same ``open_transport(plan.target)``, environment, directory and ``--isolate`` home), and a spawn
that fails raises its error where the replay would have started it, after the cassettes were
read, so a bad cassette is still reported first and a start-up failure is still redacted with its
cassette's rules. A server spawned for a replay that never happens (a bad option, no cassette
found, a bad cassette) is stopped at once and reaped.

The console script starts it sooner still, before click is imported (``launch.py``): the command
line of a plain stdio replay is read here, without click, into the same ``Target`` (``prespawn``).
click then parses the command line as always, and the replay takes that server only if click's
``Target`` is equal to it (``spawn_early``); any other outcome (a different target, a bad option,
``--help``, another command) stops it at once and the replay runs as if it had never been started.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported where a server is spawned: the console script imports this module for every
    # command (``launch.py``), and ``--help`` or ``inspect`` must not pay for the transport.
    from mcp_replay_action.errors import ServerError
    from mcp_replay_action.transport import Target, Transport
    from mcp_replay_action.transport.stdio import StdioTransport


class EarlyServer:
    """The first cassette's stdio transport, already started, and the error its start raised."""

    def __init__(self, transport: StdioTransport) -> None:
        self._transport = transport
        self.error: ServerError | None = None
        self.taken = False

    def take(self) -> tuple[Transport, Callable[[], None]]:
        """The transport, for the replay that closes it, and what to call in place of its
        ``start()``: the start has happened, so only raise what it raised."""
        self.taken = True
        return self._transport, self._raise_start_error

    def _raise_start_error(self) -> None:
        if self.error is not None:
            raise self.error

    def discard(self) -> None:
        """Stop and reap the server if no replay took it (a bad cassette): at once, without the
        grace a server gets to end by itself, since nothing was ever sent to it."""
        if not self.taken:
            self.taken = True
            self._transport.shutdown_grace = 0.0
            self._transport.close()


def spawn_early(target: Target, jobs: int = 1) -> EarlyServer | None:
    """Start the server of ``target`` that a replay's first cassette will use, or None when it
    is not started early: an HTTP target (its start waits for the port), a ``--setup`` command
    (it must not run before the cassettes are checked), or ``jobs`` > 1 (cassettes may go to
    parallel workers, each starting its own)."""
    global _PRESPAWNED
    if _PRESPAWNED is not None:
        prespawned, _PRESPAWNED = _PRESPAWNED, None
        if prespawned[0] == target and jobs == 1:
            return prespawned[1]
        prespawned[1].discard()
    if target.url or not target.command or target.setup or jobs > 1:
        return None
    return _spawn(target)


def _spawn(target: Target) -> EarlyServer:
    from mcp_replay_action.errors import ServerError
    from mcp_replay_action.transport import open_transport
    from mcp_replay_action.transport.stdio import StdioTransport

    transport = open_transport(target)
    assert isinstance(transport, StdioTransport)  # no URL: open_transport's stdio transport
    early = EarlyServer(transport)
    try:
        transport.start()
    except ServerError as exc:
        early.error = exc
    return early


# The server ``prespawn`` started, with the target it was started for, until ``spawn_early``
# hands it to the replay (click's target is equal) or ``discard_prespawned`` stops it.
_PRESPAWNED: tuple[Target, EarlyServer] | None = None

# ``replay``'s options that take no value (``tests/test_prespawn.py`` holds this to click's
# own list): every other option is read as taking one.
FLAGS = frozenset(
    {
        "--isolate",
        "--fail-on-regression",
        "--allow-reorder",
        "--confirm",
        "--no-confirm",
        "--json",
        "-v",
        "--verbose",
        "--update",
    }
)
# The options a prespawn reads; any option that would make the server start differently or not
# early at all (--url, --target, --header, --setup) means no prespawn.
_READ = {
    "--server": "server",
    "--target-stdio": "server",
    "--cwd": "cwd",
    "--env": "env_pairs",
    "--target-env": "env_pairs",
    "--timeout": "timeout",
    "--startup-timeout": "startup_timeout",
    "--max-message-size": "max_message",
    "--jobs": "jobs",
    # Outputs are checked before any server starts, as the replay command does (``check_outputs``).
    "--report": "outputs",
    "--markdown": "outputs",
    "--junit": "outputs",
    "--badge": "outputs",
}
_NOT_EARLY = frozenset({"--url", "--target", "--header", "--setup", "--help", "-h"})


def prespawn(argv: Sequence[str]) -> None:
    """Start the server of ``mcp-replay ARGV`` now when ARGV is a plain stdio replay
    (``replay`` or ``verify``, ``--server``, at most ``--cwd``, ``--env``, ``--isolate``, the
    timeouts and ``--jobs 1`` shaping it); else do nothing. Never raises for a command line
    click would refuse: that is click's to report, and the server is stopped then."""
    global _PRESPAWNED
    target = target_from_argv(argv)
    if target is not None:
        _PRESPAWNED = (target, _spawn(target))


def discard_prespawned() -> None:
    """Stop the server ``prespawn`` started if no replay took it."""
    global _PRESPAWNED
    if _PRESPAWNED is not None:
        prespawned, _PRESPAWNED = _PRESPAWNED, None
        prespawned[1].discard()


def target_from_argv(argv: Sequence[str]) -> Target | None:
    """The ``Target`` that ``replay`` would build from ``argv`` (the arguments after the program
    name), read without click; None unless it is a plain stdio replay that ``spawn_early`` would
    start, or when the command line is one click would refuse or read differently."""
    if not argv or argv[0] not in ("replay", "verify"):
        return None  # before any import: every other command goes straight to click
    from mcp_replay_action.errors import ReplayError
    from mcp_replay_action.plan import REQUEST_TIMEOUT, make_target, parse_env, parse_size, startup_timeout_for

    read: dict[str, list[str]] = {}
    flags: set[str] = set()
    tokens = iter(argv[1:])
    for token in tokens:
        if token == "--":  # the end of the options: replay takes no arguments after it
            if next(tokens, None) is not None:
                return None
            break
        name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in _NOT_EARLY or not name.startswith("-") or name == "-":
            return None  # another target, help, or an argument (replay takes none)
        if name in FLAGS:
            if eq:
                return None  # click refuses a value for a flag
            flags.add(name)
            continue
        if not name.startswith("--"):
            return None  # a short option other than -v
        if not eq:
            following = next(tokens, None)
            if following is None:
                return None
            value = following
        if name in _READ:
            read.setdefault(_READ[name], []).append(value)
    if read.get("jobs", ["1"])[-1] != "1" or "server" not in read:
        return None
    try:
        if "outputs" in read:
            from mcp_replay_action.host.files import check_writable

            for path in read["outputs"]:
                check_writable(path, "")
        timeout = float(read["timeout"][-1]) if "timeout" in read else REQUEST_TIMEOUT
        startup = float(read["startup_timeout"][-1]) if "startup_timeout" in read else None
        return make_target(
            read["server"][-1],
            None,
            {},
            read["cwd"][-1] if "cwd" in read else None,
            parse_env(read.get("env_pairs", [])),
            "--isolate" in flags,
            startup_timeout_for(timeout, startup),
            max_message=parse_size(read["max_message"][-1]) if "max_message" in read else None,
        )
    except (ValueError, ReplayError):
        return None  # click reports it
