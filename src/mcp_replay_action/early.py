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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Imported where a server is spawned: a replay whose server is not started early (HTTP,
    # --setup, --jobs) must not pay for the stdio transport here.
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
