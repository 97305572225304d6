"""``--update`` for what the server sends besides its answers (``compare/notifications.py``): the
recorded ``server-notification`` and ``server-request`` lines a finding says differ are rewritten
from the live session; every other line keeps its bytes.

What a finding names is what is rewritten, part by part, as the comparison saw it:

- a request's progress (``$.notifications.progress``, on its row): its recorded progress lines
  (after the request, no later than its answer: ``heard.in_window``) become the live ones, line for
  line, and a line equal to its live twin (masked, as compared) is kept;
- log messages (``$.notifications.message[i]``): the recorded sequence is lined up with the live
  one as the comparison lines them up; a message equal under masking keeps its line, a changed one
  is rewritten in its place, one no longer sent leaves, a new one is written after the request it
  came with;
- change notices and the other notifications (``$.notifications[method=...]``): a method that no
  longer comes loses its lines, a new one gains the live ones;
- requests to the client (``$.server_requests[method=...]``): one whose params changed is rewritten
  (its recorded answer kept: the replay gave the server that answer), one no longer asked leaves;
  a new one is not written, for what a client would answer it is nothing a replay can know: it is
  counted kept, and the update's exit says so.

A new line takes a seq past every recorded one (no line is renumbered: calibrated noise rules name
seqs) and the ``ts`` of the request it came with, so a progress line stays in its request's window.
Each live message comes here redacted, with server-minted values written back as the recorded ones
(``update.py``). What the comparison leaves out (``--ignore-notifications``, a stream's events,
``notifications/tasks/status``) is never touched.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from mcp_replay_action.compare.notifications import (
    LOG_AT,
    comparable,
    log_key,
    masked,
    params_of,
    part_at,
    part_of,
)
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import InteractionResult
from mcp_replay_action.replay.heard import LiveHeard, ProgressOwners

Redact = Callable[[JSONObject], JSONObject]


@dataclass(frozen=True)
class HeardUpdate:
    """The interactions with their notifications rewritten, the result rows that were (by seq),
    and how many live requests to the client could not be written."""

    interactions: tuple[Interaction, ...]
    rows: frozenset[int] = frozenset()
    kept: int = 0


def update_heard(
    interactions: Sequence[Interaction],
    results: Iterable[InteractionResult],
    live: LiveHeard,
    redact: Redact,
    options: CompareOptions,
    *,
    heard_all: bool = True,
) -> HeardUpdate:
    """``interactions`` with every notification part a finding of ``results`` names rewritten
    from ``live`` (``redact`` makes a live message fit to write). ``heard_all``: the recording's
    transport heard every notification (stdio), as ``heard.Heard`` says."""
    parts: dict[int, set[str]] = {}
    for result in results:
        named = {part for part in (part_at(f.path) for f in result.findings) if part is not None}
        if named:
            parts[result.seq] = named
    if not parts:
        return HeardUpdate(tuple(interactions))
    edit = _Edit(interactions, redact, options)
    rows: set[int] = set()
    ignore = options.ignore_notifications
    progress = _recorded_progress(interactions, ignore)
    for seq, named in parts.items():
        window = live.progress.get(seq)
        if "progress" in named and window is not None:  # None: no answer came, nothing to write
            edit.progress(seq, progress.get(seq, []), window)
            rows.add(seq)
    session = set().union(*parts.values()) - {"progress"}
    if session:
        heard = list(zip(live.session, live.during, strict=True))
        recorded = [n for n, i in enumerate(interactions) if _session_line(i, ignore)]
        edit.quiet = _noise_only(interactions, recorded, results, options)
        if "log" in session:
            edit.logs(recorded, heard)
        if "other" in session:
            edit.presence(recorded, heard, heard_all)
        if "asked" in session:
            edit.asked(recorded, heard)
        rows.update(seq for seq, named in parts.items() if named - {"progress"})
    return HeardUpdate(edit.done(), frozenset(rows), edit.kept)


def _noise_only(
    lines: Sequence[Interaction], recorded: list[int], results: Iterable[InteractionResult], options: CompareOptions
) -> set[int]:
    """The recorded log messages and requests to the client (indexes into ``lines``) whose only
    difference is noise (the confirmation pass's, or ``calibrate``'s): they keep their bytes, though
    a real change beside them in the same part is written. A log message is named by its index in
    the recording (``$.notifications.message[i]``), a request to the client by its recorded params."""
    logs = [n for n in recorded if part_of(lines[n].message) == "log"]
    asked = [n for n in recorded if part_of(lines[n].message) == "asked"]
    out: set[int] = set()
    for result in results:
        gating = {f.path for f in result.findings}
        # Params a real change was found at: a request asked with them is rewritten, even when
        # another request asked alike varied only by noise.
        changed = {masked(f.before, options) for f in result.findings if part_at(f.path) == "asked"}
        for found in result.noise:
            part, at = part_at(found.path), found.path.removeprefix(LOG_AT).removesuffix("]")
            if part == "log" and found.path not in gating and at.isdigit() and int(at) < len(logs):
                out.add(logs[int(at)])
            elif part == "asked" and (params := masked(found.before, options)) not in changed:
                out.update(n for n in asked if masked(lines[n].message.get("params"), options) == params)
    return out


def _session_line(inter: Interaction, ignore: tuple[str, ...]) -> bool:
    """A recorded line compared over the session (every comparable one but progress)."""
    return (
        inter.kind in ("server-notification", "server-request")
        and part_of(inter.message) != "progress"
        and bool(comparable([inter.message], ignore))
    )


def _recorded_progress(interactions: Sequence[Interaction], ignore: tuple[str, ...]) -> dict[int, list[int]]:
    """The recorded progress lines of each request (indexes, by the request's seq), as the replay
    attributes them (``heard.Heard.recorded_line``)."""
    out: dict[int, list[int]] = {}
    owners: ProgressOwners[int] = ProgressOwners()
    for n, inter in enumerate(interactions):
        if inter.kind == "request":
            early = owners.request(inter)
            if early:
                out.setdefault(inter.seq, [])[:0] = early
        elif (
            inter.kind == "server-notification"
            and part_of(inter.message) == "progress"
            and comparable([inter.message], ignore)
            and (owner := owners.progress(inter, n)) is not None
        ):
            out.setdefault(owner.seq, []).append(n)
    return out


class _Edit:
    """The edits to a cassette's lines, made by index into the original, then applied at once."""

    def __init__(self, interactions: Sequence[Interaction], redact: Redact, options: CompareOptions) -> None:
        self.lines = tuple(interactions)
        self.redact = redact
        self.options = options
        self.dropped: set[int] = set()
        self.changed: dict[int, Interaction] = {}
        self.added: dict[int, list[Interaction]] = {}  # new lines, before the line at that index
        self.next_seq = max((i.seq for i in self.lines), default=-1) + 1
        self.quiet: set[int] = set()  # lines whose only difference is noise: never rewritten (``_noise_only``)
        self.kept = 0
        self.requests = {i.seq: n for n, i in enumerate(self.lines) if i.kind == "request"}

    # -- the parts ----------------------------------------------------------------------------

    def progress(self, seq: int, recorded: list[int], window: list[JSONObject]) -> None:
        """Request ``seq``'s recorded progress lines made its live ``window``, line for line."""
        live = [self.redact(m) for m in window]
        after = recorded[-1] + 1 if recorded else self.requests[seq] + 1
        for k in range(max(len(recorded), len(live))):
            if k >= len(live):
                self.dropped.add(recorded[k])
            elif k >= len(recorded):
                self._add(after, live[k], seq)
            elif self._progress_key(self.lines[recorded[k]].message) != self._progress_key(live[k]):
                self.changed[recorded[k]] = replace(self.lines[recorded[k]], message=live[k])

    def logs(self, recorded: list[int], heard: list[tuple[JSONObject, int]]) -> None:
        """The recorded log messages lined up with the live ones, as ``notifications._logs`` does."""
        rec = [n for n in recorded if part_of(self.lines[n].message) == "log"]
        now = [(self.redact(m), during) for m, during in heard if part_of(m) == "log"]
        a = [log_key(self.lines[n].message, self.options) for n in rec]
        b = [log_key(m, self.options) for m, _ in now]
        self._aligned(rec, now, a, b, asks=False)

    def presence(self, recorded: list[int], heard: list[tuple[JSONObject, int]], heard_all: bool) -> None:
        """A method no longer sent loses its lines; a new one gains the live messages."""
        rec = [n for n in recorded if part_of(self.lines[n].message) == "other"]
        now = [(m, during) for m, during in heard if part_of(m) == "other"]
        had = {self.lines[n].method for n in rec}
        has = {str(m.get("method")) for m, _ in now}
        self.dropped.update(n for n in rec if self.lines[n].method not in has)
        if not heard_all:
            return  # a method the recording never heard was not compared (``heard.py``)
        for message, during in now:
            if str(message.get("method")) not in had:
                self._add(self._after(during), self.redact(message), during)

    def asked(self, recorded: list[int], heard: list[tuple[JSONObject, int]]) -> None:
        """The recorded requests to the client lined up with the live ones by method."""
        rec = [n for n in recorded if part_of(self.lines[n].message) == "asked"]
        now = [(self.redact(m), during) for m, during in heard if part_of(m) == "asked"]
        a = [self.lines[n].method for n in rec]
        b = [str(m.get("method")) for m, _ in now]
        self._aligned(rec, now, a, b, asks=True)

    # -- the edits ------------------------------------------------------------------------------

    def _aligned(
        self,
        rec: list[int],
        now: list[tuple[JSONObject, int]],
        a: list[str],
        b: list[str],
        *,
        asks: bool,
    ) -> None:
        """Recorded lines ``rec`` (keys ``a``) made the live messages ``now`` (keys ``b``). Log
        messages are equal by key; requests to the client (``asks``) by method, and one whose
        params changed is rewritten keeping its id (its recorded answer answers that id)."""
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if op == "equal":
                if asks:
                    for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                        self._asked_again(rec[i], now[j][0])
                continue
            # Requests to the client of another method are one dropped and one new (``_asked``).
            pairs = min(i2 - i1, j2 - j1) if op == "replace" and not asks else 0
            for k in range(pairs):
                if rec[i1 + k] not in self.quiet:
                    self.changed[rec[i1 + k]] = replace(self.lines[rec[i1 + k]], message=now[j1 + k][0])
            self.dropped.update(rec[i1 + pairs : i2])
            before = rec[i1 + pairs - 1] if i1 + pairs > 0 else -1
            upto = rec[i2] if i2 < len(rec) else len(self.lines)
            for message, during in now[j1 + pairs : j2]:
                if asks:
                    self.kept += 1  # what the client would answer, a replay cannot know
                    continue
                self._add(min(max(self._after(during), before + 1), upto), message, during)

    def _asked_again(self, at: int, live: JSONObject) -> None:
        old = self.lines[at]
        if at not in self.quiet and masked(old.message.get("params"), self.options) != masked(
            live.get("params"), self.options
        ):
            self.changed[at] = replace(old, message={**live, "id": old.message.get("id")})

    def _progress_key(self, message: JSONObject) -> str:
        # The token is the request's bookkeeping (the replay sends the recorded one): not compared.
        return masked({k: v for k, v in params_of(message).items() if k != "progressToken"}, self.options)

    def _after(self, during: int) -> int:
        """Where a line heard while request ``during`` was in hand goes: after that request's own
        lines (before the next line the client sent), or before the first request (-1)."""
        at = self.requests.get(during)
        if at is None:
            return min(self.requests.values(), default=0)
        for n in range(at + 1, len(self.lines)):
            if self.lines[n].kind in ("request", "notification"):
                return n
        return len(self.lines)

    def _add(self, before: int, message: JSONObject, during: int) -> None:
        at = self.requests.get(during)
        ts = self.lines[at].ts if at is not None else (self.lines[before].ts if before < len(self.lines) else 0.0)
        line = Interaction(seq=self.next_seq, kind="server-notification", message=message, ts=ts)
        self.next_seq += 1
        self.added.setdefault(before, []).append(line)

    def done(self) -> tuple[Interaction, ...]:
        out: list[Interaction] = []
        for n, inter in enumerate(self.lines):
            out.extend(self.added.get(n, ()))
            if n not in self.dropped:
                out.append(self.changed.get(n, inter))
        out.extend(self.added.get(len(self.lines), ()))
        return tuple(out)
