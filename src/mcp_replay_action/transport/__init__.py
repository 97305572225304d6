"""Transports move JSON-RPC messages to and from a server. They know servers and nothing of files.

Every transport is message-oriented: ``send`` one message, ``receive`` the next message the server
sent (a response, a server-to-client request or a notification), in arrival order.

``Target`` says what to talk to (a command over stdio, or a URL optionally started by a command)
and ``open_transport(target)`` is the one place that turns it into a transport: the CLI, the
action, scenario recording and the pytest plugin all go through it.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from mcp_replay_action.model import JSONObject

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared


class Transport(Protocol):
    """What the replay engine needs from a connection to a server."""

    def start(self) -> None:
        """Start the server process and/or open the connection. Raises ServerStartError."""

    def send(self, message: JSONObject) -> None:
        """Send one JSON-RPC message (request, notification or a response to a server request).
        Raises ServerExited when the server is gone."""

    def receive(self, timeout: float, prepared: Prepared | None = None) -> JSONObject:
        """The next JSON-RPC message from the server. Raises TransportTimeout after ``timeout``
        seconds, ServerExited when the server has ended and nothing is left to read.
        ``prepared``: what the replay prepared for the answer it awaits (``prepared.py``), which a
        transport may use to read a long answer faster (``Prepared.beside``); the message is the
        same without."""

    def close(self) -> None:
        """End the session and reap every process started. Idempotent, bounded in time."""

    def diagnostics(self) -> JSONObject:
        """Facts that explain a failure: ``stderr_tail`` (str), ``exit_status`` (int|None),
        ``non_json_lines`` (int)."""


STARTUP_TIMEOUT = 30.0  # the first answer may wait for npx/uvx to fetch and start the server
CONNECT_TIMEOUT = 10.0  # a URL nobody starts for us must accept connections this soon
SETUP_TIMEOUT = 120.0  # a --setup command (copy a fixture, migrate a database) ends within this
# The longest message read from a server (a stdio line, an HTTP body, an SSE event): a server that
# sends more gets a finding naming the cap, never our memory. 2.5x the largest answer benchmarked.
MAX_MESSAGE = 128 * 1024 * 1024


def size_text(size: int) -> str:
    """``134217728`` -> ``128 MiB``: a cap as a person reads it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


def message_too_large(cap: int, what: str = "message") -> str:
    """The one-line account of a message over ``cap``, naming the option that raises it."""
    return f"the server sent a {what} longer than {size_text(cap)} (the --max-message-size cap): dropped"


@dataclass(frozen=True)
class Target:
    """The server under test: ``command`` spoken to over stdio, or ``url`` (Streamable HTTP or
    legacy SSE), started by ``command`` when both are given.

    ``command`` is an argv, or a single string split like a POSIX shell would (no expansion).
    ``env`` is added to our environment for the server (and ``setup``); ``cwd`` is where both run;
    ``isolate`` gives the server a fresh HOME and TMPDIR; ``setup`` runs to completion before each
    server start, so a stateful server starts from the recorded state; ``reset`` runs before each
    pass against a ``url`` (after ``setup``), so a server someone else started is fresh again.
    """

    command: tuple[str, ...] | str = ()
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    isolate: bool = False
    setup: tuple[str, ...] | str = ()
    reset: tuple[str, ...] | str = ()
    startup_timeout: float = STARTUP_TIMEOUT
    connect_timeout: float = CONNECT_TIMEOUT
    setup_timeout: float = SETUP_TIMEOUT
    max_message: int = MAX_MESSAGE

    @property
    def fresh_each_start(self) -> bool:
        """Whether each start meets a server as fresh as the first did: one started for it, or a
        URL whose server a ``reset`` (or ``setup``) command brings back before each pass. A second
        pass against a URL without one meets the state the first pass left."""
        return not self.url or bool(self.command or self.reset or self.setup)

    @property
    def transport(self) -> str:
        """``http`` or ``stdio``."""
        return "http" if self.url else "stdio"

    def argv(self) -> list[str]:
        """The server command as an argv (empty when the URL is started by someone else)."""
        from mcp_replay_action.transport.process import split_command

        return split_command(self.command) if self.command else []

    def describe(self) -> str:
        """The target for messages: the URL's origin (its path or query may hold a key), or the command."""
        if self.url:
            return url_origin(self.url)
        return self.command if isinstance(self.command, str) else shlex.join(self.command)


def url_origin(url: str) -> str:
    """``scheme://host[:port]``: what a message or a header may show of a URL whose path or query
    may carry a key."""
    from urllib.parse import urlsplit  # here: a stdio replay spawns its server without it

    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}"


def recorder_endpoint(url: str) -> str:
    """The MCP endpoint mcp-recorder means by a target URL (``target: URL`` in its scenarios
    file, ``verify --target URL``): ``/mcp`` appended to the path unless it already ends in
    ``/mcp`` (a trailing slash dropped first), so ``https://host`` is ``https://host/mcp``. A
    query string stays a query string (mcp-recorder would append after it)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    return urlunsplit(parts._replace(path=path if path.endswith("/mcp") else f"{path}/mcp"))


def open_transport(target: Target) -> Transport:
    """A fresh, not yet started transport to ``target``. Raises ConfigError when the target names
    neither a command nor a URL, or the command cannot be parsed."""
    from mcp_replay_action.errors import ConfigError

    if target.url:
        from mcp_replay_action.transport.http_client import HttpTransport

        return HttpTransport(
            target.url,
            headers=dict(target.headers),
            server=target.command or None,
            cwd=target.cwd,
            env=dict(target.env),
            isolate=target.isolate,
            setup=target.setup or None,
            reset=target.reset or None,
            setup_timeout=target.setup_timeout,
            connect_timeout=target.connect_timeout,
            startup_timeout=target.startup_timeout,
            max_message=target.max_message,
        )
    if not target.command:
        raise ConfigError("no server to talk to: give --server CMD (stdio) or --url URL (HTTP)")
    from mcp_replay_action.transport.stdio import StdioTransport

    return StdioTransport(
        target.command,
        cwd=target.cwd,
        env=dict(target.env),
        isolate=target.isolate,
        setup=target.setup or None,
        setup_timeout=target.setup_timeout,
        max_message=target.max_message,
    )
