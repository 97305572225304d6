"""An answer measured against its recording beyond its content: how long it took (``latency``,
``--max-slowdown``) and how large it is (``size``, ``--max-growth``). What ``--repeat`` may send
again to time it is ``repeat.py``.
"""

from __future__ import annotations

from mcp_replay_action.compare.classes import finding as classed
from mcp_replay_action.model.results import Finding
from mcp_replay_action.values.size import over_floor, tokens

# A slower answer is only flagged above this many milliseconds: a 1 ms call that takes 3 ms is
# scheduling noise, not a regression.
LATENCY_FLOOR_MS = 50.0


def slowdown(recorded_ms: float | None, live_ms: float, max_slowdown: float | None) -> Finding | None:
    """A ``latency`` finding when the live answer took more than ``max_slowdown`` times its
    recorded latency and more than ``LATENCY_FLOOR_MS``; None otherwise (or with no recording)."""
    if max_slowdown is None or not recorded_ms or recorded_ms <= 0 or live_ms <= LATENCY_FLOOR_MS:
        return None
    factor = live_ms / recorded_ms
    if factor <= max_slowdown:
        return None
    message = (
        f"{factor:.1f}x slower than recorded: live {live_ms:.0f} ms, recorded {recorded_ms:.0f} ms"
        f" (limit {max_slowdown:g}x)"
    )
    return classed("latency", "latency", "$", message, before=round(recorded_ms, 3), after=round(live_ms, 3))


def growth(recorded_bytes: int | None, live_bytes: int, max_growth: float | None) -> Finding | None:
    """A ``size`` finding when the live answer (``live_bytes``) is more than ``max_growth`` times
    its recorded size and over the size floor (``over_floor``); None otherwise (or with no recording)."""
    if max_growth is None or recorded_bytes is None or not over_floor(live_bytes):
        return None
    recorded_bytes = max(1, recorded_bytes)
    factor = live_bytes / recorded_bytes
    if factor <= max_growth:
        return None
    message = (
        f"{factor:.1f}x larger than recorded: live {live_bytes:,} bytes (~{tokens(live_bytes):,} tokens),"
        f" recorded {recorded_bytes:,} bytes (~{tokens(recorded_bytes):,} tokens) (limit {max_growth:g}x)"
    )
    return classed("size", "size", "$", message, before=recorded_bytes, after=live_bytes)
