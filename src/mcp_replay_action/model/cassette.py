"""The cassette model: recorded interactions and the header's ``meta``. Plain frozen dataclasses;
no files, no servers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

from mcp_replay_action.model import JSON, JSONObject

Kind = Literal["request", "notification", "server-request", "server-notification"]
KINDS: tuple[str, ...] = ("request", "notification", "server-request", "server-notification")


def subject_of(message: Mapping[str, JSON]) -> str | None:
    """The tool, prompt or resource a request is about (its ``name`` or ``uri``), for display."""
    params = message.get("params")
    if not isinstance(params, dict):
        return None
    for key in ("name", "uri"):
        value = params.get(key)
        if isinstance(value, str):
            return value
    return None


@dataclass(frozen=True)
class Interaction:
    """One recorded exchange.

    ``message`` is what the initiator sent: the client for ``request``/``notification``, the server
    for ``server-request``/``server-notification``. ``response`` is the answer to it: the server's
    response to a request, the client's response to a server-request, ``None`` for notifications.
    ``line`` is the 1-based line in the file it was read from (0 when not read from a file).
    """

    seq: int
    kind: Kind
    message: JSONObject
    response: JSONObject | None = None
    ts: float = 0.0
    latency_ms: float | None = None
    transport: JSONObject | None = None
    line: int = 0

    @property
    def method(self) -> str:
        return str(self.message.get("method", ""))

    @property
    def tool_name(self) -> str | None:
        """The tool, prompt or resource an interaction is about, for display (``tools/call add``)."""
        return subject_of(self.message)

    @property
    def label(self) -> str:
        name = self.tool_name
        return f"{self.method} {name}" if name else self.method

    def to_json(self) -> JSONObject:
        out: JSONObject = {
            "seq": self.seq,
            "kind": self.kind,
            "ts": round(self.ts, 6),
            "message": self.message,
            "response": self.response,
        }
        if self.latency_ms is not None:
            out["latency_ms"] = round(self.latency_ms, 3)
        if self.transport:
            out["transport"] = self.transport
        return out


@dataclass(frozen=True)
class Cassette:
    """A header's ``meta`` plus the interactions, in recorded order."""

    meta: JSONObject = field(default_factory=dict)
    interactions: tuple[Interaction, ...] = ()
    path: str = ""
    source_format: Literal["jsonl", "mcp-recorder-json"] = "jsonl"
    # The number of a last line left out because it was cut short (a recording killed while it
    # wrote that line: its interaction was in flight); 0 when there is none.
    cut_short: int = 0

    @property
    def requests(self) -> tuple[Interaction, ...]:
        return tuple(i for i in self.interactions if i.kind == "request")

    def with_interactions(self, interactions: Iterable[Interaction]) -> Cassette:
        return replace(self, interactions=tuple(interactions))
