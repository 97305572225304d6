"""A plan: everything one replay run needs, decided before any server is spoken to.

Every edge (the CLI, the action entrypoint, the pytest plugin, calibrate, the demo) reads its
options into values of the one options table and makes its ``Plan`` with ``options.plan_from``,
then hands it to ``replay.run``; nothing downstream knows which edge built it, so an option means
the same everywhere. ``make_target`` is the one place a server's ``Target`` is built.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    # Only for the annotations: importing this module stays cheap, since the CLI imports it (for
    # --jobs) before it spawns the server, and these are built after.
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.model.gate import GatePolicy
    from mcp_replay_action.transport import Target

# check: replay and gate. update: also rewrite each cassette's changed responses with the live
# ones; exit 0 once every change is rewritten. refresh: the same rewrite, for the refresh flow:
# the change report is the product, so the exit code does not depend on the gate.
Mode = Literal["check", "update", "refresh"]
REQUEST_TIMEOUT = 30.0  # seconds each answer may take, unless --timeout says otherwise
MODES: tuple[Mode, ...] = ("check", "update", "refresh")


@dataclass(frozen=True)
class Plan:
    """One replay run: which cassettes, against what, compared how, gated how, and whether the
    cassettes are rewritten. Every wait is bounded (``target.startup_timeout`` for the first
    answer, ``timeout`` for each later one, ``total_timeout`` for a whole cassette)."""

    paths: tuple[str, ...] = ()  # absolute (``discovery.find_cassettes``)
    # The server (``replay_cassette`` alone is given its transport, and reads only the target's
    # environment and start-up timeout).
    target: Target = field(default_factory=lambda: _default_target())
    compare: CompareOptions = field(default_factory=lambda: _default_compare())
    gate: GatePolicy = field(default_factory=lambda: _default_gate())
    mode: Mode = "check"
    timeout: float = REQUEST_TIMEOUT
    total_timeout: float = 900.0
    # The user's redaction rules for live answers, on top of the defaults and of what each
    # cassette's header says ran at record time.
    redact_keys: tuple[str, ...] = ()
    redact_patterns: tuple[str, ...] = ()
    # Every value of ``target.env`` is redacted as a secret (``redact.env_secrets``) except these.
    public_env: tuple[str, ...] = ()
    # Reports name cassettes relative to this directory (the CLI's working directory, the
    # action's workspace), as people and GitHub annotations know them.
    root: str = "."
    # Cassettes replayed at once (check mode), each in its own worker process with its own server.
    jobs: int = 1
    # Flag an answer more than this many times slower than recorded (``latency``); None: never.
    max_slowdown: float | None = None
    # Flag an answer more than this many times its recorded size in bytes (``size``); None: never.
    max_growth: float | None = None
    # Sends of each side-effect-free request; the median latency is reported.
    repeat: int = 1
    # When an interaction differs (a failing or a cosmetic change), replay once more against a fresh
    # start and report what differs between the two live runs as noise (``noise.py``).
    confirm: bool = True
    # Declared threading rules (``--thread`` / ``--no-thread``: keys or paths of an answer), on
    # top of the ones each cassette's header stores (``correlate.ThreadRules``).
    thread: tuple[str, ...] = ()
    no_thread: tuple[str, ...] = ()
    # The protocol era the cassettes are sent in (``translate.py``): ``recorded``, or
    # ``handshake``/``stateless`` to send a recording of the other era translated.
    era: str = "recorded"

    @property
    def rewrites(self) -> bool:
        """True when the run rewrites cassettes (update or refresh)."""
        return self.mode != "check"

    def shown(self, path: str) -> str:
        """``path`` as reports show it: relative to ``root`` with forward slashes when inside it."""
        rel = os.path.relpath(path, self.root)
        return path if rel.startswith("..") else rel.replace(os.sep, "/")


def _default_target() -> Target:
    from mcp_replay_action.transport import Target

    return Target()


def _default_compare() -> CompareOptions:
    from mcp_replay_action.compare.options import CompareOptions

    return CompareOptions()


def _default_gate() -> GatePolicy:
    from mcp_replay_action.model.gate import GatePolicy

    return GatePolicy()


def startup_timeout_for(timeout: float, startup_timeout: float | None = None) -> float:
    """The wait for a server's first answer: as given, else the longer of the per-request
    timeout and the default start allowance (``npx``/``uvx`` may fetch the server first)."""
    from mcp_replay_action.transport import STARTUP_TIMEOUT

    return startup_timeout if startup_timeout is not None else max(timeout, STARTUP_TIMEOUT)


def make_target(
    server: str | Sequence[str] | None,
    url: str | None,
    headers: Mapping[str, str] | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    isolate: bool = False,
    startup_timeout: float = 30.0,
    *,
    setup: str | Sequence[str] | None = None,
    reset: str | Sequence[str] | None = None,
    command: str = "replay",
    max_message: int | None = None,
) -> Target:
    """The ``Target`` of a server, the one place one is built (for the options table's edges, the
    demo and a ``scenarios.yml``'s target; ``open_transport`` turns it into a transport):
    ``server``, ``setup`` and ``reset`` are commands, an argv or a string split like a POSIX shell
    would. Raises ConfigError when there is neither a server nor a URL, or a ``reset`` without a URL
    (a server replay starts its own server for each pass: there is nothing to reset)."""
    from mcp_replay_action.errors import ConfigError
    from mcp_replay_action.transport import Target
    from mcp_replay_action.transport.process import split_command

    if not url and not server:
        raise ConfigError(f"{command} needs --server CMD (stdio) or --url URL (HTTP)")
    if reset and not url:
        raise ConfigError("--reset resets a server given by --url before each pass: there is no --url")
    return Target(
        command=tuple(split_command(server)) if server else (),
        url=url or None,
        headers=dict(headers or {}),
        cwd=cwd,
        env=dict(env or {}),
        isolate=isolate,
        setup=tuple(split_command(setup)) if setup else (),
        reset=tuple(split_command(reset)) if reset else (),
        startup_timeout=startup_timeout,
        **({"max_message": max_message} if max_message is not None else {}),
    )
