"""Which annotations a report produces: one per finding on the cassette line it concerns, worst
first, within what GitHub shows.

GitHub shows at most 10 error and 10 warning annotations per step. We send the worst 9 of each
kind (leaving room for the action's own error or warning, such as a failed gate or a fork
warning) and, when some were left out, one notice saying how many more the job summary lists.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcp_replay_action.github.commands import Annotation
from mcp_replay_action.model.results import CLASS_ORDER, KIND_ORDER, Finding, InteractionResult, Report
from mcp_replay_action.report import _format

PER_LEVEL = 9
MESSAGE_LIMIT = 1500
VALUE_LIMIT = 300
DIFF_LINES = 6  # of a text's unified diff, the changed lines first shown


@dataclass(frozen=True)
class _Candidate:
    rank: tuple[int, int, str, int, int]
    annotation: Annotation


def annotations_for(
    report: Report, *, per_level: int = PER_LEVEL, files: frozenset[str] | None = None
) -> list[Annotation]:
    """The annotations to send for ``report``: errors, then warnings, then at most one notice.

    Cassette paths in the report are taken as already relative to the workspace; one that is not
    among ``files`` (a baseline's exploration: no file of the repository) is annotated on the run,
    with no file and line (None: every path is a file).
    """
    errors: list[_Candidate] = []
    warnings: list[_Candidate] = []
    for order, cassette in enumerate(report.cassettes):
        if cassette.error:
            errors.append(
                _Candidate(
                    (-1, 0, cassette.path, 0, order),
                    Annotation("error", _cap(cassette.error, MESSAGE_LIMIT), "replay stopped", cassette.path),
                )
            )
        for result in cassette.results:
            if result.status not in ("fail", "missing"):
                continue
            for finding in result.findings:
                annotation = _annotation(cassette.path, result, finding)
                if files is not None and cassette.path not in files:
                    annotation = replace(annotation, file="", line=None)
                rank = (
                    CLASS_ORDER.index(finding.cls) if finding.cls in CLASS_ORDER else len(CLASS_ORDER),
                    KIND_ORDER.index(finding.kind) if finding.kind in KIND_ORDER else len(KIND_ORDER),
                    cassette.path,
                    result.line,
                    order,
                )
                (errors if annotation.level == "error" else warnings).append(_Candidate(rank, annotation))
    errors.sort(key=lambda c: c.rank)
    warnings.sort(key=lambda c: c.rank)
    out = [c.annotation for c in errors[:per_level]] + [c.annotation for c in warnings[:per_level]]
    hidden_errors = max(0, len(errors) - per_level)
    hidden_warnings = max(0, len(warnings) - per_level)
    if hidden_errors or hidden_warnings:
        parts = []
        if hidden_errors:
            parts.append(f"{hidden_errors} error{'s' if hidden_errors != 1 else ''}")
        if hidden_warnings:
            parts.append(f"{hidden_warnings} warning{'s' if hidden_warnings != 1 else ''}")
        total = hidden_errors + hidden_warnings
        out.append(
            Annotation(
                "notice",
                f"{total} more finding{'s' if total != 1 else ''} ({', '.join(parts)}) "
                "not annotated here: GitHub shows 10 per kind. The job summary lists them all.",
                "mcp-replay: more findings",
            )
        )
    return out


def _annotation(path: str, result: InteractionResult, finding: Finding) -> Annotation:
    level = "error" if finding.cls == "breaking" or finding.kind == "missing-response" else "warning"
    kind = finding.kind if finding.kind == "missing-response" else f"{finding.cls} {finding.kind}"
    title = f"{kind}: {result.label}"
    lines = [finding.message]
    if finding.path and finding.path != "$":
        lines.append(f"at {finding.path}")
    if finding.also:
        lines.append("also in " + ", ".join(finding.also))
    excerpt = _format.diff_excerpt(finding.diff, DIFF_LINES)
    if excerpt:
        lines.extend(_cap(line, VALUE_LIMIT) for line in excerpt)
    elif finding.kind != "missing-response":
        # The values, unless the message already quotes them; both in JSON when their types differ.
        shown_values = _format.json_spelling(finding.before, finding.after)
        for label, value, shown in zip(
            ("recorded", "live"), (finding.before, finding.after), shown_values, strict=True
        ):
            shown = _cap(shown, VALUE_LIMIT)
            if value is not None and shown not in finding.message:
                lines.append(f"{label}: {shown}")
    return Annotation(
        level,  # type: ignore[arg-type]
        _cap("\n".join(lines), MESSAGE_LIMIT),
        _cap(title, 200),
        path,
        result.line or None,
    )


def _cap(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
