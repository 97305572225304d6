"""An era the server refuses: a cassette sent in one protocol era to a server that speaks only
the other (a stateless cassette against a handshake-only build, or the reverse) fails its opening
request, and every request after it would fail the same way. That is one finding naming both eras
and what to do (``era_mismatch``), on the opening request, the rest skipped (``one_era_finding``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from mcp_replay_action.compare.classes import finding as classed
from mcp_replay_action.model.results import InteractionResult
from mcp_replay_action.wire.protocol import LIFECYCLE_METHODS, Era

_OPENERS = {"stateless": "server/discover", "handshake": "initialize"}


def era_mismatch(era: Era, results: Sequence[InteractionResult], translated: bool = False) -> str:
    """One message naming both eras when the server refused the opening request of the era the
    cassette was sent in (a stateless cassette against a handshake-only server, or the reverse;
    ``translated``: sent in that era by ``--era``), else empty."""
    at = _opener_index(era, results)
    if at is None:
        return ""
    opener = results[at]
    if opener.recorded_error or opener.live_error is not True:
        return ""
    other = "handshake" if era.name == "stateless" else "stateless"
    if translated:
        return (
            f"protocol era mismatch: this cassette was sent in the {era.name} era (--era {era.name}), and the "
            f"server refused {opener.method}: it speaks only the {other} era ({_OPENERS[other]}). Replay it with "
            f"--era {other} or --era recorded."
        )
    return (
        f"protocol era mismatch: this cassette was recorded in the {era.name} era "
        f"({era.protocol_version or 'unknown version'}, opened with {opener.method}), and the server refused "
        f"{opener.method}: it speaks only the {other} era ({_OPENERS[other]}). Re-record the cassette against "
        "this server, or replay it against a build that speaks the recorded era."
    )


def _opener_index(era: Era, results: Sequence[InteractionResult]) -> int | None:
    """Where the recorded era's opening request is: the first request, or the first after the
    lifecycle probes a client sent before it (the official SDKs probe ``server/discover`` and fall
    back to ``initialize`` when the recording server refused the probe; a probe not sent is passed
    over, as is one sent as ``server/discover`` by ``--era stateless``)."""
    opener = _OPENERS.get(era.name)
    for i, result in enumerate(results):
        if result.method == opener and result.status != "skipped":
            return i
        if result.method not in LIFECYCLE_METHODS:
            return None
    return None


def one_era_finding(results: Sequence[InteractionResult], era: Era, message: str) -> list[InteractionResult]:
    """The era mismatch as one finding on the opening request; the rest (a probe before it, every
    request after it), which could only fail the same way, are skipped instead of each reporting
    the same refusal."""
    at = _opener_index(era, results)
    return [
        replace(r, findings=(classed("era-refused", "error-status-change", "$", message),), status="fail")
        if i == at
        else replace(r, status="skipped", findings=(), noise=())
        for i, r in enumerate(results)
    ]
