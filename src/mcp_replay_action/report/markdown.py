"""The Markdown report (``--markdown FILE``; the job summary and PR comment build on it).

The verdict, grade and score first (the headline names the gate rule that failed), then the
cassettes worst first: per cassette a table of what did not pass (interaction, status, kind,
detail), its passing rows folded in ``<details>``, and the failures with their capped diffs folded
too; a cassette that passed whole is one folded section. Every piece of text from a server or a
cassette goes through ``safe.md_cell`` / ``safe.md_code_block``, so it cannot break the table or
the page, mention anyone, or form a workflow command.

The size is bounded by ``max_bytes`` (GitHub rejects a job summary over 1 MiB and a comment over
65,536 characters). Over the bound, passing rows go first, then the failure details, then whole
sections from the end, and a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_replay_action.model.coverage import Coverage
from mcp_replay_action.model.results import CassetteResult, InteractionResult, Report, Score
from mcp_replay_action.report import _format
from mcp_replay_action.values.safe import md_cell, md_code_block, no_workflow_commands

MAX_BYTES = 1_000_000
MIN_BYTES = 1024  # below this not even the headline and the truncation note fit
LABEL_LIMIT = 120
DETAIL_LIMIT = 300
FINDING_LIMIT = 500
FINDINGS_SHOWN = 20
DIFF_LIMIT = 3000
STDERR_LIMIT = 3000
NAMES_SHOWN = 200  # uncovered names listed per kind

_STATUS = {"pass": "✅ pass", "fail": "❌ fail", "missing": "⛔ missing", "skipped": "⏭️ skipped"}
_CHANGED = "⚠️ changed"  # failed, but nothing in it is breaking (``_format.status_tag``)


@dataclass(frozen=True)
class _Chunk:
    """A self-contained piece of the document: cutting between two chunks never leaves an open
    table row, code fence or ``<details>``."""

    text: str
    detail: bool = False  # failure details and stderr: the second thing dropped for size


def render(report: Report, *, max_bytes: int = MAX_BYTES, title: str = "mcp-replay", lead: str = "") -> str:
    """The report as GitHub-flavoured Markdown, at most ``max_bytes`` bytes of UTF-8.

    ``title`` starts the headline (``## ❌ mcp-replay failed (fail-on: breaking): grade B
    (80.0/100)``) and ``lead`` (what to do, for the job summary) follows it; both are our own
    Markdown, not escaped. ``max_bytes`` must be at least ``MIN_BYTES``."""
    if max_bytes < MIN_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_BYTES}, got {max_bytes}")
    full = _join(_chunks(report, title, lead, show_passing=True))
    if _size(full) <= max_bytes:
        return full
    no_passing = _chunks(report, title, lead, show_passing=False)
    text = _join(no_passing)
    if _size(text) <= max_bytes:
        return text
    note = (
        "\n> **Report shortened** to stay under {limit:,} bytes: passing interactions and failure "
        "details are not shown. The JSON report (--json) has everything.\n"
    )
    no_details = [c for c in no_passing if not c.detail]
    text = _join(no_details) + note.format(limit=max_bytes)
    if _size(text) <= max_bytes:
        return text
    cut_note = (
        "\n> **Report truncated** to stay under {limit:,} bytes: {n} more table row(s) or section(s) "
        "not shown, nor passing interactions and failure details. The JSON report (--json) has everything.\n"
    )
    budget = max_bytes - _size(cut_note.format(limit=max_bytes, n=len(no_details)))
    kept: list[_Chunk] = []
    used = 0
    for chunk in no_details:
        size = _size(no_workflow_commands(chunk.text))
        if used + size > budget:
            break
        kept.append(chunk)
        used += size
    return _join(kept) + cut_note.format(limit=max_bytes, n=len(no_details) - len(kept))


def _chunks(report: Report, title: str, lead: str, *, show_passing: bool) -> list[_Chunk]:
    """The headline, then the cassettes worst first; each passing cassette folded whole."""
    out = [_Chunk(_headline(report, title))]
    if lead:
        out.append(_Chunk(lead.rstrip("\n") + "\n\n"))
    for cassette in _format.worst_first(report.cassettes):
        chunks = _cassette_chunks(cassette, show_passing)
        if _format.cassette_status(cassette) == "pass":
            # One chunk, so a cut never leaves the fold open.
            summary = f"✅ {md_cell(cassette.path, DETAIL_LIMIT)}: grade {cassette.score.grade}, all passing"
            inner = "".join(c.text for c in chunks)
            chunks = [_Chunk(f"<details><summary>{summary}</summary>\n\n{inner}</details>\n\n")]
        out.extend(chunks)
    return out


def _headline(report: Report, title: str) -> str:
    grade = report.score.grade
    mark = "✅" if report.gate.passed else "❌"
    verdict = _format.verdict(report.gate, grade)
    lines = [f"## {mark} {title} {verdict}: grade {grade} ({_format.score_text(report.score.score)}/100)", ""]
    lines += [md_cell(_format.rules_line(report.gate, grade), DETAIL_LIMIT * 2), ""]
    summary = _format.totals_line(report)  # our own words and numbers
    if report.target:
        summary += f" · target: {md_cell(_format.public_target(report.target), DETAIL_LIMIT)}"
    lines += [summary, ""]
    if _format.accept_line(report):
        lines += ["To accept these changes, review them and run:", "", md_code_block(report.accept, 2000, "sh")]
    if report.coverage is not None:
        lines += coverage_lines(report.coverage)
    if report.score.capped:
        lines += ["⚠️ A request got no response, so the grade is capped at D.", ""]
    elif report.score.breaking_capped:
        lines += ["⚠️ A breaking change caps the grade at B (an A means nothing breaking).", ""]
    lines += [*_dimension_table(report.score), ""]
    return "\n".join(lines) + "\n"


def coverage_lines(coverage: Coverage, names_shown: int = NAMES_SHOWN) -> list[str]:
    """Coverage as Markdown lines (the job summary and the PR comment show them too): the
    percentage, then each fact, the names it names folded in ``<details>`` (at most
    ``names_shown``), each name an inert cell."""
    items = _format.coverage_items(coverage)
    if not items:
        return []
    headline = _format.coverage_headline(coverage)
    lines = [f"**Coverage:** {headline}." if headline else "**Coverage:**", ""]  # our words and numbers
    for text, names in items:
        if not names:
            lines += [md_cell(text, DETAIL_LIMIT), ""]
            continue
        shown = ", ".join(md_cell(name, LABEL_LIMIT) for name in names[:names_shown])
        if len(names) > names_shown:
            shown += f" … and {len(names) - names_shown} more (the JSON report lists them all)"
        lines += [f"<details><summary>{md_cell(text, DETAIL_LIMIT)}</summary>", "", shown, "", "</details>", ""]
    return lines


def _dimension_table(score: Score) -> list[str]:
    cells = [score.responsiveness, score.match_rate, score.error_parity, score.structural_stability]
    return [
        "| responsiveness (25%) | match rate (45%) | error parity (20%) | structural stability (10%) |",
        "|---:|---:|---:|---:|",
        "| " + " | ".join(f"{v * 100:.1f}%" for v in cells) + " |",
    ]


def _cassette_chunks(cassette: CassetteResult, show_passing: bool) -> list[_Chunk]:
    score = f"{_format.score_text(cassette.score.score)}/100"
    head = [f"### {md_cell(cassette.path, DETAIL_LIMIT)}: grade {cassette.score.grade} ({score})", ""]
    facts = [*_format.era_facts(cassette), f"{len(cassette.results)} interactions"]
    head += [md_cell(" · ".join(facts), DETAIL_LIMIT), ""]
    if cassette.era_skipped:
        head += [md_cell(_format.era_skipped_line(cassette), DETAIL_LIMIT * 2), ""]
    for note in cassette.notes:
        head += [f"ℹ️ **Note:** {md_cell(note, DETAIL_LIMIT * 2)}", ""]
    if cassette.error:
        head += [f"❗ **Replay stopped:** {md_cell(cassette.error, DETAIL_LIMIT * 2)}", ""]
    if cassette.non_json_lines:
        head += [f"The server printed {cassette.non_json_lines} non-JSON line(s) on stdout.", ""]
    chunks = [_Chunk("\n".join(head) + "\n")]
    if cassette.stderr_tail and cassette.error:
        tail = cassette.stderr_tail[-STDERR_LIMIT:]
        block = md_code_block(tail, STDERR_LIMIT, "text")
        chunks.append(_Chunk(f"<details><summary>server stderr</summary>\n\n{block}\n</details>\n\n", detail=True))
    table = "| # | interaction | status | kind | detail |\n|---:|---|---|---|---|\n"
    passing = [r for r in cassette.results if r.status == "pass"]
    others = [r for r in cassette.results if r.status != "pass"]
    if others:  # what did not pass first, in order; the passing rows folded under it
        chunks.append(_Chunk(table))
        if passing and not show_passing:
            chunks.append(_Chunk(f"| | {len(passing)} passing interaction(s) not shown | ✅ pass | | |\n"))
        chunks.extend(_Chunk(_row(r)) for r in others)
        chunks.append(_Chunk("\n"))
    for result in others:
        if result.status in ("fail", "missing") and result.findings:
            chunks.append(_Chunk(_details(result), detail=True))
    if _format.noise_count(cassette):
        chunks.append(_Chunk(_noise(cassette), detail=True))
    if passing and show_passing:
        body = table + "".join(_row(r) for r in passing) + "\n"
        fold = f"<details><summary>✅ {len(passing)} passing interaction(s)</summary>\n\n{body}</details>\n\n"
        chunks.append(_Chunk(fold if others else body))
    elif passing and not others:
        chunks.append(_Chunk(f"{table}| | {len(passing)} passing interaction(s) not shown | ✅ pass | | |\n\n"))
    return chunks


def _noise(cassette: CassetteResult) -> str:
    """The differences learned as noise, apart from the table: where, and the values seen. They
    never fail the run, so they are neither a row's kind nor a failure's details."""
    found = [(r, f) for r in cassette.results for f in r.noise]
    summary = f"🔇 {_format.noise_text(len(found))}"
    parts = [
        f"<details><summary>{summary}</summary>\n\n",
        "Also different between two fresh runs of this build (or explained by the cassette's calibrated "
        "rules), so not a regression.\n\n",
        "| # | interaction | where | values |\n|---:|---|---|---|\n",
    ]
    for result, finding in found[:FINDINGS_SHOWN]:
        values = f"{_format.show_value(finding.before)} -> {_format.show_value(finding.after)}"
        cells = [str(result.seq), md_cell(result.label, LABEL_LIMIT), md_cell(finding.path, DETAIL_LIMIT)]
        parts.append("| " + " | ".join([*cells, md_cell(values, DETAIL_LIMIT)]) + " |\n")
    hidden = len(found) - FINDINGS_SHOWN
    if hidden > 0:
        parts.append(f"\n… and {hidden} more; the JSON report lists them all.\n")
    parts.append("\n</details>\n\n")
    return "".join(parts)


def _row(result: InteractionResult) -> str:
    detail = ""
    row_cls = _format.row_class(result)
    if result.findings:
        detail = md_cell(_format.finding_line(result.findings[0], row_cls), DETAIL_LIMIT)
        if len(result.findings) > 1:
            detail += f" (+{len(result.findings) - 1} more)"
    elif result.status == "missing":
        detail = "no response"
    if grew := _format.size_change(result):
        detail = f"{detail} · {grew}" if detail else grew
    cells = [
        str(result.seq),
        md_cell(result.label, LABEL_LIMIT),
        _CHANGED
        if _format.status_tag(result, result.status) == _format.CHANGED_TAG
        else _STATUS.get(result.status, md_cell(result.status, 20)),
        md_cell(_format.row_kind(result), 60),
        detail,
    ]
    return "| " + " | ".join(cells) + " |\n"


def _details(result: InteractionResult) -> str:
    summary = f"#{result.seq} {md_cell(result.label, LABEL_LIMIT)}"
    if result.kind:
        summary += f": {md_cell(_format.row_kind(result), 60)}"
    if result.line:
        summary += f" (cassette line {result.line})"
    parts = [f"<details><summary>{summary}</summary>\n\n"]
    for finding in result.findings[:FINDINGS_SHOWN]:
        line = md_cell(_format.finding_line(finding), FINDING_LIMIT)
        parts.append(f"**{md_cell(finding.kind, 40)}** ({md_cell(finding.cls, 20)}) {line}\n\n")
        if finding.diff:
            parts.append(md_code_block(finding.diff, DIFF_LIMIT, "diff") + "\n")
    hidden = len(result.findings) - FINDINGS_SHOWN
    if hidden > 0:
        parts.append(f"… and {hidden} more finding(s); the JSON report lists them all.\n\n")
    parts.append("</details>\n\n")
    return "".join(parts)


def _join(chunks: list[_Chunk]) -> str:
    text = "".join(c.text for c in chunks)
    # Our own lines never start with "::"; this makes sure nothing quoted does either.
    return no_workflow_commands(text)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
