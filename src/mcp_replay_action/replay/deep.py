"""An answer too deep to compare, refused with a finding that says how deep (``too-deep``).

The parser, the redactor and the comparison recurse per level of an answer, so one nested some
hundreds of levels deep ends in a ``RecursionError`` wherever it is first walked. Rather than
walk every answer first to measure it (every replay would pay for the rare one), the replay meets
the error where it happens, inside ``refused``, and only then measures the answer
(``values/depth.py``): the interaction gets a ``too-deep`` finding, and the replay goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from types import TracebackType

from mcp_replay_action.compare.classes import finding as classed
from mcp_replay_action.grade.verdict import judge
from mcp_replay_action.model import JSON
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding, ResultList
from mcp_replay_action.values.depth import depth_of, too_deep


def finding(depth: int, what: str = "the answer") -> Finding:
    """The ``too-deep`` finding for ``what``, nested ``depth`` levels deep."""
    return classed("too-deep", "structure-change", "$", too_deep(what, depth))


class refused:  # noqa: N801 - used as ``with deep.refused(...)``, as the generator it replaces
    """Judge ``inter`` with a ``too-deep`` finding when what runs inside meets a RecursionError:
    the deeper of its recorded answer and ``live()`` (the live one, None if none came) is named.
    ``before`` runs first (the replay judges an earlier answer still pending: results stay in
    recorded order). A class, not a ``@contextmanager`` generator: every request and every answer
    enters one, and a generator's frame cost ~2 us of each."""

    __slots__ = ("results", "inter", "live", "before")

    def __init__(
        self,
        results: ResultList,
        inter: Interaction,
        live: Callable[[], JSON],
        before: Callable[[], None] | None = None,
    ) -> None:
        self.results, self.inter, self.live, self.before = results, inter, live, before

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> bool:
        if kind is None or not issubclass(kind, RecursionError):
            return False
        if self.before is not None:
            self.before()
        answer = self.live()
        inter = self.inter
        recorded, seen = depth_of(inter.response), depth_of(answer)
        what = "the recorded answer" if recorded > seen else "the answer"
        # Its sizes are left out: measuring them would recurse too.
        self.results.append(judge(inter, (finding(max(recorded, seen), what),), {}, recorded_bytes=0, live_bytes=0))
        return True
