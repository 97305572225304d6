"""A duration the server measured while it answered: volatile, like the clock, and never a reason
to start the server again.

A server that reports how long a call took (``"duration_seconds": 0.43``, ``"elapsedMs": 12``,
``"took": 0.2``) gives another number on every run, and before this every unchanged replay of it
failed its first pass and paid a second start to learn the number as noise. Such a number is told
from data by its key and by its size: the key names a duration (``duration``, ``elapsed``,
``took``, ``latency``, ``runtime``, or ``time`` after another word: ``queryTime``,
``processing_time``; a unit word last, ``_ms``, ``_seconds``, says the unit, and a key with none is
read in seconds), and the value, in that unit, is no longer than the call it came with took (less
half its last digit, which the server may have rounded up), in the recording and live alike
(``Interaction.latency_ms``, ``Answer.latency``). A call cannot have measured more than itself, so
a duration that fits is the server timing its own work; one that does not (a track's length, a
job's total reported by a later status call, an uptime) is compared as any value, and a
confirmation pass still learns it if it varies. A duration in prose ("indexed in 0.43 s") is left
to the confirmation pass, which learns the one word.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_replay_action.model.results import Finding

_DURATION_WORDS = frozenset({"duration", "elapsed", "took", "latency", "runtime"})
# "time" after one of these is a moment (``start_time``), not a length of time.
_MOMENT_WORDS = frozenset(
    {"start", "started", "end", "ended", "stop", "begin", "create", "created", "update", "updated", "modified"}
    | {"last", "first", "next", "local", "server", "current", "utc", "expiry", "expire", "expires", "due"}
)
_MS_PER_UNIT = {
    "ns": 1e-6,
    "nanos": 1e-6,
    "nanoseconds": 1e-6,
    "us": 1e-3,
    "usec": 1e-3,
    "micros": 1e-3,
    "microseconds": 1e-3,
    "ms": 1.0,
    "msec": 1.0,
    "millis": 1.0,
    "milliseconds": 1.0,
    "s": 1000.0,
    "sec": 1000.0,
    "secs": 1000.0,
    "seconds": 1000.0,
}


def ms_per_unit(key: str) -> float | None:
    """Milliseconds per unit of a value under ``key`` when the key names a duration, else None."""
    from mcp_replay_action.compare.masks import key_words  # here: an unchanged replay never loads the masks

    words = key_words(key)
    unit = _MS_PER_UNIT.get(words[-1]) if len(words) > 1 else None
    body = words[:-1] if unit is not None else words
    if _DURATION_WORDS.intersection(body):
        return unit or 1000.0
    if body and body[-1] == "time" and (unit is not None or len(body) > 1):
        # ``time_ms`` names its unit; ``queryTime`` a length, unless the word before is a moment's.
        if len(body) == 1 or body[-2] not in _MOMENT_WORDS:
            return unit or 1000.0
    return None


def _within(value: object, per_unit: float, latency_ms: float) -> bool:
    if type(value) is float:
        # A server rounds what it measured (0.43 for 0.425): half its last digit may be rounding up.
        digits = len(repr(value).partition(".")[2]) if "e" not in repr(value) else 0
        slack = 0.5 * 10.0**-digits * per_unit if digits else 0.0
        return 0 <= value * per_unit - slack <= latency_ms
    return type(value) is int and 0 <= value * per_unit <= latency_ms


def own_timing(findings: tuple[Finding, ...], recorded_ms: float | None, live_ms: float) -> tuple[Finding, ...]:
    """``findings`` less each changed number at a key naming a duration whose recorded value fits
    in the recorded call's time and whose live value fits in the live call's (see the module
    docstring). Without a recorded latency nothing is dropped."""
    if recorded_ms is None or not findings:
        return findings
    return tuple(f for f in findings if not _timed(f, recorded_ms, live_ms))


def _timed(finding: Finding, recorded_ms: float, live_ms: float) -> bool:
    if finding.kind != "value-change":
        return False
    from mcp_replay_action.errors import ConfigError
    from mcp_replay_action.values.paths import parse_path

    try:
        last = parse_path(finding.path)[-1]
    except ConfigError:  # a key cut short for printing: not one this can read
        return False
    per_unit = ms_per_unit(last[1]) if last[0] == "key" else None
    return (
        per_unit is not None
        and _within(finding.before, per_unit, recorded_ms)
        and _within(finding.after, per_unit, live_ms)
    )
