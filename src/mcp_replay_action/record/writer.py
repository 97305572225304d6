"""The cassette of a live recording, on disk as it is recorded: the one writer both recording
proxies (stdio and HTTP) put their tape through.

Each interaction is on disk the moment the tape places it (``Tape.place``: when it and everything
seen before it are complete, or after ``HOLD_SECONDS`` behind a request still open), appended as
one line (``cassette/journal.py``). What is only known later (the redactor's hit counts, the
``unanswered`` count, the HTTP lifecycle) lives in the header, rewritten when it changed, at most
every ``HEADER_EVERY`` seconds (and never more often than 20 times what the last rewrite took, so a
long recording's rewrites stay a small share of the time), and at the end; a line whose
interaction was answered after it was placed is rewritten with it. Every other line keeps its
bytes: the lines written during the session are the lines of the finished cassette.

A recorder killed with ``kill -9`` at any moment therefore loses only what was in flight: the
requests still open, and what the tape held back behind them (at most ``HOLD_SECONDS`` of it).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from mcp_replay_action.cassette.journal import Journal
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.record.tape import Tape

HOLD_SECONDS = 2.0  # how long an open request holds back the interactions seen after it
HEADER_EVERY = 2.0  # seconds between rewrites of a header that changed, while recording
TICK = 0.1  # how often the writer's thread looks for what time alone made ready

Meta = Callable[[Sequence[Interaction]], JSONObject]


class TapeWriter:
    """Puts ``tape`` on disk at ``path`` (None: nowhere, the cassette is only built) with the
    header ``meta(interactions)`` makes. ``start()`` runs a thread that writes what time made
    ready; ``flush()`` writes what is ready now (the proxies call it as messages pass);
    ``close()`` writes the rest and lets the file go. Thread-safe."""

    def __init__(
        self,
        tape: Tape,
        path: str | None,
        meta: Meta,
        *,
        hold: float = HOLD_SECONDS,
        header_every: float = HEADER_EVERY,
    ) -> None:
        self.tape = tape
        self.journal = Journal(path) if path else None
        self.hold = hold
        self.header_every = header_every
        self.meta_of = meta
        self.meta: JSONObject | None = None  # the header on disk (None: nothing written yet)
        self.error: OSError | None = None  # why the file could not be written (a full disk)
        self._header_due = 0.0  # monotonic time before which a changed header waits
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def saved(self) -> bool:
        """Whether the cassette is on disk (nothing is written until an interaction is complete)."""
        return self.journal is not None and self.journal.started

    def start(self) -> TapeWriter:
        self._thread = threading.Thread(target=self._run, daemon=True, name="record-write")
        self._thread.start()
        return self

    def flush(self, *, final: bool = False, header: bool = True) -> None:
        """Write every interaction ready now; with ``final`` (the session ended) everything
        complete, and the header as it stands. ``header=False``: a header that changed waits for
        the writer's thread (a proxy's pump must not copy the file before it forwards a line).
        A file that cannot be written is given up (``error``); the session goes on."""
        with self._lock:
            new = self.tape.place(hold=self.hold, final=final)
            amended = self.tape.amended()
            journal = self.journal
            if journal is None or journal.closed or self.error is not None:
                return
            try:
                if not journal.started:
                    if new:
                        self.tape.changed = False
                        self._rewrite(journal, new=new)
                    return
                due = final or (header and time.monotonic() >= self._header_due)
                if amended or (self.tape.changed and due):
                    self.tape.changed = False
                    changed = {inter.seq: inter for inter in amended}
                    self._rewrite(journal, changed=changed, new=new)
                elif new:
                    journal.append(new)
            except OSError as exc:
                self.error = exc

    def close(self) -> None:
        """Stop the thread, write what is complete and the final header, let the file go."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        self.flush(final=True)
        with self._lock:
            if self.journal is not None:
                try:
                    self.journal.close()
                except OSError as exc:
                    self.error = self.error or exc

    def _rewrite(
        self, journal: Journal, *, changed: dict[int, Interaction] | None = None, new: Sequence[Interaction] = ()
    ) -> None:
        started = time.monotonic()
        meta = self.meta_of(self.tape.placed())
        if meta == self.meta and not changed:
            journal.append(new)  # the counts moved, the header did not
        else:
            journal.rewrite(meta, changed, new)
            self.meta = meta
        took = time.monotonic() - started
        self._header_due = time.monotonic() + max(self.header_every, 20 * took)

    def _run(self) -> None:
        while not self._stop.wait(TICK):
            self.flush()
