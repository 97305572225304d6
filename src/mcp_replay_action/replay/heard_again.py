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

A changed text varies at the token, as an answer does (``compare/noise.py``): a log message
``sync job j_5f7d (3 notes)`` that is ``sync job j_9e37`` on the first start and ``sync job j_04c1``
on the second varied in its job id, not in the clause it dropped. So a changed log message (its
level, logger and data, strings nested in the data too), a changed last progress message and a
request to the client asked with changed params (an elicitation's message) are learned as the
answers' noise rules learn two live answers: the tokens that varied between the two
starts become wildcards, and the finding is noise only when those rules explain every difference
from the recording. With no message lined up with it on the second start, nothing was seen to
vary: it stays a finding. A value an answer minted and a later request quoted is threaded, not
noise (``carry.py``): the recording is compared as the live server should send it, and the second
start's messages spelled with the first start's values (``spelled``), so it never varies here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.results import Finding

if TYPE_CHECKING:
    from mcp_replay_action.compare.carry import Carry


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
    varied = [
        f
        for f in compare_heard(recorded, first, options)
        if f not in repeated and not _past_tokens(f, recorded, first, again, options)
    ]
    return tuple(f for f in findings if f not in varied), tuple(f for f in findings if f in varied)


def _past_tokens(
    finding: Finding,
    recorded: Sequence[JSONObject],
    first: Sequence[JSONObject],
    again: Sequence[JSONObject],
    options: CompareOptions,
) -> bool:
    """Whether ``finding``, a changed text that varied between the two starts, differs from the
    recording by more than the tokens that varied (the module's doc). False for a finding about no
    text (a notice's presence, a progress count): the whole finding varied."""
    from mcp_replay_action.compare.notifications import compared_at

    seen = compared_at(finding, recorded, first, options) if finding.kind == "value-change" else None
    if seen is None:
        return False
    seen_again = compared_at(finding, recorded, again, options)
    if seen_again is None:
        return True
    from mcp_replay_action.compare import noise
    from mcp_replay_action.compare.engine import compare

    was, live = seen
    differ = compare(was, live, options)
    kept, _ = noise.split(differ, noise.learn([live, seen_again[1]], options), was, options, live)
    return bool(kept) or not differ


def spelled(
    messages: Sequence[JSONObject] | None, theirs: Carry | None, mine: Carry | None
) -> Sequence[JSONObject] | None:
    """``messages``, the second start's, with each value it threaded (``theirs``) spelled as the
    first start threaded it (``mine``): each start mints its own ids (``carry.translated``)."""
    if messages is None or not theirs or not mine:
        return messages
    from mcp_replay_action.compare.carry import translated

    return cast(list[JSONObject], translated(theirs, mine, list(messages)))
