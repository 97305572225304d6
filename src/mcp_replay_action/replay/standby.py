"""The confirmation pass's fresh server, started ahead when its comparison will take a while.

A failing replay starts the server a second time to tell a regression from noise. That start used
to wait until the first run was over; but when a long answer differs from its recording (a few
megabytes), the first run spends hundreds of milliseconds comparing it, while the second server,
a process of its own, could be starting on the other core. ``Standby`` holds that second server:
``warm`` starts it as such an answer's comparison begins, ``take`` hands it to the confirming run
(started, or opened then), and ``discard`` stops one no confirming run took.

Not for an answer that differs by its threaded values alone (``carry.py``: the recording with the
live values in place is the live answer): that is no reason to confirm, and an unchanged server
that mints ids must start once, even when the answer that minted one is long. Only a stdio server with no ``--setup`` is started ahead: a setup command run while the first
server still works would change the state under it, and an HTTP server's start waits for its port.
A start that fails ahead raises its error where the confirming run would have started it.
"""

from __future__ import annotations

from collections.abc import Callable

from mcp_replay_action.errors import ReplayError
from mcp_replay_action.transport import Target, Transport


class Standby:
    """The confirming run's transport: opened by ``open_transport``, started ahead when ``ahead``."""

    def __init__(self, open_transport: Callable[[], Transport], ahead: bool) -> None:
        self._open = open_transport
        self.ahead = ahead
        self._transport: Transport | None = None
        self._error: ReplayError | None = None
        self.taken = False

    @staticmethod
    def may_start_ahead(target: Target) -> bool:
        """Whether ``target``'s server may start while another instance of it is at work."""
        return not target.url and not target.setup

    def warm(self) -> None:
        """Start the server now, if it may be and has not been."""
        if not self.ahead or self._transport is not None or self.taken:
            return
        self._transport = self._open()
        try:
            self._transport.start()
        except ReplayError as exc:
            self._error = exc

    def take(self) -> tuple[Transport, Callable[[], None]]:
        """The transport for the confirming run, and what to call in place of its ``start()``."""
        self.taken = True
        if self._transport is None:
            transport = self._open()
            return transport, transport.start
        return self._transport, self._raise_start_error

    def _raise_start_error(self) -> None:
        if self._error is not None:
            raise self._error

    def discard(self) -> None:
        """Stop a server started ahead that no confirming run took (a later ``take`` opens a
        fresh one)."""
        if not self.taken and self._transport is not None:
            self._transport.close()
        self._transport, self._error, self.ahead = None, None, False
