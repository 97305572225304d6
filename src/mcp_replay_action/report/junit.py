"""The JUnit XML report (``--junit FILE``), for CI systems and test-report actions.

One ``<testsuite>`` per cassette, one ``<testcase>`` per interaction named ``#seq method name``.
A regression is a ``<failure>`` (type = the worst kind, text = every finding); a missing response
is an ``<error>``; a skipped interaction is ``<skipped>``. A replay that stopped early adds an
``<error>`` test case named ``replay``. Built with ElementTree, so ``<&>"`` are escaped by the
serializer; characters XML 1.0 forbids are shown as escapes first, so the file always parses.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from mcp_replay_action.model.results import CassetteResult, InteractionResult, Report
from mcp_replay_action.report import _format
from mcp_replay_action.values.safe import xml_text

MESSAGE_LIMIT = 500  # the one-line message attribute
TEXT_LIMIT = 20_000  # the body of one failure
STDERR_LIMIT = 10_000


def render(report: Report) -> str:
    """The report as a JUnit XML document (UTF-8 declaration, ends with a newline)."""
    root = ET.Element("testsuites", {"name": "mcp-replay", **_counts(report.cassettes)})
    root.set("time", _seconds(sum(c.duration_s for c in report.cassettes)))
    for cassette in report.cassettes:
        root.append(_suite(cassette))
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _suite(cassette: CassetteResult) -> ET.Element:
    suite = ET.Element("testsuite", {"name": xml_text(cassette.path), **_counts((cassette,))})
    suite.set("time", _seconds(cassette.duration_s))
    props = ET.SubElement(suite, "properties")
    facts = {
        "grade": cassette.score.grade,
        "score": _format.score_text(cassette.score.score),
        "capped": str(cassette.score.capped).lower(),
        "era": cassette.era,
        "protocol_version": cassette.protocol_version,
    }
    for name, value in facts.items():
        if value:
            ET.SubElement(props, "property", name=name, value=xml_text(value, MESSAGE_LIMIT))
    for result in cassette.results:
        suite.append(_case(cassette, result))
    if cassette.error:
        case = ET.SubElement(suite, "testcase", name="replay", classname=xml_text(cassette.path))
        error = ET.SubElement(case, "error", message=xml_text(cassette.error, MESSAGE_LIMIT), type="replay-error")
        error.text = xml_text(cassette.error, TEXT_LIMIT)
    if cassette.stderr_tail:
        ET.SubElement(suite, "system-err").text = xml_text(cassette.stderr_tail[-STDERR_LIMIT:])
    return suite


def _case(cassette: CassetteResult, result: InteractionResult) -> ET.Element:
    case = ET.Element(
        "testcase",
        name=xml_text(_format.interaction_title(result), MESSAGE_LIMIT),
        classname=xml_text(cassette.path),
    )
    # file/line are read by several reporters (and ignored by the rest) to link the cassette line.
    case.set("file", xml_text(cassette.path))
    if result.line:
        case.set("line", str(result.line))
    if result.latency_ms is not None:
        case.set("time", _seconds(result.latency_ms / 1000))
    if result.status == "skipped":
        ET.SubElement(case, "skipped")
    elif result.status in ("fail", "missing"):
        kind = result.kind or ("missing-response" if result.status == "missing" else "regression")
        first = _format.finding_line(result.findings[0]) if result.findings else "no response"
        element = ET.SubElement(
            case,
            "error" if result.status == "missing" else "failure",
            message=xml_text(f"{kind}: {first}", MESSAGE_LIMIT),
            type=kind,
        )
        element.text = xml_text(_findings_text(result), TEXT_LIMIT)
    return case


def _findings_text(result: InteractionResult) -> str:
    lines = []
    if result.line:
        lines.append(f"cassette line {result.line}")
    for finding in result.findings:
        lines.append(f"[{finding.kind}, {finding.cls}] {_format.finding_line(finding)}")
        if finding.diff:
            lines.append(finding.diff.rstrip("\n"))
    return "\n".join(lines) or "no response"


def _counts(cassettes: tuple[CassetteResult, ...]) -> dict[str, str]:
    results = [r for c in cassettes for r in c.results]
    replay_errors = sum(1 for c in cassettes if c.error)
    return {
        "tests": str(len(results) + replay_errors),
        "failures": str(sum(1 for r in results if r.status == "fail")),
        "errors": str(sum(1 for r in results if r.status == "missing") + replay_errors),
        "skipped": str(sum(1 for r in results if r.status == "skipped")),
    }


def _seconds(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) and value > 0 else "0.000"
