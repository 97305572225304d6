"""How to compare (``CompareOptions``), apart from the comparison itself: a replay decides its
options, and checks every ``--ignore-path``, before any server is spoken to (the CLI's first
server may be starting meanwhile: ``early.py``), and the compare engine (``compare.py``,
``normalize.py``) is imported only once an answer differs from its recording.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from mcp_replay_action.model import JSON
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.paths import parse_path


class RuleUse:
    """Which ``--ignore-path`` / ``--ignore-key`` rules have removed something, accumulated over
    one run by every normalisation under the options that hold it (``CompareOptions.rule_use``):
    ``unused`` names the others, for the warning that a rule matched nothing."""

    __slots__ = ("matched",)

    def __init__(self) -> None:
        self.matched: set[tuple[str, str]] = set()

    def unused(self, ignore_paths: Iterable[str], ignore_keys: Iterable[str]) -> list[tuple[str, str]]:
        """The rules among these that matched nothing so far, as (flag, rule)."""
        rules = [("--ignore-path", p) for p in ignore_paths] + [("--ignore-key", k) for k in ignore_keys]
        return [rule for rule in rules if rule not in self.matched]


@dataclass(frozen=True)
class CompareOptions:
    """How to compare: paths and keys to ignore, and whether list order matters.

    ``ignore_paths`` use the notation in the module docstring (``result.content[].text`` or
    ``$.result.content[0].text``); ``ignore_keys`` drop a key at any depth. A bad path raises
    ``ConfigError`` here, before any server is spoken to.
    """

    ignore_paths: tuple[str, ...] = ()
    ignore_keys: tuple[str, ...] = ()
    allow_reorder: bool = False
    # Methods of server notifications (and requests to the client) left out of the comparison
    # (``--ignore-notifications``; ``progress`` is short for ``notifications/progress``).
    ignore_notifications: tuple[str, ...] = ()
    # When the answers were recorded (epoch seconds): a date more than a year from these and from
    # today is data and compared, a nearer one is the clock and masked (see ``normalize``).
    moments: tuple[float, ...] = ()
    # Seconds one comparison may take (a replay passes its --timeout, the request's time): past
    # it, the comparison stops at its next step with one finding that says so, never a hang.
    # None: no bound.
    budget: float | None = None
    # The thresholds of the fast paths, and the switch that turns them off (``prepared.Limits``).
    limits: Limits = field(default_factory=Limits.from_env, compare=False)
    # The ignore rules that matched in this run (shared by every copy ``at`` makes).
    rule_use: RuleUse = field(default_factory=RuleUse, compare=False, repr=False)

    def at(self, *recorded_at: JSON) -> CompareOptions:
        """These options with the recording moments named by cassette headers (``recorded_at``)."""
        moments = [m for m in (parse_moment(r) for r in recorded_at) if m is not None]
        return replace(self, moments=(*self.moments, *moments)) if moments else self

    def __post_init__(self) -> None:
        # Accept any iterable of strings (click hands over tuples, callers lists).
        object.__setattr__(self, "ignore_paths", tuple(self.ignore_paths))
        object.__setattr__(self, "ignore_keys", tuple(self.ignore_keys))
        object.__setattr__(self, "ignore_notifications", tuple(self.ignore_notifications))
        object.__setattr__(self, "moments", tuple(self.moments))
        for pattern in self.ignore_paths:
            parse_path(pattern)


def parse_moment(value: JSON) -> float | None:
    """Epoch seconds from a header's ``recorded_at`` (ISO-8601, ``Z`` allowed), or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()
