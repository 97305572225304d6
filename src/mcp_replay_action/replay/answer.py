"""One live answer on its way from the wire to a finding: received, redacted when first needed,
compared once the server is busy with the next request (``engine._Session``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding, Substitution

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared


class Answer:
    """A live answer received and not yet compared (see ``engine._Session.unsettled``). Its live answer
    is redacted when first needed (``engine._Session._redacted``): before the next message is sent when
    carry may learn from it, else while the server works on that message. Slots, not a frozen
    dataclass: one is made per request, and the dataclass costs several times as much to make."""

    __slots__ = (
        "inter", "sent", "substitutions", "live", "latency", "first", "redacted", "prepared", "checked", "heard"
    )  # fmt: skip

    def __init__(
        self,
        inter: Interaction,
        sent: JSONObject,
        substitutions: tuple[Substitution, ...],
        live: JSONObject,
        latency: float,
        first: bool,
        prepared: Prepared | None = None,
        heard: list[JSONObject] | None = None,
    ) -> None:
        self.inter = inter
        self.heard = heard or []  # what the server sent while answering (replay/heard.py)
        self.sent = sent  # the request as really sent
        self.substitutions = substitutions
        self.live = live  # redacted once ``redacted`` is set
        self.latency = latency  # milliseconds
        self.first = first
        self.redacted = False
        self.prepared = prepared  # what was prepared for it (``prepared.py``), closed once compared
        self.checked: tuple[Finding, ...] | None = None  # what the live server's declarations found

    def close(self) -> None:
        """Let go of what was prepared for this answer: it is compared (or will never be)."""
        if self.prepared is not None:
            self.prepared.close()
