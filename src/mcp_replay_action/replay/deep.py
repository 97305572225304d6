"""An answer too deep to compare, refused with a finding that says how deep (``too-deep``).

The parser, the redactor and the comparison recurse per level of an answer, so one nested some
hundreds of levels deep ends in a ``RecursionError`` wherever it is first walked. Rather than
walk every answer first to measure it (every replay would pay for the rare one), the replay meets
the error where it happens, inside ``refused``, and only then measures the answer
(``values/depth.py``): the interaction gets a ``too-deep`` finding, and the replay goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mcp_replay_action.compare.classes import finding as classed
from mcp_replay_action.grade.verdict import judge
from mcp_replay_action.model import JSON
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding, ResultList
from mcp_replay_action.values.depth import depth_of, too_deep


def finding(depth: int, what: str = "the answer") -> Finding:
    """The ``too-deep`` finding for ``what``, nested ``depth`` levels deep."""
    return classed("too-deep", "structure-change", "$", too_deep(what, depth))


@contextmanager
def refused(
    results: ResultList, inter: Interaction, live: Callable[[], JSON], before: Callable[[], None] | None = None
) -> Iterator[None]:
    """Judge ``inter`` with a ``too-deep`` finding when what runs inside meets a RecursionError:
    the deeper of its recorded answer and ``live()`` (the live one, None if none came) is named.
    ``before`` runs first (the replay judges an earlier answer still pending: results stay in
    recorded order)."""
    try:
        yield
    except RecursionError:
        if before is not None:
            before()
        answer = live()
        recorded, seen = depth_of(inter.response), depth_of(answer)
        what = "the recorded answer" if recorded > seen else "the answer"
        # Its sizes are left out: measuring them would recurse too.
        results.append(judge(inter, (finding(max(recorded, seen), what),), {}, recorded_bytes=0, live_bytes=0))
