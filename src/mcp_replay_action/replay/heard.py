"""What the server sends besides its answers, recorded and live, for ``compare/notifications.py``.

Progress (``notifications/progress``) names the request it reports on (its ``progressToken``), so
it is compared per request: in the recording, the progress seen after the request and no later
than its answer (the request's ``ts`` plus its ``latency_ms``), or written before a long request
with its token (``ProgressOwners``); live, the progress read while the
replay awaited that answer. Everything else (log messages, change notices, requests to the
client) names no request: a server sends it from background work whenever that work gets there
(npm server-everything asks ``roots/list`` a moment after the handshake, in whichever request's
window that falls), so it is compared over the whole session, in order, once the session has
replayed; a message the recording heard that has not arrived by the last answer is waited for a
little (``DRAIN_SECONDS``).

What the recording could hear depends on its transport. Over stdio every message arrives inline.
Over HTTP (Streamable HTTP, or the legacy HTTP+SSE) a notification that answers no request rides
the standalone ``GET`` stream, and one sent before the client opened that stream, or while none was
open, is lost to the recording (npm server-everything announces ``notifications/tools/list_changed``
the moment the handshake ends, before the SDK client's ``GET`` stream is up). So for a cassette
recorded over HTTP, a live notification of a method the recording never heard is not compared: its
absence from the recording is the transport's, not the server's. Requests to the client stay
compared (the replay answers them from the cassette, so one it has no answer for matters). The
replay itself is never late: it opens its ``GET`` stream before it posts
``notifications/initialized`` (``http_client.py``), so what a recording in time heard, it hears.

The replay (``engine.py``) tells this module when a request is sent and answered, and hands it the
recorded lines as it passes them.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar, cast

from mcp_replay_action.compare.matchers import progress_token
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding
from mcp_replay_action.transport.session import ClientSession

if TYPE_CHECKING:
    from mcp_replay_action.compare.carry import Carry
    from mcp_replay_action.compare.noise import NoiseRule

Redact = Callable[[JSONObject], JSONObject]
Noted = tuple[tuple[Finding, ...], tuple[Finding, ...]]  # (gating findings, noise calibrated ahead)
T = TypeVar("T")


@dataclass
class LiveHeard:
    """What a live session's server sent besides its answers, unredacted, for ``--update``
    (``update_heard.py``): each request's progress by seq, and the rest in session order with the
    seq of the request in hand when each came (-1: before any)."""

    progress: dict[int, list[JSONObject]] = field(default_factory=dict)
    session: list[JSONObject] = field(default_factory=list)
    during: list[int] = field(default_factory=list)


# After the last answer, how long the messages the recording heard and the live server has not
# sent yet are waited for.
DRAIN_SECONDS = 1.0
_SLACK = 2e-6  # seconds: ts and latency are each rounded to the microsecond in a cassette
PROGRESS = "notifications/progress"
# Cassette transports over which a notification answering no request can be lost to the recording.
PARTIAL_HEARING = frozenset({"http", "sse"})
# What session findings are shown on when the recording heard nothing (only the live server spoke):
# a row past the cassette's last seq, on no line.
_NOWHERE = {"jsonrpc": "2.0", "method": "notifications"}


def in_window(request: Interaction, line: Interaction) -> bool:
    """Whether a recorded progress ``line`` after ``request`` came no later than its answer."""
    return request.latency_ms is None or line.ts <= request.ts + request.latency_ms / 1000.0 + _SLACK


class ProgressOwners(Generic[T]):
    """Which recorded request each recorded progress line reports on, fed the cassette's requests
    and progress lines in order (the replay's ``Heard`` and ``--update``'s ``update_heard``).

    Mostly the request in hand, when the line came before its answer. But a request open longer
    than 2 s is written where its answer arrives (docs/recording.md, "The order of the lines"),
    after its own progress: PyPI's ``jcodemunch-mcp`` indexing 278 files for 5.8 s had its 45
    progress lines before its request, compared as "no progress recorded". So a line whose token
    the request in hand does not carry waits for the request that does (a later line), and goes
    to it if it came before that request's answer."""

    def __init__(self) -> None:
        self.current: Interaction | None = None
        self._waiting: dict[tuple[str, JSON], list[tuple[Interaction, T]]] = {}

    def request(self, request: Interaction) -> list[T]:
        """``request`` is the one in hand now; what was waiting for its token is its own."""
        self.current = request
        key = _key(progress_token(request.message))
        waiting = self._waiting.pop(key, []) if key is not None else []
        return [item for line, item in waiting if in_window(request, line)]

    def progress(self, line: Interaction, item: T) -> Interaction | None:
        """The request progress ``line`` (``item``) reports on, if it is known yet."""
        params = line.message.get("params")
        current, key = self.current, _key(params.get("progressToken") if isinstance(params, dict) else None)
        if current is not None and in_window(current, line):
            mine = _key(progress_token(current.message))
            if key is None or mine is None or key == mine:
                return current
        if key is not None:
            self._waiting.setdefault(key, []).append((line, item))
        return None


def _key(token: JSON) -> tuple[str, JSON] | None:
    """A token as a dict key (``1`` and ``"1"`` stay apart), or None for no token or an odd one."""
    return (type(token).__name__, token) if isinstance(token, (str, int)) and not isinstance(token, bool) else None


def calibrated_rules(meta: Mapping[str, JSON]) -> dict[int, list[NoiseRule]]:
    """``noise.rules_by_seq(meta)``; a header with no calibrated rules needs no ``noise.py``."""
    if not meta.get("noise"):
        return {}
    from mcp_replay_action.compare.noise import rules_by_seq

    return rules_by_seq(meta)


class Heard:
    """One session's server notifications and requests to the client: progress by request, the
    rest in session order."""

    def __init__(
        self,
        options: CompareOptions,
        redact: Redact,
        meta: Mapping[str, JSON],
        asks: bool = True,
        keep: LiveHeard | None = None,
    ) -> None:
        self.options = options  # what is compared how, ``--ignore-notifications`` among it
        self.ignore = options.ignore_notifications
        self.redact = redact  # the live messages pass it before they are compared or kept
        # Whether the recording's transport (the cassette header's, ``meta``) heard every
        # notification the server sent (stdio), or only those on a request's stream or an open GET
        # stream (HTTP): see the module's doc.
        self.heard_all = meta.get("transport") not in PARTIAL_HEARING
        # Whether requests to the client are compared: not across eras, where one era's mid-call
        # request is the other's input_required round (``translate.py``), compared by its answers.
        self.asks = asks
        self.on_stream: Callable[[JSONObject], None] | None = None  # a subscription's events (streams.py)
        self.window: list[JSONObject] | None = None  # live progress, while an answer is awaited
        self.recorded: dict[int, list[JSONObject]] = {}  # recorded progress, by request seq
        self.recorded_session: list[JSONObject] = []  # the rest, in cassette order
        self.live_session: list[JSONObject] = keep.session if keep is not None else []  # ... and as heard
        self.first_line: Interaction | None = None  # the line session findings are shown on
        self.row: int | None = None  # ... the seq of their row, once there are any (``session``)
        # The recorded progress of each request whose progress differed, for the confirmation pass.
        self.differed: dict[int, list[JSONObject]] = {}
        self._current: Interaction | None = None
        self.owners: ProgressOwners[JSONObject] = ProgressOwners()  # whose each recorded progress line is
        self._last_seq = -1  # the highest recorded seq passed (a row past it is on no line)
        # What ``--update`` writes in place of the recording, when it may need it (``update_heard.py``).
        self.keep = keep
        # The noise ``calibrate`` stored in the header, by seq: for the answers (the engine's
        # ``noise.split``) and for what else the server sent (``noise.split_heard``).
        self.rules = calibrated_rules(meta)

    def _kept(self, message: JSONObject) -> bool:
        from mcp_replay_action.compare.notifications import comparable

        return bool(comparable([message], self.ignore)) and ("id" not in message or self.asks)

    # -- the recording --------------------------------------------------------------------------

    def recorded_line(self, inter: Interaction) -> None:
        """A recorded ``server-notification`` or ``server-request``, in cassette order."""
        if not self._kept(inter.message):
            return
        if inter.message.get("method") != PROGRESS:
            self.recorded_session.append(inter.message)
            if self.first_line is None:
                self.first_line = inter
            return
        owner = self.owners.progress(inter, inter.message)
        if owner is not None:
            self.recorded.setdefault(owner.seq, []).append(inter.message)

    # -- live -------------------------------------------------------------------------------------

    def sent(self, inter: Interaction) -> None:
        """The request ``inter`` is sent: the progress read from now until its answer is its own."""
        self._current = inter
        self._last_seq = max(self._last_seq, inter.seq)
        self.window = []
        early = self.owners.request(inter)  # its progress written before it (a long call)
        if early:
            self.recorded.setdefault(inter.seq, [])[:0] = early

    def answered(self) -> list[JSONObject]:
        """The answer came (or never will): the progress read since the request was sent."""
        window, self.window = self.window or [], None
        if self.keep is not None and self._current is not None:
            # The first window is the request's own: a ``--repeat`` resend's progress is dropped.
            self.keep.progress.setdefault(self._current.seq, window)
        return window

    def hear(self, message: JSONObject) -> None:
        """A live server notification (the replay's ``ClientSession.on_notification``)."""
        from mcp_replay_action.compare.notifications import comparable

        if self.on_stream is not None and not comparable([message]):
            self.on_stream(message)  # a subscription's event: its stream compares it
            return
        if not self._kept(message):
            return
        if message.get("method") != PROGRESS:
            self.live_session.append(message)
            if self.keep is not None:
                self.keep.during.append(self._current.seq if self._current is not None else -1)
        elif self.window is not None:
            self.window.append(message)

    def asked(self, request: JSONObject, _answer: JSONObject) -> None:
        """A live request to the client, answered from the cassette (``on_server_request``)."""
        self.hear(request)

    def live_of(self, window: list[JSONObject]) -> list[JSONObject]:
        """The live progress of a request, redacted."""
        return [self.redact(m) for m in window]

    def findings(
        self, seq: int, window: list[JSONObject], carry: Carry | None = None
    ) -> tuple[Noted, list[JSONObject]]:
        """What differs in the progress request ``seq`` reported, recorded (each value threaded so
        far in its live spelling: ``carry.py``) and live (``window``), and the live progress
        compared (kept for a confirmation pass)."""
        recorded = self.recorded.pop(seq, [])
        if not (recorded or window):
            return ((), ()), window
        from mcp_replay_action.compare.notifications import compare_heard

        if carry:
            recorded = cast(list[JSONObject], carry.expected(recorded, seq))
        live = self.live_of(window)
        findings, noise = self._calibrated(seq, compare_heard(recorded, live, self.options))
        if findings:
            self.differed[seq] = recorded
        return (findings, noise), live

    def _calibrated(self, seq: int, findings: tuple[Finding, ...]) -> Noted:
        """``findings`` parted into (gating, noise ``calibrate`` learned for row ``seq``)."""
        if not findings or not self.rules.get(seq):
            return findings, ()
        from mcp_replay_action.compare.noise import split_heard

        return split_heard(findings, self.rules[seq], self.options)

    def session(self, carry: Carry | None = None) -> tuple[Interaction, Noted] | None:
        """Once the session has replayed: the line to show them on and what differs in the log
        messages, change notices and requests to the client over the session (gating, and noise
        ``calibrate`` learned), or None."""
        if not (self.recorded_session or self.live_session):
            return None
        from mcp_replay_action.compare.notifications import compare_heard

        live = self.live_heard()
        if not (self.recorded_session or live):
            return None
        findings = compare_heard(self.expected_session(carry), live, self.options)
        if not findings:
            return None
        shown = self.first_line or Interaction(seq=self._last_seq + 1, kind="server-notification", message=_NOWHERE)
        self.row = shown.seq
        return shown, self._calibrated(shown.seq, findings)

    def expected_session(self, carry: Carry | None) -> list[JSONObject]:
        """The recorded session messages as the live server should send them: a value an answer
        minted and a later request quoted (``carry.py``) is threaded into the log messages that
        carry it too, expected to differ there, never noise."""
        if not carry:
            return self.recorded_session
        return cast(list[JSONObject], carry.apply(self.recorded_session))

    def live_heard(self) -> list[JSONObject]:
        """The live log messages, change notices and requests to the client compared over the
        session, redacted."""
        return [self.redact(m) for m in self.live_session if self._could_be_heard(m)]

    def _could_be_heard(self, message: JSONObject) -> bool:
        """Whether the recording could have heard ``message`` (a live session message) had the
        server sent it then: always over stdio; over HTTP only a method it did hear, or a request."""
        if self.heard_all or "id" in message:
            return True
        return any(m.get("method") == message.get("method") for m in self.recorded_session)

    def drain(self, client: ClientSession, until: float) -> None:
        """After the last answer: read on while fewer messages of some method came than the
        recording heard, for up to ``DRAIN_SECONDS`` and not past ``until``."""
        want = Counter(str(m.get("method")) for m in self.recorded_session)
        if not want:
            return

        def short() -> bool:
            got = Counter(str(m.get("method")) for m in self.live_session)
            return any(got[method] < n for method, n in want.items())

        client.read_while(short, min(until, time.monotonic() + DRAIN_SECONDS))
