"""Progress while a replay runs, on stderr: each cassette's result line as it finishes, and on a
terminal a live line for a long cassette (``cassettes/big.jsonl  1200 of 5000 interactions``).

The live line is drawn only when the stream is a terminal: a CI log (or any pipe) gets the
finished lines and nothing that rewrites itself. ``replay.run`` asks ``live`` for a cassette's
tick callback (None: no live line, and the engine does not count) and hands each finished
``CassetteResult`` to ``finished``, in the order cassettes finish (with ``--jobs``, not the order
of the paths). The full report is still printed at the end, by the console sink.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO

from mcp_replay_action.model.results import CassetteResult
from mcp_replay_action.report import _format
from mcp_replay_action.values.safe import no_workflow_commands, visible

LIVE_MIN = 100  # interactions: a shorter cassette is over before a live line would help
REDRAW_EVERY = 0.1  # seconds between two draws of the live line
_CLEAR = "\r\x1b[K"


def cassette_line(result: CassetteResult) -> str:
    """``PASS cassettes/a.jsonl: 12 passed, 0 failed, 0 missing, GRADE A (100.0/100)``."""
    failing = result.failed or result.missing or result.error
    head = "FAIL" if failing else "PASS"
    counts = f"{result.passed} passed, {result.failed} failed, {result.missing} missing"
    score = f"GRADE {result.score.grade} ({_format.score_text(result.score.score)}/100)"
    line = f"{head} {visible(result.path, 200)}: {counts}, {score}"
    if result.error:
        line += f"; {visible(result.error, 200)}"
    return no_workflow_commands(line)


class ConsoleProgress:
    """Progress on ``stream``: a line per finished cassette when ``lines`` (several cassettes: one
    would repeat the report that follows), the live line only when ``live`` (a terminal)."""

    def __init__(
        self, stream: TextIO, *, live: bool, lines: bool = True, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.stream = stream
        self.live_enabled = live
        self.lines = lines
        self.clock = clock
        self._drawn = False

    def live(self, path: str, total: int) -> Callable[[int], None] | None:
        """The tick callback for one cassette of ``total`` interactions, or None."""
        if not self.live_enabled or total < LIVE_MIN:
            return None
        shown = visible(path, 120)
        last = [float("-inf")]

        def tick(done: int) -> None:
            now = self.clock()
            if now - last[0] < REDRAW_EVERY and done < total:
                return
            last[0] = now
            self._write(f"{_CLEAR}{shown}  {done} of {total} interactions")
            self._drawn = True

        tick(0)
        return tick

    def finished(self, result: CassetteResult) -> None:
        text = (_CLEAR if self._drawn else "") + (cassette_line(result) + "\n" if self.lines else "")
        if text:
            self._write(text)
        self._drawn = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must not stop the replay
