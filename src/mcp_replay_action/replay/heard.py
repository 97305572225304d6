"""What the server sends besides its answers, recorded and live, filed by the request it came with.

A server notification or request to the client belongs to the request being answered when it was
sent: in the recording, one seen after the request and no later than its answer (the request's
``ts`` plus its ``latency_ms``); live, one read while the replay awaited that request's answer.
The rest (sent after an answer, before the next request) is *outside* any request; live, such a
message is read while the next request is awaited, so a live window's first messages that the
recording heard after the previous answer are moved outside before the window is compared. What
is outside is compared once per session as counts per method (``compare/notifications.py``); a
message the recording heard after the last answer is waited for a little (``DRAIN_SECONDS``).

The comparison itself is ``compare/notifications.py``; the replay (``engine.py``) tells this
module when a request is sent and answered, and hands it the recorded lines as it passes them.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding
from mcp_replay_action.transport.session import ClientSession

Redact = Callable[[JSONObject], JSONObject]

# After the last answer, how long the notifications the recording heard after it are waited for.
DRAIN_SECONDS = 1.0
_SLACK = 2e-6  # seconds: ts and latency are each rounded to the microsecond in a cassette


class Heard:
    """One session's server notifications and requests to the client, by request."""

    def __init__(self, ignore: tuple[str, ...] = (), asks: bool = True) -> None:
        self.ignore = ignore
        # Whether requests to the client are compared: not across eras, where one era's mid-call
        # request is the other's input_required round (``translate.py``), compared by its answers.
        self.asks = asks
        self.on_stream: Callable[[JSONObject], None] | None = None  # a subscription's events (streams.py)
        self.window: list[JSONObject] | None = None  # live, while an answer is awaited
        self.live_outside: list[JSONObject] = []
        self.recorded: dict[int, list[JSONObject]] = {}  # by the seq of the request they came with
        self.recorded_outside: list[JSONObject] = []
        self.first_outside: Interaction | None = None  # the line an outside finding is shown on
        self.leading: dict[int, list[JSONObject]] = {}  # recorded outside just before each request
        self._current: Interaction | None = None
        self._tail: list[JSONObject] = []  # recorded outside since the last request

    # -- the recording --------------------------------------------------------------------------

    def recorded_line(self, inter: Interaction) -> None:
        """A recorded ``server-notification`` or ``server-request``, in cassette order."""
        from mcp_replay_action.compare.notifications import comparable

        if not comparable([inter.message], self.ignore) or ("id" in inter.message and not self.asks):
            return
        current = self._current
        if current is not None and (
            current.latency_ms is None or inter.ts <= current.ts + current.latency_ms / 1000.0 + _SLACK
        ):
            self.recorded.setdefault(current.seq, []).append(inter.message)
            return
        self._current = None  # later lines are later still
        self._tail.append(inter.message)
        self.recorded_outside.append(inter.message)
        if self.first_outside is None:
            self.first_outside = inter

    # -- live -------------------------------------------------------------------------------------

    def sent(self, inter: Interaction) -> None:
        """The request ``inter`` is sent: what is read from now until its answer is its window."""
        self._current = inter
        if self._tail:
            self.leading[inter.seq], self._tail = self._tail, []
        self.window = []

    def answered(self) -> list[JSONObject]:
        """The answer came (or never will): the window read since the request was sent."""
        window, self.window = self.window or [], None
        return window

    def hear(self, message: JSONObject) -> None:
        """A live server notification (the replay's ``ClientSession.on_notification``)."""
        from mcp_replay_action.compare.notifications import comparable

        if self.on_stream is not None and not comparable([message]):
            self.on_stream(message)  # a subscription's event: its stream compares it
            return
        if not comparable([message], self.ignore) or ("id" in message and not self.asks):
            return
        (self.window if self.window is not None else self.live_outside).append(message)

    def asked(self, request: JSONObject, _answer: JSONObject) -> None:
        """A live request to the client, answered from the cassette (``on_server_request``)."""
        self.hear(request)

    def live_of(self, seq: int, window: list[JSONObject], redact: Redact, options: CompareOptions) -> list[JSONObject]:
        """The live window of request ``seq`` redacted, less its first messages that the recording
        heard after the previous answer (the same notification, masked), which are moved outside."""
        leading = self.leading.pop(seq, [])
        if not window:
            return window
        from mcp_replay_action.compare.notifications import same_kind

        live = [redact(m) for m in window]
        start = 0
        for expected in leading:
            if start < len(live) and same_kind(expected, live[start], options):
                start += 1
        self.live_outside.extend(live[:start])
        return live[start:]

    def findings(
        self, seq: int, window: list[JSONObject], redact: Redact, options: CompareOptions
    ) -> tuple[tuple[Finding, ...], list[JSONObject]]:
        """What differs between what the server sent while answering request ``seq``, recorded
        and live (``window``), and the live messages compared (kept for a confirmation pass)."""
        recorded = self.recorded.pop(seq, [])
        live = self.live_of(seq, window, redact, options)
        if not (recorded or live):
            return (), live
        from mcp_replay_action.compare.notifications import compare_heard

        return compare_heard(recorded, live, options), live

    def outside(self, redact: Redact) -> tuple[Interaction, tuple[Finding, ...]] | None:
        """Once the session has replayed: the first recorded line outside any request and what
        differs outside requests (counts per method), or None when the recording heard nothing
        there (a live one more is not reported: nothing waited for it)."""
        if self.first_outside is None:
            return None
        from mcp_replay_action.compare.notifications import compare_counts

        findings = compare_counts(self.recorded_outside, [redact(m) for m in self.live_outside])
        return (self.first_outside, findings) if findings else None

    def drain(self, client: ClientSession, until: float) -> None:
        """After the last answer: read on while fewer messages of some method came outside any
        request than the recording heard, for up to ``DRAIN_SECONDS`` and not past ``until``."""
        want = Counter(str(m.get("method")) for m in self.recorded_outside)
        if not want:
            return

        def short() -> bool:
            got = Counter(str(m.get("method")) for m in self.live_outside)
            return any(got[method] < n for method, n in want.items())

        client.read_while(short, min(until, time.monotonic() + DRAIN_SECONDS))
