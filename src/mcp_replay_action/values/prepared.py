"""The speed behind one seam: what a replay prepares for one awaited answer (``Prepared``),
passed by hand to whatever may use it; the thresholds of every fast path, and the one switch
``MCP_REPLAY_FAST=0`` that turns them all off, are ``Limits`` (``values/limits.py``).

Every fast path has a plain twin that is the reference: the plain path runs whenever a fast one
is off, unsure, or given nothing (``prepared=None``). A ``Prepared`` is made by the replay for the
answer it awaits, and carries:

* the long JSON text the answer most likely holds (the recording's, or in a confirming run the
  first run's live one): the transport decodes a long line beside it (``beside.py``);
* what was read of that text ahead, while the server worked (``narrow.ReadAhead``, read with the
  sizes of ``limits``), which the narrowing of the live text against it (with the same
  ``CompareOptions.limits``) takes instead of reading those runs again;
* what redaction learned of it (``Redactor.learn``), so that the live twin is redacted by looking
  only where the two differ;
* ``taken``: how often each fast path was taken for it (what the tests that compare a fast path
  with the plain one check, so that neither can pass by doing nothing).

It is handed to the transport's ``receive``, to ``compare`` and to ``Redactor.apply_beside``, then
closed. Nothing here is kept by a module or keyed by an object's id.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from typing import TYPE_CHECKING

from mcp_replay_action.model import JSON
from mcp_replay_action.values.limits import Limits

if TYPE_CHECKING:
    from mcp_replay_action.values.narrow import ReadAhead


class Prepared:
    """What the replay prepared for one awaited answer (see the module docstring). ``source`` is
    the value whose longest JSON text the answer most likely holds (the recorded answer, or a
    confirming run's first live one). Closed once the answer is compared."""

    __slots__ = ("limits", "source", "_text", "ahead", "learned", "steps", "taken")

    def __init__(self, limits: Limits, source: JSON) -> None:
        self.limits = limits
        self.source = source
        self._text: str | None | bool = False  # False: not looked for yet
        self.ahead: ReadAhead | None = None  # the text read ahead so far
        # What redaction learned of a text (``Redactor.learn``): the text, and by atom looked for,
        # whether it holds it.
        self.learned: tuple[str, dict[tuple[str, bool], bool]] | None = None
        self.steps: Iterator[None] | None = None  # what is left to do ahead (``replay.engine.ahead_steps``)
        self.taken: collections.Counter[str] = collections.Counter()

    def text(self) -> str | None:
        """The long JSON text the answer most likely holds (``narrow.long_json_text``), looked
        for once; None when there is none, or the fast paths are off."""
        if self._text is False:
            if not self.limits.fast:
                self._text = None
                return None
            from mcp_replay_action.values.narrow import long_json_text

            self._text = long_json_text(self.source, self.limits.read_ahead_chars)
        return self._text  # type: ignore[return-value]

    def beside(self, size: int) -> str | None:
        """For a transport: the text to decode a line of ``size`` bytes beside, or None."""
        if size < self.limits.beside_from:
            return None
        return self.text()

    def ahead_of(self, text: str) -> ReadAhead | None:
        """The read-ahead of this very ``text``, if one was made."""
        ahead = self.ahead
        return ahead if ahead is not None and ahead.text is text else None

    def learned_of(self, text: str) -> dict[tuple[str, bool], bool] | None:
        """What redaction learned of this very ``text``, if it was learned."""
        learned = self.learned
        return learned[1] if learned is not None and learned[0] is text else None

    def close(self) -> None:
        """Stop reading ahead and let go of all that was prepared (``taken`` stays)."""
        if self.ahead is not None:
            self.ahead.close()
        self.ahead = self.learned = self.steps = None
        self.source = None
        self._text = None
