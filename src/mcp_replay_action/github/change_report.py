"""The account of a refresh: which cassettes were rewritten, and per interaction what changed,
classified (breaking, additive, cosmetic) with a capped diff. It is the refresh pull request's
body and the job summary, rendered from ``templates/refresh.md``.

As for the comment, ``change_view`` turns the replay report into strings that are already safe
Markdown (``md_cell`` for one-line text, ``md_code_block`` for diffs), so the template cannot
forget an escape; ``render_change_report`` shows fewer changes and diffs until the body fits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mcp_replay_action import __version__
from mcp_replay_action.github.template import _SHA, DETAIL_LIMIT, MARGIN, PATH_LIMIT, Links, template_named
from mcp_replay_action.model.results import CLASS_ORDER, CassetteResult, Finding, InteractionResult, Report
from mcp_replay_action.report import _format
from mcp_replay_action.values.safe import md_cell, md_code_block

MAX_BODY_CHARS = 65536  # GitHub's limit for a pull request body


@dataclass(frozen=True)
class Rewritten:
    """What the refresh did to one cassette (``path`` relative to the workspace)."""

    path: str
    rewritten: int  # interactions whose recorded response was replaced
    kept: int  # interactions that changed but got no live answer, left as recorded


@dataclass(frozen=True)
class ChangeRow:
    where: str
    interaction: str
    cls: str
    kind: str
    detail: str


@dataclass(frozen=True)
class DiffBlock:
    title: str
    block: str


@dataclass(frozen=True)
class CassetteChanges:
    path: str
    rewritten: int
    breaking: int
    additive: int
    cosmetic: int
    kept: int
    changes: tuple[ChangeRow, ...]
    hidden_changes: int
    diffs: tuple[DiffBlock, ...]


@dataclass(frozen=True)
class ChangeView:
    headline: str
    cassettes: tuple[CassetteChanges, ...]
    hidden_cassettes: int
    kept_note: str
    run_url: str
    sha: str
    version: str


def change_view(
    report: Report,
    rewritten: Sequence[Rewritten],
    *,
    links: Links | None = None,
    max_cassettes: int = 100,
    max_changes: int = 50,
    max_diffs: int = 10,
    diff_limit: int = 1500,
) -> ChangeView:
    """The view of a refresh for the template: every rewritten cassette, its changed
    interactions worst first, and a capped diff for each of the first ``max_diffs``."""
    links = links or Links()
    results = {c.path: c for c in report.cassettes}
    shown = [r for r in rewritten if r.rewritten or r.kept][:max_cassettes]
    cassettes = tuple(_cassette(r, results.get(r.path), links, max_changes, max_diffs, diff_limit) for r in shown)
    total = sum(r.rewritten for r in rewritten)
    kept = sum(r.kept for r in rewritten)
    n = sum(1 for r in rewritten if r.rewritten)
    classes = {cls: sum(getattr(c, cls) for c in cassettes) for cls in CLASS_ORDER}
    counted = ", ".join(f"{classes[cls]} {cls}" for cls in CLASS_ORDER if classes[cls])
    target = md_cell(_format.public_target(report.target), PATH_LIMIT) if report.target else "the server"
    headline = (
        f"{n} of {len(report.cassettes)} cassette{'s' if len(report.cassettes) != 1 else ''} re-recorded against "
        f"{target}: {total} interaction{'s' if total != 1 else ''} changed" + (f" ({counted})." if counted else ".")
    )
    return ChangeView(
        headline=headline,
        cassettes=cassettes,
        hidden_cassettes=len([r for r in rewritten if r.rewritten or r.kept]) - len(shown),
        kept_note=(
            f"{kept} interaction{'s' if kept != 1 else ''} got no answer from the server and kept "
            "the recorded response: look at the job log before merging."
            if kept
            else ""
        ),
        run_url=links.run_url,
        sha=f"`{links.sha[:12]}`" if _SHA.fullmatch(links.sha) else "",
        version=__version__,
    )


def render_change_report(
    report: Report, rewritten: Sequence[Rewritten], *, links: Links | None = None, limit: int = MAX_BODY_CHARS
) -> str:
    """The body for ``report``'s refresh, at most ``limit - MARGIN`` characters."""
    budget = limit - MARGIN
    body = ""
    for max_changes, max_diffs, diff_limit in ((50, 10, 1500), (20, 5, 800), (10, 2, 400), (3, 0, 0), (0, 0, 0)):
        view = change_view(
            report, rewritten, links=links, max_changes=max_changes, max_diffs=max_diffs, diff_limit=diff_limit
        )
        body = template_named("refresh.md").render(view.__dict__)
        if len(body) <= budget:
            return body
    note = "\n\n> Cut to fit GitHub's limit; the job summary and the JSON report have everything.\n"
    cut = body[: budget - len(note)]
    return cut[: cut.rfind("\n") + 1] + note


def _cassette(
    rewritten: Rewritten,
    result: CassetteResult | None,
    links: Links,
    max_changes: int,
    max_diffs: int,
    diff_limit: int,
) -> CassetteChanges:
    found = _changes(result) if result is not None else []
    counts = {cls: sum(1 for _, f in found if f.cls == cls) for cls in CLASS_ORDER}
    rows = tuple(_row(rewritten.path, r, f, links) for r, f in found[:max_changes])
    diffs = tuple(_diff(r, f, diff_limit) for r, f in found[:max_diffs] if diff_limit)
    return CassetteChanges(
        path=md_cell(rewritten.path, PATH_LIMIT),
        rewritten=rewritten.rewritten,
        breaking=counts["breaking"],
        additive=counts["additive"],
        cosmetic=counts["cosmetic"],
        kept=rewritten.kept,
        changes=rows,
        hidden_changes=max(0, len(found) - max_changes),
        diffs=diffs,
    )


def _changes(result: CassetteResult) -> list[tuple[InteractionResult, Finding]]:
    """Every finding of every interaction that differed, worst class first, then file order."""
    found = [(r, f) for r in result.results if r.findings for f in r.findings]
    found.sort(key=lambda t: (CLASS_ORDER.index(t[1].cls) if t[1].cls in CLASS_ORDER else 9, t[0].line))
    return found


def _row(path: str, result: InteractionResult, finding: Finding, links: Links) -> ChangeRow:
    line = str(result.line) if result.line else ""
    url = links.blob(path, result.line) if result.line else ""
    return ChangeRow(
        where=f"[{line}]({url})" if url else line,
        interaction=md_cell(_format.interaction_title(result), DETAIL_LIMIT // 2),
        cls=md_cell(finding.cls, 20),
        kind=md_cell(finding.kind, 40),
        detail=md_cell(_format.finding_line(finding), DETAIL_LIMIT),
    )


def _diff(result: InteractionResult, finding: Finding, limit: int) -> DiffBlock:
    if finding.diff:
        text = finding.diff
    else:
        text = (
            f"@@ {finding.path} @@\n- {_format.show_value(finding.before, limit)}\n"
            f"+ {_format.show_value(finding.after, limit)}"
        )
    title = md_cell(f"line {result.line}: {_format.interaction_title(result)} ({finding.kind})", DETAIL_LIMIT)
    return DiffBlock(title=title, block=md_code_block(text, limit, "diff"))
