"""The console report: what ``mcp-replay replay`` prints.

Per cassette a heading, one line per interaction (``[PASS] #3 tools/call add``,
``[FAIL] #4 tools/call add  breaking value-change`` when something broke, ``[DIFF] #5 tools/call
echo  additive structure-change`` when it only changed, ``[MISS] ...``), the findings of each
failure indented under it with a capped diff (a finding of another class than its row's says
which), and ``GRADE B  (80.0/100)``; an overall grade when there are several cassettes. Every piece of server or cassette text goes through ``safe.visible``: one line,
control characters shown as escapes, capped, and never a workflow command, because in the action
this text lands in the job log.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from mcp_replay_action.model.coverage import Coverage
from mcp_replay_action.model.results import CassetteResult, InteractionResult, Report, ResultList, Score
from mcp_replay_action.report import _format
from mcp_replay_action.values.safe import no_workflow_commands, visible

LINE_LIMIT = 300  # characters of server/cassette text on one line
FINDINGS_SHOWN = 5  # per interaction, unless verbose
NAMES_SHOWN = 10  # uncovered names on a coverage line, unless verbose
DIFF_LINES_SHOWN = 12  # per finding, unless verbose
VERBOSE_FINDINGS_SHOWN = 200
VERBOSE_DIFF_LINES_SHOWN = 200
STDERR_LINES_SHOWN = 20

_STATUS_COLOURS = {"pass": "green", "fail": "red", "missing": "magenta", "skipped": "yellow"}
_TAG_COLOURS = {_format.CHANGED_TAG: "yellow"}
_GRADE_COLOURS = {"A": "green", "B": "green", "C": "yellow", "D": "red", "F": "red"}
_ROW = "  "  # indent of an interaction row
_DETAIL = " " * 9  # findings line up under the label, after "  [FAIL] "
_DIFF = " " * 11


def render(report: Report, *, color: bool = False, verbose: bool = False) -> str:
    """The whole report as console text (ends with a newline).

    ``color`` adds ANSI colours (the caller decides, typically ``stream.isatty()``); ``verbose``
    also lists findings on passing interactions (cosmetic ones), latencies, and longer diffs."""
    return "".join(stream(report, color=color, verbose=verbose))


def stream(report: Report, *, color: bool = False, verbose: bool = False) -> Iterator[str]:
    """``render``'s text in blocks of whole lines, so a report of 100,000 interactions is printed
    without ever being held whole."""
    block: list[str] = []
    for line in _lines(report, _Painter(color), verbose):
        block.append(line)
        if len(block) >= _BLOCK_LINES:
            # Cassette paths, stderr and finding text are already neutralised; this is the last word.
            yield no_workflow_commands("\n".join(block) + "\n")
            block = []
    if block:
        yield no_workflow_commands("\n".join(block) + "\n")


_BLOCK_LINES = 1000


def _lines(report: Report, paint: _Painter, verbose: bool) -> Iterator[str]:
    for i, cassette in enumerate(report.cassettes):
        if i:
            yield ""
        yield from _cassette_lines(cassette, paint, verbose)
    if len(report.cassettes) > 1:
        yield ""
        yield "OVERALL  " + _grade_line(report.score, paint)
    if report.cassettes:
        yield _format.totals_line(report)
    else:
        yield "no cassettes replayed"
        yield _grade_line(report.score, paint)
    if report.coverage is not None:
        yield from _coverage_lines(report.coverage, verbose)
    gate = _format.gate_line(report.gate)
    yield paint(visible(gate, LINE_LIMIT), "green" if report.gate.passed else "red")
    accept = _format.accept_line(report)
    if accept:
        yield visible(accept, LINE_LIMIT * 4)


def _coverage_lines(coverage: Coverage, verbose: bool) -> Iterator[str]:
    """``coverage: 3 of 12 tools have no recorded call: a, b, c``, one line per fact, the names
    capped (all of them with ``--verbose``)."""
    shown = VERBOSE_FINDINGS_SHOWN if verbose else NAMES_SHOWN
    items = _format.coverage_items(coverage)
    headline = _format.coverage_headline(coverage)
    if items and headline:
        yield "coverage: " + headline
    for text, names in items:
        line = "coverage: " + text
        if names:
            line += ": " + ", ".join(visible(n, 80) for n in names[:shown])
            if len(names) > shown:
                line += f" (+{len(names) - shown} more)"
        yield visible(line, LINE_LIMIT if not verbose else 20 * LINE_LIMIT)


def _cassette_lines(cassette: CassetteResult, paint: _Painter, verbose: bool) -> Iterator[str]:
    facts = _format.era_facts(cassette)
    heading = visible(cassette.path, LINE_LIMIT)
    if facts:
        heading += "  (" + visible(" ".join(facts), 80) + ")"
    yield paint(heading, bold=True)
    if cassette.era_skipped:
        yield _ROW + visible(_format.era_skipped_line(cassette), LINE_LIMIT)
    for note in cassette.notes:
        yield _ROW + paint("note: ", bold=True) + visible(note, 2 * LINE_LIMIT)
    labels: dict[str, str] = {}  # a replay repeats a few labels thousands of times
    results = cassette.results
    if isinstance(results, ResultList) and not verbose:
        # A result with nothing but its verdict is its row alone: listed without being built.
        heads = {status: _row_head(status, paint) for status in _format.STATUS_TAGS}
        for seq, status, label, whole in results.rows():
            if whole is None:
                yield f"{heads[status]}{seq} {_visible_label(label, labels)}"
            else:
                yield from _interaction_lines(whole, paint, verbose, labels)
    else:
        for result in results:
            yield from _interaction_lines(result, paint, verbose, labels)
    lines: list[str] = []
    if not cassette.results:
        lines.append(_ROW + "no interactions replayed")
    if cassette.error:
        lines.append(_ROW + paint("ERROR: " + visible(cassette.error, LINE_LIMIT), "red"))
    if cassette.non_json_lines:
        lines.append(_ROW + f"note: the server printed {cassette.non_json_lines} non-JSON line(s) on stdout")
    if cassette.stderr_tail and (cassette.error or verbose):
        tail = cassette.stderr_tail.splitlines()[-STDERR_LINES_SHOWN:]
        lines.append(_ROW + "server stderr (last lines):")
        lines.extend(_ROW + "  | " + visible(line, LINE_LIMIT) for line in tail)
    lines.append(_ROW + _grade_line(cassette.score, paint))
    yield from lines


def _interaction_lines(
    result: InteractionResult, paint: _Painter, verbose: bool, labels: dict[str, str] | None = None
) -> list[str]:
    tag = _format.status_tag(result, result.status)
    row = f"{_row_head(result.status, paint, tag)}{result.seq} {_visible_label(result.label, labels)}"
    row_cls = _format.row_class(result)
    if result.status != "pass" and result.kind:
        colour = _TAG_COLOURS.get(tag, _STATUS_COLOURS.get(result.status))
        row += "  " + paint(_format.row_kind(result), colour)
    if verbose and result.latency_ms is not None:
        row += f"  ({result.latency_ms:.1f} ms)"
    if grew := _format.size_change(result):
        row += f"  ({grew})"
    lines = [row]
    if verbose:
        for sub in result.substitutions:
            lines.append(_DETAIL + visible(f"threaded {sub.recorded!r} -> {sub.live!r}", LINE_LIMIT))
    for finding in result.noise[: VERBOSE_FINDINGS_SHOWN if verbose else 1]:
        more = len(result.noise) - 1
        suffix = f" (+{more} more)" if more > 0 and not verbose else ""
        lines.append(_DETAIL + visible(f"noise (not gating): {finding.path}{suffix}", LINE_LIMIT))
    if result.status == "pass" and not verbose:
        return lines
    max_findings = VERBOSE_FINDINGS_SHOWN if verbose else FINDINGS_SHOWN
    max_diff = VERBOSE_DIFF_LINES_SHOWN if verbose else DIFF_LINES_SHOWN
    for finding in result.findings[:max_findings]:
        lines.append(_DETAIL + visible(_format.finding_line(finding, row_cls), LINE_LIMIT))
        diff = finding.diff.splitlines()
        for line in diff[:max_diff]:
            lines.append(_DIFF + _diff_colour(visible(line, LINE_LIMIT), paint))
        if len(diff) > max_diff:
            lines.append(_DIFF + f"... {len(diff) - max_diff} more diff lines")
    hidden = len(result.findings) - max_findings
    if hidden > 0:
        lines.append(_DETAIL + f"... and {hidden} more finding(s) (--verbose or the JSON report)")
    return lines


def _row_head(status: str, paint: _Painter, tag: str | None = None) -> str:
    """``  [PASS] #``: how an interaction's first line starts (its seq and label follow); ``tag``
    when it is not the status's own (``DIFF``)."""
    tag = tag or _format.STATUS_TAGS.get(status, status.upper())
    return f"{_ROW}{paint(f'[{tag}]', _TAG_COLOURS.get(tag, _STATUS_COLOURS.get(status)))} #"


_LABELS_KEPT = 4096


def _visible_label(label: str, seen: dict[str, str] | None) -> str:
    """``visible(label)``, remembered in ``seen`` (up to ``_LABELS_KEPT`` labels)."""
    if seen is None:
        return visible(label, LINE_LIMIT)
    shown = seen.get(label)
    if shown is None:
        shown = visible(label, LINE_LIMIT)
        if len(seen) < _LABELS_KEPT:
            seen[label] = shown
    return shown


def _grade_line(score: Score, paint: _Painter) -> str:
    text = f"GRADE {score.grade}  ({_format.score_text(score.score)}/100)"
    if score.capped:
        text += "  capped at D: a request got no response"
    elif score.breaking_capped:
        text += "  capped at B: a breaking change"
    return paint(text, _GRADE_COLOURS.get(score.grade), bold=True)


def _diff_colour(line: str, paint: _Painter) -> str:
    if line.startswith("+") and not line.startswith("+++"):
        return paint(line, "green")
    if line.startswith("-") and not line.startswith("---"):
        return paint(line, "red")
    return line


class _Painter:
    """``click.style`` when colour is on, identity when off (so tests and files stay plain)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, fg: str | None = None, *, bold: bool = False) -> str:
        if not self.enabled or (fg is None and not bold):
            return text
        return click.style(text, fg=fg, bold=bold or None)
