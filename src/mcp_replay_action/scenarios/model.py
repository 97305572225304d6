"""What a ``scenarios.yml`` says, as plain frozen dataclasses (``loader`` reads the file,
``recorder`` records it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.transport import STARTUP_TIMEOUT, Target
from mcp_replay_action.wire.protocol import HANDSHAKE_VERSION, era_of

SCHEMA_VERSION = "1.0"
DEFAULT_TIMEOUT = 30.0


@dataclass(frozen=True)
class Redaction:
    """The ``redact`` block: what to scrub before a cassette touches disk."""

    server_url: bool = True  # keep only scheme://host[:port] of the URL in the header
    env: tuple[str, ...] = ()  # names of variables whose values are replaced wherever they appear
    patterns: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    defaults: bool = True  # the built-in secret keys, bearer tokens and key-like strings


@dataclass(frozen=True)
class Action:
    """One step of a scenario: a request (or, for ``notify``, a notification) to send."""

    kind: str  # the action as written: list_tools, call_tool, request, ...
    method: str
    params: JSONObject | None = None
    line: int = 0
    notification: bool = False
    input_responses: JSONObject | None = None  # answers for a stateless input_required result
    save: str | None = None  # ``save: note``: later steps may quote this answer as ``${note...}``

    @property
    def label(self) -> str:
        name: JSON = None
        if self.params:
            name = self.params.get("name") or self.params.get("uri")
        return f"{self.method} {name}" if isinstance(name, str) else self.method


@dataclass(frozen=True)
class Scenario:
    name: str
    actions: tuple[Action, ...]
    protocol_version: str = HANDSHAKE_VERSION
    description: str = ""
    line: int = 0

    @property
    def era(self) -> str:
        return era_of(self.protocol_version) or "handshake"


@dataclass(frozen=True)
class Scenarios:
    """A loaded ``scenarios.yml``."""

    path: str
    target: Target
    scenarios: tuple[Scenario, ...]
    redact: Redaction = Redaction()
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = STARTUP_TIMEOUT
    client_capabilities: Mapping[str, JSON] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scenarios)

    def get(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise ConfigError(f"{self.path}: no scenario named {name!r} (have: {', '.join(self.names)})")
