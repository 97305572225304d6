"""Verdicts: what one recorded request came to, given what ``compare`` found (replay and diff
both judge through here, so a verdict means the same everywhere)."""

from __future__ import annotations

from mcp_replay_action.compare.classes import finding as classed
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction, subject_of
from mcp_replay_action.model.results import Finding, InteractionResult, ResultList, Substitution
from mcp_replay_action.values.size import answer_bytes
from mcp_replay_action.wire.jsonrpc import is_failure

DETAIL_LIMIT = 300  # characters of a missing-response account kept in the finding


def judge(
    inter: Interaction,
    findings: tuple[Finding, ...],
    live: JSONObject | None,
    *,
    latency_ms: float | None = None,
    sent: JSONObject | None = None,
    substitutions: tuple[Substitution, ...] = (),
    noise: tuple[Finding, ...] = (),
    recorded_bytes: int | None = None,
    live_bytes: int | None = None,
) -> InteractionResult:
    """The verdict on one recorded request, given what compare found (``live`` None: no answer).

    ``sent`` is the request as really sent (after value threading), which names the interaction;
    ``substitutions`` are the recorded values it replaced."""
    # Imported here: a replay imports the compare engine only once its server is starting.
    from mcp_replay_action.compare.engine import status_for

    return InteractionResult(
        seq=inter.seq,
        line=inter.line,
        method=inter.method,
        name=inter.tool_name if sent is None else subject_of(sent),
        status=status_for(findings),
        findings=findings,
        latency_ms=latency_ms,
        recorded_latency_ms=inter.latency_ms,
        recorded_error=is_failure(inter.response),
        live_error=None if live is None else is_failure(live),
        substitutions=substitutions,
        noise=noise,
        recorded_bytes=_recorded_size(inter, recorded_bytes),
        live_bytes=live_bytes,
    )


def pass_into(
    results: ResultList,
    inter: Interaction,
    live: JSONObject,
    *,
    latency_ms: float | None = None,
    sent: JSONObject | None = None,
    recorded_bytes: int | None = None,
    live_bytes: int | None = None,
    substitutions: tuple[Substitution, ...] = (),
) -> None:
    """Append ``judge(inter, (), live, latency_ms=..., sent=...)`` to ``results``: a clean pass;
    with nothing substituted (nearly every answer of a replay), packed straight in rather than
    built as an object."""
    if substitutions:
        results.append(
            judge(inter, (), live, latency_ms=latency_ms, sent=sent, substitutions=substitutions, live_bytes=live_bytes)
        )
        return
    results.append_plain(
        inter.seq,
        inter.line,
        inter.method,
        inter.tool_name if sent is None else subject_of(sent),
        "pass",  # status_for(()): no finding
        latency_ms=latency_ms,
        recorded_latency_ms=inter.latency_ms,
        recorded_error=is_failure(inter.response),
        live_error=is_failure(live),
        recorded_bytes=_recorded_size(inter, recorded_bytes),
        live_bytes=live_bytes,
    )


def _recorded_size(inter: Interaction, given: int | None) -> int | None:
    """``given``, or the size of ``inter``'s recorded answer: a request not sent or not answered
    still has the size it was recorded with."""
    if given is not None or inter.response is None:
        return given
    return answer_bytes(inter.response)


def missing_finding(detail: str) -> Finding:
    """The finding for a request that got no answer, and why (one line)."""
    return classed("missing-response", "missing-response", "$", detail[:DETAIL_LIMIT])
