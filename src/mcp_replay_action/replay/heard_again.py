"""What the server sent besides its answers, heard again on a second fresh start: the confirmation
pass's rule for notifications (``engine._confirmed``), as ``compare/noise.py`` is its rule for answers.

A difference in what the server sent (a request's progress, or over the session its log messages,
change notices and requests to the client: ``replay/heard.py``) is noise when a second fresh start
of the same build does not repeat it. The Go server mcp-cron (npm ``mcp-cron-linux-amd64``)
registers its tools in a race with the session, so its ``notifications/tools/list_changed`` is
missing on about 1 start in 13: a replay of an unchanged build must not fail on that start.

Repeated means that the second start's messages, compared with the same recording, give the very
same finding (same place, same values). So a notice the recording heard and both live starts
missed stays a finding, and so does a log message raised to ``warning`` on both; what is learned is
the one finding that varied (one method's presence, one log message, the progress count or last
value), never the rest of the session's messages. Both starts are judged against the recording,
not against each other, so a log message's place (its index in the recording,
``$.notifications.message[i]``) means the same on both sides.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.results import Finding


def unrepeated(
    findings: tuple[Finding, ...],
    recorded: Sequence[JSONObject] | None,
    first: Sequence[JSONObject] | None,
    again: Sequence[JSONObject] | None,
    options: CompareOptions,
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """``findings`` (a result's, of which those about notifications came from ``recorded``
    against ``first``, the first start's live messages, both redacted) parted into (kept, noise):
    noise is each notification finding that ``recorded`` against ``again`` (the second start's)
    does not give. Nothing is noise when either start's messages are unknown (None) or when the two
    starts sent the same."""
    if recorded is None or first is None or again is None or first == again:
        return findings, ()
    # Imported here, as in heard.py: the replay imports no comparison before its server starts.
    from mcp_replay_action.compare.notifications import compare_heard

    repeated = compare_heard(recorded, again, options)
    varied = [f for f in compare_heard(recorded, first, options) if f not in repeated]
    return tuple(f for f in findings if f not in varied), tuple(f for f in findings if f in varied)
