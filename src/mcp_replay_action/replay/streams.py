"""``subscriptions/listen`` on replay (2026-07-28): a stream compared by what arrived on it.

In the 2026-07-28 revision a client that wants the server's change notifications
(``notifications/resources/updated``, ``.../list_changed``, task status) sends a
``subscriptions/listen`` request whose answer *is* the stream: the server acknowledges it first
(``notifications/subscriptions/acknowledged``, with the filter it honours), then sends each event
as a notification tagged ``_meta["io.modelcontextprotocol/subscriptionId"]`` with the request's
id, and answers the request itself only when it closes the stream gracefully (usually never: the
client goes away). The recorder keeps the listen request though it was never answered
(``response: null``); the stream is the server notifications that carry its id, in the order they
arrived, up to the client's ``notifications/cancelled`` for it (the end of its window).

On replay the listen request is sent and not awaited; the live notifications tagged with its id
are gathered while the rest of the session replays (until the recorded cancellation is sent),
and for up to a second after the last answer
while fewer arrived than were recorded. Then the stream is compared with its recording as what
arrived within the recorded window: the acknowledgment first (the spec orders it first), the
events after it as a multiset (a count per distinct notification, its ``_meta`` aside), since a
server publishes them from concurrent handlers and promises no order among them. A recorded
notification that did not arrive is an ``item-removed`` (breaking: a client waiting for it never
refetches), one more is an ``item-added``, an acknowledgment that honours another filter a
``value-changed``; each names the notification at ``$.stream[method=...]``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from mcp_replay_action.compare.classes import finding
from mcp_replay_action.compare.notifications import SUBSCRIPTION_ID
from mcp_replay_action.grade.verdict import judge
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding, InteractionResult
from mcp_replay_action.transport import Transport
from mcp_replay_action.transport.session import ClientSession
from mcp_replay_action.values.paths import ident_segment

LISTEN = "subscriptions/listen"
ACK = "notifications/subscriptions/acknowledged"
# After the last answer, how long a stream that has had fewer notifications than its recording
# waits for the rest (a server may publish after it answered the request that caused them).
DRAIN_SECONDS = 1.0


def is_listen(inter: Interaction) -> bool:
    return inter.kind == "request" and inter.method == LISTEN


def stream_of(message: JSONObject) -> JSON:
    """The subscription id a server notification carries (``params._meta``), or None."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None


def _key(message: JSONObject) -> str:
    """A notification as compared: its method and params, ``_meta`` aside (canonical JSON)."""
    params = message.get("params")
    bare = {k: v for k, v in params.items() if k != "_meta"} if isinstance(params, dict) else params
    return json.dumps([message.get("method"), bare], sort_keys=True, ensure_ascii=False)


class Streams:
    """One session's open ``subscriptions/listen`` streams: the recorded listen requests by the
    id they were sent with, and the live notifications heard on each (before and after the
    client cancelled it)."""

    def __init__(self) -> None:
        self.opened: dict[str, Interaction] = {}  # by the JSON of the id sent
        self.heard: dict[str, Window] = {}
        self.closed: set[str] = set()  # streams the client cancelled: their window has ended

    def open(self, inter: Interaction, sent: JSONObject, transport: Transport) -> None:
        """Send a listen request (``sent``: as rewritten for the live server); never awaited."""
        sid = json.dumps(sent.get("id"))
        self.opened[sid] = inter
        self.heard[sid] = Window()
        transport.send(sent)

    def hear(self, message: JSONObject) -> None:
        """A live server notification: kept when it is on an open stream."""
        sid = json.dumps(stream_of(message))
        heard = self.heard.get(sid)
        if heard is not None:
            (heard.late if sid in self.closed else heard.inside).append(message)

    def sent(self, message: JSONObject) -> None:
        """A client notification as sent: ``notifications/cancelled`` for a stream ends its window."""
        closes = _cancels(message)
        if closes is not None:
            self.closed.add(closes)

    def recorded(self, interactions: Iterable[Interaction]) -> dict[str, Window]:
        """Each open stream's recorded notifications, before and after its recorded cancellation."""
        by_stream = {sid: Window() for sid in self.opened}
        recorded_ids = {json.dumps(inter.message.get("id")): sid for sid, inter in self.opened.items()}
        ended: set[str] = set()  # the recorded streams the client cancelled, by the id sent
        for inter in interactions:
            if inter.kind == "server-notification":
                sid = recorded_ids.get(json.dumps(stream_of(inter.message)))
                if sid is not None:
                    window = by_stream[sid]
                    (window.late if sid in ended else window.inside).append(inter.message)
            elif inter.kind == "notification" and (closes := _cancels(inter.message)) in recorded_ids:
                ended.add(recorded_ids[closes])
        return by_stream

    def judged(
        self, client: ClientSession, interactions: Iterable[Interaction], until: float
    ) -> list[InteractionResult]:
        """Each open stream's verdict, once the session has replayed: the live notifications read
        on (``client.read_while``: its notifications reach ``hear``) while a stream has fewer than
        its recorded window, for up to ``DRAIN_SECONDS`` and not past ``until``."""
        recorded = self.recorded(interactions)
        client.read_while(
            lambda: any(len(self.heard[sid]) < len(window.inside) for sid, window in recorded.items()),
            min(until, time.monotonic() + DRAIN_SECONDS),
        )
        # A stream that carried anything live was answered (its error parity is kept).
        return [
            judge(self.opened[sid], compare_stream(window, self.heard[sid]), {} if self.heard[sid] else None)
            for sid, window in recorded.items()
        ]


@dataclass
class Window:
    """A stream's notifications in arrival order: ``inside`` its window (before the client
    cancelled it) and ``late`` (after: a notification a server sent as the cancellation crossed
    it, on either side of the race)."""

    inside: list[JSONObject] = field(default_factory=list)
    late: list[JSONObject] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.inside) + len(self.late)


def compare_stream(recorded: Window, live: Window) -> tuple[Finding, ...]:
    """A stream's live notifications against its recording: the acknowledgment first, the events
    after it as a multiset. A recorded event inside the window is missing when no live one, inside
    or late, matches it; a live event inside the window is one more when no recorded one, inside
    or late, matches it (the cancellation races the last events, in the recording and live)."""
    out: list[Finding] = []
    rec_ack, rec_events = _split_ack(recorded.inside)
    live_ack, live_events = _split_ack(live.inside + live.late)
    path = "$.stream" + ident_segment("method", ACK)
    if rec_ack is not None and live_ack is None:
        out.append(finding("item-removed", "structure-change", path, f"{ACK} did not arrive", before=1, after=0))
    elif rec_ack is not None and live_ack is not None and _key(rec_ack) != _key(live_ack):
        out.append(
            finding(
                "value-changed",
                "value-change",
                path,
                "the stream was acknowledged with another filter",
                before=(rec_ack.get("params") or {}).get("notifications"),
                after=(live_ack.get("params") or {}).get("notifications"),
            )
        )
    want, got = Counter(map(_key, rec_events)), Counter(map(_key, live_events))
    may, heard_inside = Counter(map(_key, rec_events + recorded.late)), Counter(map(_key, _split_ack(live.inside)[1]))
    for key in sorted(want.keys() | heard_inside.keys()):
        method, params = json.loads(key)
        shown = method + (f" {json.dumps(params, ensure_ascii=False)}" if params else "")
        where = "$.stream" + ident_segment("method", method)
        if got[key] < want[key]:
            message = f"{shown}: recorded {want[key]}, live {got[key]} within the recorded window"
            out.append(finding("item-removed", "structure-change", where, message, before=want[key], after=got[key]))
        elif heard_inside[key] > may[key]:
            message = f"{shown}: live {heard_inside[key]}, recorded {may[key]} within the recorded window"
            out.append(
                finding("item-added", "structure-change", where, message, before=may[key], after=heard_inside[key])
            )
    return tuple(out)


def _split_ack(stream: list[JSONObject]) -> tuple[JSONObject | None, list[JSONObject]]:
    """The acknowledgment when it came first, and the rest."""
    if stream and stream[0].get("method") == ACK:
        return stream[0], stream[1:]
    return None, list(stream)


def _cancels(message: JSONObject) -> str | None:
    """The id (as JSON) a ``notifications/cancelled`` cancels, or None."""
    if message.get("method") != "notifications/cancelled":
        return None
    params = message.get("params")
    return json.dumps(params.get("requestId")) if isinstance(params, dict) and "requestId" in params else None
