"""The thresholds and sizes of every fast path in one place (``Limits``), and the one switch that
turns them all off, ``MCP_REPLAY_FAST=0``, read in ``Limits.from_env`` alone (into
``CompareOptions.limits``). A ``Limits`` is passed by hand to whatever reads it (the narrowing, a
read-ahead, a ``Redactor``): no module keeps a threshold of its own, and a test that wants small
ones passes a ``Limits`` of its own. See ``values/prepared.py`` for the seam the fast paths sit
behind."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mcp_replay_action.errors import ConfigError

FAST_ENV = "MCP_REPLAY_FAST"


@dataclass(frozen=True)
class Limits:
    """The thresholds of the fast paths, in one place. ``fast`` False turns every fast path off
    (read-ahead, decoding beside, narrowing, learned redaction, the long-text searches of
    redaction, the one-leaf shortcut): the plain path runs, the reference the fast ones are
    tested against."""

    fast: bool = True
    # Two differing JSON texts at least this long (each) are narrowed at text level
    # (``narrow.py``) before they are parsed: only the containers around the bytes that differ.
    narrow_min_chars: int = 1 << 16
    # A run of at least this many shared items of an array is one ``narrow.Stretch``.
    stretch_min: int = 256
    # The narrowing reads a member from windows of these sizes before it walks it (``narrow._fit``).
    narrow_windows: tuple[int, ...] = (1024, 16384, 262144)
    # The narrowing reads shared array items in runs of about this many characters, one parse each.
    run_chars: int = 65536
    # Commas tried, from a run's end back, before the narrowing reads the items one by one.
    run_tries: int = 8
    # A recorded text shorter than this is narrowed in a few milliseconds: not read ahead.
    read_ahead_chars: int = 1 << 20
    # A line that grows this long is read beside the text it most likely holds (``beside.py``);
    # a shorter one costs less to decode than to ask about.
    beside_from: int = 1 << 20
    # A recorded text at least this long is learned for redaction (``Redactor.learn``).
    learn_min_chars: int = 1 << 16
    # A text this long keeps its redaction hint searches and is searched as bytes (``redact._Hints``).
    long_text_chars: int = 1 << 16

    # The one-leaf shortcut (``compare.engine.one_leaf``): two answers that differ at one leaf
    # are compared there without DeepDiff.
    one_leaf: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The default limits, with every fast path off when ``MCP_REPLAY_FAST`` is ``0``, or
        the named ones off when it lists them (``MCP_REPLAY_FAST=-narrow,-learn``: see ``PATHS``,
        for measuring what each path earns): the one place that reads the switch."""
        value = (os.environ if environ is None else environ).get(FAST_ENV, "").strip()
        if value == "0":
            return cls(fast=False)
        off = [name.strip().lstrip("-") for name in value.split(",") if name.strip().startswith("-")]
        unknown = [name for name in off if name not in PATHS]
        if unknown:
            raise ConfigError(f"{FAST_ENV}: no fast path named {unknown[0]!r} (known: {', '.join(PATHS)})")
        limits = cls()
        for name in off:
            limits = PATHS[name](limits)
        return limits


_NEVER = 1 << 62  # a threshold no text reaches: the path it gates never runs

# Each fast path by name, and how to turn it alone off.
PATHS: dict[str, Callable[[Limits], Limits]] = {
    "read_ahead": lambda limits: dataclasses.replace(limits, read_ahead_chars=_NEVER),
    "beside": lambda limits: dataclasses.replace(limits, beside_from=_NEVER),
    "narrow": lambda limits: dataclasses.replace(limits, narrow_min_chars=_NEVER),
    "stretch": lambda limits: dataclasses.replace(limits, stretch_min=_NEVER),
    "learn": lambda limits: dataclasses.replace(limits, learn_min_chars=_NEVER),
    "long_text": lambda limits: dataclasses.replace(limits, long_text_chars=_NEVER),
    "one_leaf": lambda limits: dataclasses.replace(limits, one_leaf=False),
}
