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
from dataclasses import dataclass, field, replace
from functools import lru_cache

import jinja2

from mcp_replay_action import __version__
from mcp_replay_action.github.accept import Accept
from mcp_replay_action.model.results import CLASS_ORDER, KIND_ORDER, CassetteResult, Finding, InteractionResult, Report
from mcp_replay_action.report import _format
from mcp_replay_action.report.markdown import coverage_lines
from mcp_replay_action.values.safe import md_cell, md_code_block

MAX_COMMENT_CHARS = 65536
MARGIN = 512  # room for GitHub counting a few characters differently than Python
PATH_LIMIT = 120
DETAIL_LIMIT = 200
_SHA = re.compile(r"[0-9a-f]{7,64}")
_URL = re.compile(r"https?://[A-Za-z0-9.:-]+/[A-Za-z0-9._~/-]*")  # our own links: no Markdown in them
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
    verdict: str  # passed | failed (the rules that failed): the gate's word
    grade: str
    score: str
    rules: str  # each gate rule and whether it held
    totals: str
    coverage: str  # Markdown lines, every server name an inert cell (``markdown.coverage_lines``)
    capped: bool
    breaking_capped: bool
    rows: tuple[Row, ...]  # cassettes that did not pass, worst first
    passing_rows: tuple[Row, ...]  # folded under them
    hidden_rows: int
    hidden_rows_note: str
    findings: tuple[FindingRow, ...]
    hidden_findings: int
    run_url: str
    sha: str
    version: str
    note: str = ""
    explored: str = ""  # safe Markdown (``exploration.exploration_block``): a baseline's exploration
    what_to_do: str = ""  # safe Markdown (``what_to_do``): how to accept the change, or fix it
    state: str = ""  # the hidden line saying the gate and commit, read back by a refresh


@dataclass(frozen=True)
class Links:
    """Where links in the comment point (all from the runner's environment, never from a server),
    and how to accept a change (``accept.accept_for``)."""

    server_url: str = ""
    repository: str = ""
    sha: str = ""
    run_url: str = ""
    accept: Accept = field(default_factory=Accept)
    # The cassettes that are files of the repository: a baseline's exploration is not one, and
    # gets no link (None: every path is).
    files: frozenset[str] | None = None

    def blob(self, path: str, line: int | None) -> str:
        """A link to a cassette line at the commit, or empty when the facts are missing."""
        if not (self.server_url and self.repository and _SHA.fullmatch(self.sha)):
            return ""
        if self.files is not None and path not in self.files:
            return ""
        url = f"{self.server_url}/{self.repository}/blob/{self.sha}/{urllib.parse.quote(path, safe='/')}"
        return url + (f"#L{line}" if line else "")


def state_line(passed: bool, sha: str, *, error: bool = False) -> str:
    """``<!-- mcp-replay-state gate=failed sha=<sha> -->``: what a refresh reads back from our
    comments to find the pull requests that fail (``refresh.failing_pulls``); ``gate=error``
    when the run could not complete (a refresh would not help there)."""
    shown = sha if _SHA.fullmatch(sha) else ""
    gate = "error" if error else "passed" if passed else "failed"
    return f"<!-- mcp-replay-state gate={gate} sha={shown} -->"


STATE_RE = re.compile(r"<!-- mcp-replay-state gate=(passed|failed|error) sha=([0-9a-f]*) -->")


def what_to_do(accept: Accept, *, failed: bool, accepted: int = 0) -> str:
    """How to accept the change (the refresh workflow on the named branch, the local command) as
    safe Markdown, for the comment and the job summary; empty when there is nothing to accept."""
    if not failed and not accepted:
        return ""
    text = template_named("accept.md").render(
        failed=failed,
        accepted=accepted,
        workflow_url=accept.workflow_url if _URL.fullmatch(accept.workflow_url) else "",
        branch=md_cell(accept.branch, PATH_LIMIT),
        fork=accept.fork,
        command=md_code_block(accept.command, 4000, "sh") if accept.command else "",
        baseline=accept.baseline,
    )
    return text.strip() + "\n"


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
    gate, grade = report.gate, report.score.grade
    cassettes = _format.worst_first(report.cassettes)
    shown = [c for c in cassettes if include_passing or _format.cassette_status(c) != "pass"][:max_rows]
    hidden = len(cassettes) - len(shown)
    findings = _top_findings(report)
    rows = tuple(_row(c) for c in shown)
    return CommentView(
        marker=marker,
        icon="✅" if gate.passed else "❌",
        title_suffix=f" ({md_cell(comment_id, 64)})" if comment_id != "default" else "",
        verdict=md_cell(_format.verdict(gate, grade), DETAIL_LIMIT),
        grade=md_cell(grade, 2),
        score=_format.score_text(report.score.score),
        rules=md_cell(_format.rules_line(gate, grade), DETAIL_LIMIT * 2),
        totals=_format.totals_line(report),  # numbers and our words only
        # What the live server lists that no cassette calls, the names folded (inert cells); the
        # compact body (no findings) keeps only the headline line.
        coverage="\n".join(
            coverage_lines(report.coverage, names_shown=10 * max_findings)[: None if max_findings else 1]
        )
        if report.coverage is not None
        else "",
        capped=report.score.capped,
        breaking_capped=report.score.breaking_capped,
        rows=tuple(r for r in rows if r.status != _ICONS["pass"]),
        passing_rows=tuple(r for r in rows if r.status == _ICONS["pass"]),
        hidden_rows=hidden,
        hidden_rows_note=(
            "all passing"
            if all(_format.cassette_status(c) == "pass" for c in cassettes[len(shown) :])
            else "some not passing"
        ),
        findings=tuple(_finding_row(path, r, f, links) for path, r, f in findings[:max_findings]),
        hidden_findings=max(0, len(findings) - max_findings),
        run_url=links.run_url,
        sha=f"`{links.sha[:12]}`" if _SHA.fullmatch(links.sha) else "",
        version=__version__,
        what_to_do=what_to_do(links.accept, failed=not gate.passed, accepted=gate.accepted),
        state=state_line(gate.passed, links.sha),
    )


def render_comment(
    report: Report,
    *,
    marker: str,
    comment_id: str = "default",
    links: Links | None = None,
    limit: int = MAX_COMMENT_CHARS,
    compact: bool = False,
    explored: str = "",
) -> str:
    """The comment body for ``report``, at most ``limit - MARGIN`` characters. ``compact`` gives
    only the headline, the totals and the link (no table rows, no findings). ``explored``: safe
    Markdown saying what a baseline's exploration did, shown above the footer."""
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
        body = render(replace(view, explored=explored) if explored else view)
        if len(body) <= budget:
            return body
    note = "\n\n> Comment cut to fit GitHub's limit; the job summary and the JSON report have everything.\n"
    cut = body[: budget - len(note)]
    return cut[: cut.rfind("\n") + 1] + note


def render_could_not_run(
    reason: str,
    *,
    marker: str,
    comment_id: str = "default",
    links: Links | None = None,
    command: str = "",
    advice: str = "",
) -> str:
    """The comment of a run that could not complete (exit 3), so the pull request no longer shows
    an earlier verdict: ``reason`` (already redacted) in one inert line, ``advice`` (already
    redacted: the ``install`` input, for a server that lacked a dependency) as the thing to do,
    and ``command`` (the local replay) to see it on a developer's machine."""
    links = links or Links()
    return template_named("could_not_run.md").render(
        marker=marker,
        state=state_line(False, links.sha, error=True),
        title_suffix=f" ({md_cell(comment_id, 64)})" if comment_id != "default" else "",
        reason=md_cell(reason, DETAIL_LIMIT * 5),
        advice=md_cell(advice, DETAIL_LIMIT * 2),
        command=md_code_block(command, 4000, "sh") if command else "",
        run_url=links.run_url,
        sha=f"`{links.sha[:12]}`" if _SHA.fullmatch(links.sha) else "",
        version=__version__,
    )


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


def _row(cassette: CassetteResult) -> Row:
    return Row(
        status=_ICONS[_format.cassette_status(cassette)],
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
        kind=md_cell(f"{finding.cls} {finding.kind}", 60),
        detail=md_cell(" ".join([_format.finding_line(finding), *_format.diff_excerpt(finding.diff, 2)]), DETAIL_LIMIT),
    )
