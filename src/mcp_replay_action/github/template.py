"""The PR comment, built from ``templates/comment.md`` (Jinja2).

``comment_view`` turns a report into a view of strings that are already safe Markdown: every piece
of text from a server or a cassette goes through ``md_cell``, which keeps it to one inert line (no
table break, no HTML, no code span, no mention, no workflow command). The template only arranges
them, so forgetting an escape in the template is not possible.

``render_comment`` keeps the body under GitHub's 65,536 characters by showing fewer rows and
findings, worst first, and cuts hard (with a note) only as a last resort.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache

import jinja2

from mcp_replay_action import __version__
from mcp_replay_action.report import _format
from mcp_replay_action.report.safe import md_cell
from mcp_replay_action.results import CLASS_ORDER, KIND_ORDER, CassetteResult, Finding, InteractionResult, Report

MAX_COMMENT_CHARS = 65536
MARGIN = 512  # room for GitHub counting a few characters differently than Python
PATH_LIMIT = 120
DETAIL_LIMIT = 200
_SHA = re.compile(r"[0-9a-f]{7,64}")
_ICONS = {"pass": "✅", "fail": "❌", "error": "⛔"}


@dataclass(frozen=True)
class Row:
    status: str
    path: str
    grade: str
    score: str
    passed: int
    failed: int
    missing: int


@dataclass(frozen=True)
class FindingRow:
    where: str
    interaction: str
    kind: str
    detail: str


@dataclass(frozen=True)
class CommentView:
    """Everything the template shows, as safe Markdown."""

    marker: str
    icon: str
    title_suffix: str
    grade: str
    score: str
    gate: str
    totals: str
    capped: bool
    breaking_capped: bool
    rows: tuple[Row, ...]
    hidden_rows: int
    hidden_rows_note: str
    findings: tuple[FindingRow, ...]
    hidden_findings: int
    run_url: str
    sha: str
    version: str
    note: str = ""
    refresh_url: str = ""  # where "Run workflow" starts a refresh; shown when the gate failed


@dataclass(frozen=True)
class Links:
    """Where links in the comment point (all from the runner's environment, never from a server)."""

    server_url: str = ""
    repository: str = ""
    sha: str = ""
    run_url: str = ""
    refresh_url: str = ""  # the refresh workflow's page (``RunContext.workflow_url``)

    def blob(self, path: str, line: int | None) -> str:
        """A link to a cassette line at the commit, or empty when the facts are missing."""
        if not (self.server_url and self.repository and _SHA.fullmatch(self.sha)):
            return ""
        url = f"{self.server_url}/{self.repository}/blob/{self.sha}/{urllib.parse.quote(path, safe='/')}"
        return url + (f"#L{line}" if line else "")


def comment_view(
    report: Report,
    *,
    marker: str,
    comment_id: str = "default",
    links: Links | None = None,
    max_rows: int = 200,
    include_passing: bool = True,
    max_findings: int = 10,
) -> CommentView:
    """The view of ``report`` for the comment template."""
    links = links or Links()
    passed_gate = report.gate.passed
    cassettes = sorted(report.cassettes, key=_cassette_rank)
    shown = [c for c in cassettes if include_passing or _status(c) != "pass"][:max_rows]
    hidden = len(cassettes) - len(shown)
    findings = _top_findings(report)
    return CommentView(
        marker=marker,
        icon="✅" if passed_gate else "❌",
        title_suffix=f" ({md_cell(comment_id, 64)})" if comment_id != "default" else "",
        grade=md_cell(report.score.grade, 2),
        score=_format.score_text(report.score.score),
        gate=md_cell(_format.gate_line(report.gate), DETAIL_LIMIT * 2),
        totals=_format.totals_line(report),  # numbers and our words only
        capped=report.score.capped,
        breaking_capped=report.score.breaking_capped,
        rows=tuple(_row(c) for c in shown),
        hidden_rows=hidden,
        hidden_rows_note="all passing" if all(_status(c) == "pass" for c in cassettes[len(shown) :]) else "not shown",
        findings=tuple(_finding_row(path, r, f, links) for path, r, f in findings[:max_findings]),
        hidden_findings=max(0, len(findings) - max_findings),
        run_url=links.run_url,
        sha=f"`{links.sha[:12]}`" if _SHA.fullmatch(links.sha) else "",
        version=__version__,
        refresh_url="" if passed_gate else links.refresh_url,
    )


def render_comment(
    report: Report,
    *,
    marker: str,
    comment_id: str = "default",
    links: Links | None = None,
    limit: int = MAX_COMMENT_CHARS,
    compact: bool = False,
) -> str:
    """The comment body for ``report``, at most ``limit - MARGIN`` characters. ``compact`` gives
    only the headline, the totals and the link (no table rows, no findings)."""
    budget = limit - MARGIN
    attempts: tuple[tuple[int, bool, int], ...] = (
        (200, True, 10),
        (200, False, 10),
        (50, False, 5),
        (20, False, 3),
        (5, False, 1),
        (0, False, 0),
    )
    if compact:
        attempts = attempts[-1:]
    body = ""
    for max_rows, include_passing, max_findings in attempts:
        view = comment_view(
            report,
            marker=marker,
            comment_id=comment_id,
            links=links,
            max_rows=max_rows,
            include_passing=include_passing,
            max_findings=max_findings,
        )
        body = render(view)
        if len(body) <= budget:
            return body
    note = "\n\n> Comment cut to fit GitHub's limit; the job summary and the JSON report have everything.\n"
    cut = body[: budget - len(note)]
    return cut[: cut.rfind("\n") + 1] + note


def render(view: CommentView) -> str:
    """Fill the comment template with ``view``."""
    return template_named("comment.md").render(view.__dict__)


@lru_cache(maxsize=4)
def template_named(name: str) -> jinja2.Template:
    """A template from ``github/templates`` (Markdown: no autoescape, strict about names)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mcp_replay_action.github", "templates"),
        autoescape=False,  # Markdown, not HTML: the view's strings are escaped with md_cell
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    return env.get_template(name)


def _status(cassette: CassetteResult) -> str:
    if cassette.error or cassette.missing:
        return "error"
    return "fail" if cassette.failed else "pass"


def _cassette_rank(cassette: CassetteResult) -> tuple[int, float, str]:
    return ({"error": 0, "fail": 1, "pass": 2}[_status(cassette)], cassette.score.score, cassette.path)


def _row(cassette: CassetteResult) -> Row:
    return Row(
        status=_ICONS[_status(cassette)],
        path=md_cell(cassette.path, PATH_LIMIT),
        grade=md_cell(cassette.score.grade, 2),
        score=_format.score_text(cassette.score.score),
        passed=cassette.passed,
        failed=cassette.failed,
        missing=cassette.missing,
    )


def _top_findings(report: Report) -> list[tuple[str, InteractionResult, Finding]]:
    """Every finding of a failed or missing interaction, worst first."""
    out = [
        (cassette.path, result, finding)
        for cassette in report.cassettes
        for result in cassette.results
        if result.status in ("fail", "missing")
        for finding in result.findings
    ]
    out.sort(
        key=lambda t: (
            CLASS_ORDER.index(t[2].cls) if t[2].cls in CLASS_ORDER else len(CLASS_ORDER),
            KIND_ORDER.index(t[2].kind) if t[2].kind in KIND_ORDER else len(KIND_ORDER),
            t[0],
            t[1].line,
        )
    )
    return out


def _finding_row(path: str, result: InteractionResult, finding: Finding, links: Links) -> FindingRow:
    text = md_cell(f"{path}:{result.line}" if result.line else path, PATH_LIMIT)
    url = links.blob(path, result.line)
    return FindingRow(
        where=f"[{text}]({url})" if url else text,
        interaction=md_cell(_format.interaction_title(result), DETAIL_LIMIT // 2),
        kind=md_cell(finding.kind, 40),
        detail=md_cell(_format.finding_line(finding), DETAIL_LIMIT),
    )
