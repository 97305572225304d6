"""A JSONL cassette written while it is recorded: whole on disk at every moment.

JSONL is made for appending. The first write makes the file through a temp file and a rename
(the header and the first lines at once, so an existing cassette is replaced only once there is
something to put in its place); each later interaction is appended as its own line, in one write;
the header (whose counts grow as a session goes) and a line whose interaction changed after it was
written are rewritten through a temp file and a rename, every other line copied byte for byte.

So a recorder killed at any moment (``kill -9``, a client's SIGKILL) leaves every line it wrote
whole. Only a line being written at that very moment can be cut short: ``load`` leaves such a
last line out and names it (``Cassette.cut_short``). What goes in is the recorder's to redact:
nothing here ever sees an unredacted value.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path

from mcp_replay_action.cassette.jsonl import header_line, interaction_line
from mcp_replay_action.host.files import atomic_write_text
from mcp_replay_action.model import JSON
from mcp_replay_action.model.cassette import Interaction


class Journal:
    """The file of one recording. ``start``/``rewrite`` write it whole, ``append`` adds lines;
    ``lines`` is how many interaction lines it holds. Not thread-safe: its writer holds a lock."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.lines = 0
        self.started = False  # whether the file has been written (nothing is, until there is a line)
        self.closed = False
        self._fd: int | None = None

    def append(self, interactions: Sequence[Interaction]) -> None:
        """Add one line per interaction after the last, in one write."""
        if not interactions:
            return
        if self._fd is None:
            raise RuntimeError("append to a journal not started, or closed")
        data = b"".join(_encoded(partial(interaction_line, i)) for i in interactions)
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        self.lines += len(interactions)

    def rewrite(
        self,
        meta: Mapping[str, JSON],
        changed: Mapping[int, Interaction] | None = None,
        new: Sequence[Interaction] = (),
    ) -> None:
        """The whole file anew, through a temp file and a rename: header ``meta``, the lines
        written so far as they are (except ``changed``: interaction index, from 0, to what that line
        now holds), then ``new``. The first call makes the file."""
        changed = changed or {}

        def pieces() -> Iterator[str]:
            yield _text(partial(header_line, meta))
            if self.started:
                with open(self.path, encoding="utf-8", newline="") as old:
                    next(old, None)  # the header
                    for index, text in enumerate(old):
                        if index >= self.lines:
                            break
                        inter = changed.get(index)
                        if inter is not None:
                            yield _text(partial(interaction_line, inter))
                        else:
                            yield text if text.endswith("\n") else text + "\n"
            for inter in new:
                yield _text(partial(interaction_line, inter))

        if self.closed:
            raise RuntimeError("rewrite of a closed journal")
        atomic_write_text(self.path, pieces())
        self._reopen()
        self.started = True
        self.lines += len(new)

    def close(self) -> None:
        """Flush the file to disk and let it go; it is written no more."""
        self.closed = True
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError:
                pass
            os.close(self._fd)
            self._fd = None

    def _reopen(self) -> None:
        # The rename put a new file in the old one's place: appends go to the new one.
        if self._fd is not None:
            os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)


def _text(make: Callable[..., str]) -> str:
    """The line ``make(escaped=...)`` spells, and its end, in a spelling UTF-8 can hold."""
    return _encoded(make).decode("utf-8")


def _encoded(make: Callable[..., str]) -> bytes:
    """``_text``'s line as bytes."""
    try:
        return (make(escaped=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (a server may send "\ud800") has no UTF-8 form: this line is written
        # with escapes, which read back to the same value.
        return (make(escaped=True) + "\n").encode("utf-8")
