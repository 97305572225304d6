"""Wording shared by the renderers (and the GitHub comment template), so a finding reads the same
in the console, Markdown, JUnit and on GitHub. Plain text only: each caller escapes for its own
medium. Private to the report side: ``report/*`` and ``github/template.py`` use it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from mcp_replay_action.model import JSON
from mcp_replay_action.model.coverage import LISTED_BY, UNKNOWN_BY, Coverage, percent_text
from mcp_replay_action.model.gate import Gate
from mcp_replay_action.model.results import (
    KIND_ORDER,
    CassetteResult,
    Finding,
    InteractionResult,
    Report,
    status_counts,
    weighted,
)
from mcp_replay_action.values.size import over_floor, tokens

STATUS_TAGS = {"pass": "PASS", "fail": "FAIL", "missing": "MISS", "skipped": "SKIP"}
CHANGED_TAG = "DIFF"  # a failed interaction whose worst finding is additive: it changed, nothing broke
VALUE_LIMIT = 120

# Credentials a target (URL or command line) may carry: URL userinfo, and secret-looking
# key=value pairs (query strings, --api-key=...). Reports are posted where masking does not reach.
_USERINFO_RE = re.compile(r"(?<=://)[^/\s@]+@")
_SECRET_PARAM_RE = re.compile(
    r"((?:token|secret|password|passwd|api[_-]?key|access[_-]?key|auth\w*|key)=)[^&\s]+", re.IGNORECASE
)


def show_value(value: JSON, limit: int = VALUE_LIMIT) -> str:
    """A recorded/live value as a short token: strings quoted (``'5'``), everything else as
    compact JSON (``{"a": 1}``), ``None`` as ``null``."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_tag(result: InteractionResult | None, status: str) -> str:
    """``FAIL``, ``DIFF``, ``PASS``, ``MISS``, ``SKIP``: how a row starts. A failed interaction
    reads ``FAIL`` only when something in it is breaking; an additive change reads ``DIFF``."""
    if status == "fail" and result is not None and result.cls == "additive":
        return CHANGED_TAG
    return STATUS_TAGS.get(status, status.upper())


def row_kind(result: InteractionResult) -> str:
    """What a row that did not pass says after its label: its class and worst kind (``breaking
    value-change``, ``additive structure-change``), a missing response's kind alone."""
    if result.status == "missing" or not result.kind:
        return result.kind or ""
    cls = row_class(result)
    # The worst kind among the findings of the row's class: an added key beside a changed value
    # reads "breaking value-change", not "breaking structure-change".
    kinds = [f.kind for f in result.findings if f.cls == cls]
    kind = min(kinds, key=KIND_ORDER.index) if kinds else result.kind
    return f"{cls} {kind}".strip()


def row_class(result: InteractionResult) -> str:
    """The class a row names (``breaking value-change``): its worst finding's, for a row that
    did not pass; empty for a passing one."""
    return (result.cls or "") if result.status in ("fail", "missing") else ""


def finding_line(finding: Finding, row_cls: str | None = None) -> str:
    """``$.result.content[0].text: '5' -> '6'``: the path and what changed there, the other
    places the same change was found (``also in ...``), and the finding's class when it is not
    the one its row names (``row_cls``; None: never)."""
    what = finding.message or f"{show_value(finding.before)} -> {show_value(finding.after)}"
    line = f"{finding.path}: {what}" if finding.path else what
    if finding.also:
        line += " (also in " + ", ".join(finding.also) + ")"
    if row_cls is not None and finding.cls != row_cls:
        line += f" [{finding.cls}]"
    return line


def json_spelling(before: JSON, after: JSON) -> tuple[str, str]:
    """Two values as a reader must see them to tell them apart: both texts as they are when both
    are strings, else both in their JSON spelling (``2`` and ``"2"``, never ``2`` and ``2``)."""
    if isinstance(before, str) and isinstance(after, str):
        return before, after
    return _json(before), _json(after)


def _json(value: JSON) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return repr(value)


def diff_excerpt(diff: str, lines: int) -> list[str]:
    """The first ``lines`` changed lines of a unified diff (``-`` old, ``+`` new), headers and
    context left out: what a one-screen place (a PR comment row, an annotation) shows of it."""
    out = []
    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")) or not line.startswith(("-", "+")):
            continue
        out.append(line)
        if len(out) >= lines:
            break
    return out


def public_target(target: str) -> str:
    """The target (server command or URL) with credentials replaced: URL userinfo and secret
    query parameters by ``***``, then the default redactor's command-line rules over its shell
    words (``--db-pass X``, ``--header 'Authorization: Bearer X'``, ``-p <password>``,
    ``sh -c '... --auth X'``, ``ghp_...``; ``redact_argv.redact_command``)."""
    from mcp_replay_action.redact import Redactor
    from mcp_replay_action.redact_argv import redact_command

    masked = _SECRET_PARAM_RE.sub(r"\1***", _USERINFO_RE.sub("***@", target))
    return redact_command(Redactor(), masked)


def size_change(result: InteractionResult) -> str:
    """``answer grew 1,024 -> 4,300 bytes (~256 -> ~1,075 tokens)``, for a result whose live
    answer is larger than its recording and over the size floor (``over_floor``); empty otherwise."""
    before, after = result.recorded_bytes or 0, result.live_bytes or 0
    if not result.grew or not over_floor(after):
        return ""
    return f"answer grew {before:,} -> {after:,} bytes (~{tokens(before):,} -> ~{tokens(after):,} tokens)"


def interaction_title(result: InteractionResult) -> str:
    """``#3 tools/call add``, the name a row, a test case or an annotation goes by."""
    return f"#{result.seq} {result.label}"


def count(results: Iterable[InteractionResult], status: str) -> int:
    """How many results have ``status`` (used for ``skipped``, which results.py does not count)."""
    if isinstance(results, Sequence):
        return status_counts(results)[status]
    return sum(1 for r in results if r.status == status)


def era_facts(cassette: CassetteResult) -> list[str]:
    """The era words of a cassette's heading: ``handshake 2025-11-25``, and ``sent as stateless``
    when ``--era`` sent it in the other one."""
    facts = [f for f in (cassette.era, cassette.protocol_version) if f]
    if cassette.replayed_era:
        facts.append(f"sent as {cassette.replayed_era}")
    return facts


def era_skipped_line(cassette: CassetteResult) -> str:
    """The requests ``--era`` did not send (the other era has no method for them), or ""."""
    if not cassette.era_skipped:
        return ""
    return f"not sent in the {cassette.replayed_era} era: " + "; ".join(cassette.era_skipped)


def skipped(report: Report | CassetteResult) -> int:
    """Skipped interactions in a cassette or a whole report."""
    if isinstance(report, CassetteResult):
        return count(report.results, "skipped")
    return sum(count(c.results, "skipped") for c in report.cassettes)


def score_text(score: float) -> str:
    """The score as every format prints it: one decimal (``80.0``)."""
    return f"{score:.1f}"


def noise_count(report: Report | CassetteResult) -> int:
    """Differences explained as noise (they also differ between fresh runs of the same build) in a
    cassette or a whole report: reported apart, never a regression."""
    cassettes = (report,) if isinstance(report, CassetteResult) else report.cassettes
    return sum(n * len(r.noise) for c in cassettes for r, n in weighted(c.results))


def noise_text(n: int) -> str:
    """``2 differences learned as noise (not gating)``: how every report names the noise count."""
    return f"{_plural(n, 'difference')} learned as noise (not gating)"


def counts_text(report: Report) -> str:
    """``12 passed, 3 failed, 1 missing``, in the gate's words: interactions that changed without
    failing the gate are ``reported (not gating)``, not ``failed`` (``12 passed, 3 reported (not
    gating), 0 missing`` beside ``gate passed``)."""
    reported = min(report.failed, sum(n for cls, n in report.gate.accepted_classes if cls != "cosmetic"))
    failed = report.failed - reported
    parts = [f"{report.passed} passed"]
    if failed or not reported:
        parts.append(f"{failed} failed")
    if reported:
        parts.append(f"{reported} reported (not gating)")
    return ", ".join([*parts, f"{report.missing} missing"])


def totals_line(report: Report) -> str:
    """``3 passed, 1 failed, 1 missing of 5 interactions in 2 cassettes`` (``counts_text``), and
    the noise count when there is noise (``; 2 differences learned as noise (not gating)``)."""
    parts = [counts_text(report)]
    n_skipped = skipped(report)
    if n_skipped:
        parts.append(f"{n_skipped} skipped")
    n = len(report.cassettes)
    line = f"{', '.join(parts)} of {report.total} interactions in {n} cassette{'s' if n != 1 else ''}"
    noise = noise_count(report)
    return line + (f"; {noise_text(noise)}" if noise else "")


def accept_line(report: Report) -> str:
    """``to accept these changes: mcp-replay replay ... --update`` when something changed (the gate
    failed, or changes were reported) and the edge named its command; else empty."""
    if not report.accept or (report.gate.passed and not report.gate.accepted):
        return ""
    return f"to accept these changes, review them and run: {report.accept}"


def gate_line(gate: Gate) -> str:
    """``gate passed (fail on breaking)`` / ``gate FAILED (fail on any, min grade B): grade C is
    below the minimum B``, and how many changes did not fail it (accept them with a refresh)."""
    cond = f" ({gate.policy.describe()})"
    line = f"gate passed{cond}" if gate.passed else f"gate FAILED{cond}: " + "; ".join(gate.reasons)
    if gate.accepted:
        line += f"; {accepted_text(gate)} reported, not gating (accept with a refresh)"
    return line


def gate_rules(gate: Gate, grade: str) -> tuple[tuple[bool, str, str], ...]:
    """Each rule of the gate with its outcome, ``(held, rule, what)``: ``(False, "fail-on:
    breaking", "1 breaking change(s) and 0 missing response(s)")``, ``(True, "min-grade: B",
    "grade B meets it")``. A headline names the rules that failed, so a grade B that meets
    ``min-grade: B`` but fails on a breaking change says which rule failed."""
    from mcp_replay_action.grade.score import meets

    policy = gate.policy
    grade_held = True
    if policy.min_grade:
        try:
            grade_held = meets(grade, policy.min_grade)
        except ValueError:
            grade_held = gate.passed
    # The gate lists the fail-on reason first, then the grade's: a failed gate whose grade held
    # failed on fail-on; one whose grade failed did too only when it gives two reasons.
    coverage_held = gate.coverage_held or policy.min_coverage is None
    fail_on_held = gate.passed or len(gate.reasons) <= (not grade_held) + (not coverage_held)
    rules: list[tuple[bool, str, str]] = []
    if policy.fail_on == "none":
        rules.append((True, "fail-on: none", "findings only reported"))
    else:
        clean = "nothing breaking or missing" if policy.fail_on == "breaking" else "no regression or missing response"
        rules.append((fail_on_held, f"fail-on: {policy.fail_on}", clean if fail_on_held else gate.reasons[0]))
    if policy.min_grade:
        at = -1 if coverage_held else -2  # the coverage reason comes last
        grade_reason = gate.reasons[at] if len(gate.reasons) >= -at else f"grade {grade}"
        rules.append(
            (grade_held, f"min-grade: {policy.min_grade}", f"grade {grade} meets it" if grade_held else grade_reason)
        )
    if policy.min_coverage is not None:
        what = "met" if coverage_held else (gate.reasons[-1] if gate.reasons else "not met")
        rules.append((coverage_held, f"min-coverage: {policy.min_coverage:g}%", what))
    return tuple(rules)


def rules_line(gate: Gate, grade: str) -> str:
    """``❌ fail-on: breaking: 1 breaking change(s) and 0 missing response(s) · ✅ min-grade: B:
    grade B meets it``, and how many changes did not fail the gate (accept them with a refresh)."""
    line = " · ".join(f"{'✅' if held else '❌'} {rule}: {what}" for held, rule, what in gate_rules(gate, grade))
    if gate.accepted:
        line += f"; {accepted_text(gate)} reported, not gating (accept with a refresh)"
    return line


def verdict(gate: Gate, grade: str) -> str:
    """``passed`` / ``failed (fail-on: breaking)``: the headline's word, naming the failed rules."""
    if gate.passed:
        return "passed"
    failed = failed_rules(gate, grade)
    return f"failed ({failed})" if failed else "failed"


def cassette_status(cassette: CassetteResult) -> str:
    """``error`` (the replay stopped or a response is missing), ``fail`` or ``pass``: how the
    reports order cassettes (worst first) and which ones they fold."""
    if cassette.error or cassette.missing:
        return "error"
    return "fail" if cassette.failed else "pass"


def worst_first(cassettes: Iterable[CassetteResult]) -> list[CassetteResult]:
    """Stopped or missing first, then failing, then passing; lower scores first within each, then by path."""
    rank = {"error": 0, "fail": 1, "pass": 2}
    return sorted(cassettes, key=lambda c: (rank[cassette_status(c)], c.score.score, c.path))


def failed_rules(gate: Gate, grade: str) -> str:
    """``fail-on: breaking`` (the rules that failed, joined), empty when the gate passed."""
    return ", ".join(rule for held, rule, _ in gate_rules(gate, grade) if not held)


def accepted_text(gate: Gate) -> str:
    """``1 additive and 2 cosmetic changes``: the interactions that changed without failing the
    gate, by class (``N other changes`` from a report that did not count them by class)."""
    if sum(n for _, n in gate.accepted_classes) != gate.accepted:
        return _plural(gate.accepted, "other change")
    parts = [f"{n} {cls}" for cls, n in gate.accepted_classes]
    words = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    return f"{words} change{'' if gate.accepted == 1 else 's'}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


# How each kind reads in a sentence (one, many), and what calling it is.
_NOUNS = {
    "tools": ("tool", "tools", "call"),
    "prompts": ("prompt", "prompts", "call"),
    "resource templates": ("resource template", "resource templates", "read"),
    "resources": ("resource", "resources", "read"),
}


def coverage_items(coverage: Coverage) -> list[tuple[str, tuple[str, ...]]]:
    """What every report says of coverage: ``(our words, the server's names they name)`` per
    fact: ``("3 of 12 tools have no recorded call", ("a", "b", "c"))`` per listed kind, one per
    kind cassettes call that no cassette listed, and which cassettes listed when not all did.
    The words are plain text; the names are server text, for each sink to escape its own way."""
    items: list[tuple[str, tuple[str, ...]]] = []
    for kind in coverage.kinds:
        one, many, verb = _NOUNS[kind.kind]
        noun = one if kind.listed == 1 else many
        if not kind.listed:
            continue  # an empty listing: nothing there to call
        if kind.uncovered:
            n = len(kind.uncovered)
            text = f"{n} of {kind.listed} {noun} {'has' if n == 1 else 'have'} no recorded {verb}"
        else:
            text = f"all {kind.listed} {noun} {'has' if kind.listed == 1 else 'have'} a recorded {verb}"
        if kind.partial:
            text += f" (of the pages listed: the cassettes never asked {LISTED_BY[kind.kind]} for the next)"
        items.append((text, kind.uncovered))
    for noun in coverage.unknown:
        listing = "resources/list or resources/templates/list" if noun == "resources" else LISTED_BY[noun]
        items.append(
            (f"{noun}: called ({UNKNOWN_BY[noun]}), but no cassette lists them ({listing}): coverage unknown", ())
        )
    if items and coverage.listing < coverage.cassettes:
        items.append((f"listings from {coverage.listing} of {_plural(coverage.cassettes, 'cassette')}", ()))
    return items


def coverage_headline(coverage: Coverage) -> str:
    """``75.0% of the listed tools, prompts and resource templates have a recorded call``; empty
    when none was listed."""
    percent = coverage.percent
    if percent is None:
        return ""
    return f"{percent_text(percent)} of the listed tools, prompts and resource templates have a recorded call"
