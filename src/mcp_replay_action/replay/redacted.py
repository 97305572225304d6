"""Every server text of a result through the cassette's redactor, in one place: finding
messages, before/after renderings, diffs, the error and the stderr tail, the listing coverage
read. ``replay_cassette`` calls it on each result it returns, so no sink ever needs to redact.
"""

from __future__ import annotations

from dataclasses import replace

from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, ResultList
from mcp_replay_action.redact import Redactor


def redacted_result(result: CassetteResult, redactor: Redactor) -> CassetteResult:
    """``result`` with every server-originated text passed through ``redactor``."""

    def redacted(r: InteractionResult) -> InteractionResult:
        if not (r.findings or r.noise):
            return r
        return replace(
            r,
            findings=tuple(redacted_finding(f, redactor) for f in r.findings),
            noise=tuple(redacted_finding(f, redactor) for f in r.noise),
        )

    # Only results with findings carry server text: the packed ones are shared, not copied.
    held = result.results
    results = held.with_whole(redacted) if isinstance(held, ResultList) else ResultList(map(redacted, held))
    return replace(
        result,
        results=results,
        error=redactor.apply(result.error),
        stderr_tail=redactor.apply(result.stderr_tail),
        listed=result.listed.redacted(redactor.apply) if result.listed is not None else None,
    )


def redacted_finding(finding: Finding, redactor: Redactor) -> Finding:
    return replace(
        finding,
        message=redactor.apply(finding.message),
        before=redactor.apply(finding.before),
        after=redactor.apply(finding.after),
        diff=redactor.apply(finding.diff),
    )
