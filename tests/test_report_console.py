"""The console report: the seed tool's layout, colour only when asked, hostile text neutralised."""

from __future__ import annotations

import re

import click
import pytest

from mcp_replay_action.grade.gate import evaluate_gate
from mcp_replay_action.model.gate import Gate, GatePolicy
from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report
from mcp_replay_action.report import console
from report_fixtures import healthy_cassette, hostile_report, regressed_cassette, report, score

pytestmark = pytest.mark.unit


def test_layout_matches_the_seed_tool() -> None:
    out = console.render(report(regressed_cassette()))
    lines = out.splitlines()
    assert lines[0] == "cassettes/regressed.jsonl  (handshake 2025-06-18)"
    assert "  [PASS] #0 initialize" in lines
    assert "  [PASS] #2 tools/list" in lines
    i = lines.index("  [FAIL] #4 tools/call add  breaking value-change")
    assert lines[i + 1] == "         $.result.content[0].text: '5' -> '6'"
    # A finding without a message shows before -> after, then its diff indented under it.
    assert lines[i + 2] == "         $.result.content[1].text: 'line one\\nline two' -> 'line one\\nline 2'"
    assert lines[i + 3 : i + 9] == [
        "           --- recorded",
        "           +++ live",
        "           @@ -1,2 +1,2 @@",
        "            line one",
        "           -line two",
        "           +line 2",
    ]
    # An additive change is not a failure: its own tag, its class named.
    j = lines.index("  [DIFF] #3 tools/call echo  additive structure-change")
    assert lines[j + 1] == "         $.result: key 'echoed' added"
    k = lines.index("  [MISS] #5 tools/call slow  missing-response")
    assert lines[k + 1] == "         $: no response within 5.0s"
    assert "  [SKIP] #6 ping" in lines
    assert "  GRADE D  (62.5/100)  capped at D: a request got no response" in lines
    assert "OVERALL" not in out  # one cassette: no overall line
    assert lines[-2] == "2 passed, 2 failed, 1 missing, 1 skipped of 6 interactions in 1 cassette"
    assert out.endswith("\n")


def test_several_cassettes_get_an_overall_grade() -> None:
    out = console.render(report(healthy_cassette(), regressed_cassette(), overall=score(80.0, "B")))
    lines = out.splitlines()
    assert "  GRADE A  (100.0/100)" in lines
    assert "OVERALL  GRADE B  (80.0/100)" in lines
    assert lines[-2] == "5 passed, 2 failed, 1 missing, 1 skipped of 9 interactions in 2 cassettes"


def test_gate_line() -> None:
    failed = Gate(passed=False, reasons=("grade D below B",), policy=GatePolicy(fail_on="any", min_grade="B"))
    out = console.render(report(regressed_cassette(), gate=failed))
    assert out.splitlines()[-1] == "gate FAILED (fail on any, min grade B): grade D below B"
    passed = Gate(policy=GatePolicy(fail_on="none", min_grade="C"), accepted=2)
    out = console.render(report(healthy_cassette(), gate=passed))
    assert out.splitlines()[-1] == (
        "gate passed (report only, min grade C); 2 other changes reported, not gating (accept with a refresh)"
    )


@pytest.mark.parametrize(
    ("fail_on", "counts", "verdict"),
    [
        ("breaking", "2 passed, 1 failed, 1 reported (not gating), 1 missing", "gate FAILED"),
        ("any", "2 passed, 2 failed, 1 missing", "gate FAILED"),
        ("none", "2 passed, 2 reported (not gating), 1 missing", "gate passed"),
    ],
)
def test_the_count_line_says_what_gated(fail_on: str, counts: str, verdict: str) -> None:
    # "12 passed, 3 failed" beside "gate passed" read as a contradiction: what did not gate is
    # reported, in the gate's own words (the gate evaluated as a replay evaluates it).
    cassette = regressed_cassette()
    gate = evaluate_gate((cassette,), cassette.score, GatePolicy(fail_on=fail_on))  # type: ignore[arg-type]
    lines = console.render(report(cassette, gate=gate)).splitlines()
    assert lines[-2] == f"{counts}, 1 skipped of 6 interactions in 1 cassette"
    assert lines[-1].startswith(verdict)


def test_no_colour_unless_asked_and_colour_is_only_decoration() -> None:
    plain = console.render(report())
    assert "\x1b" not in plain
    coloured = console.render(report(), color=True)
    assert "\x1b[" in coloured
    assert click.unstyle(coloured) == plain


def test_verbose_adds_latency_and_findings_on_passes() -> None:
    cosmetic = Finding(kind="ordering-change", cls="cosmetic", path="$.result.tools", message="order changed")
    cassette = CassetteResult(
        path="c.jsonl",
        results=(
            InteractionResult(
                seq=1, line=2, method="tools/list", name=None, status="pass", findings=(cosmetic,), latency_ms=12.34
            ),
        ),
        score=score(100.0, "A"),
    )
    quiet = console.render(report(cassette))
    assert "  [PASS] #1 tools/list\n" in quiet and "order changed" not in quiet
    loud = console.render(report(cassette), verbose=True)
    assert "  [PASS] #1 tools/list  (12.3 ms)" in loud
    assert "         $.result.tools: order changed" in loud


def test_long_findings_and_diffs_are_capped() -> None:
    findings = tuple(
        Finding(kind="value-change", cls="breaking", path=f"$.result.v{i}", message="x", diff="\n".join(["+l"] * 50))
        for i in range(9)
    )
    cassette = CassetteResult(
        path="c.jsonl",
        results=(InteractionResult(seq=1, line=2, method="m", name=None, status="fail", findings=findings),),
        score=score(50.0, "F"),
    )
    out = console.render(report(cassette))
    assert out.count("$.result.v") == console.FINDINGS_SHOWN
    assert "... and 4 more finding(s)" in out
    assert "... 38 more diff lines" in out
    verbose = console.render(report(cassette), verbose=True)
    assert verbose.count("$.result.v") == 9 and "more diff lines" not in verbose


def test_replay_error_and_stderr_are_shown() -> None:
    cassette = CassetteResult(
        path="c.jsonl",
        results=(InteractionResult(seq=1, line=2, method="tools/call", name="x", status="missing"),),
        score=score(0.0, "F", capped=True),
        error="server exited with status 1",
        stderr_tail="line 1\nTraceback: boom\n",
        non_json_lines=3,
    )
    out = console.render(report(cassette))
    assert "  [MISS] #1 tools/call x" in out
    assert "  ERROR: server exited with status 1" in out
    assert "    | Traceback: boom" in out
    assert "3 non-JSON line(s)" in out


def test_empty_report() -> None:
    out = console.render(Report(cassettes=(), score=score(0.0, "F")))
    assert "no cassettes replayed" in out and "GRADE F  (0.0/100)" in out


def test_hostile_text_cannot_act_on_a_terminal_or_the_runner() -> None:
    for colour in (False, True):
        out = console.render(hostile_report(), color=colour, verbose=True)
        out.encode("utf-8")
        plain = click.unstyle(out)
        for line in plain.split("\n"):
            assert not line.lstrip().startswith("::"), line
            assert "##[" not in line
            assert len(line) <= 420, len(line)
        # Only newlines and (when asked) our own colour codes are control characters.
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]", plain)
        assert "\r" not in out


def test_each_line_says_its_class_and_the_gate_line_what_did_not_gate() -> None:
    added = Finding("structure-change", "additive", "$.result.structuredContent.unit", "key 'unit' added")
    changed = Finding("value-change", "breaking", "$.result.structuredContent.sum", "value changed: 5 -> 6")
    renamed = Finding("structure-change", "cosmetic", "$.result.tools[name=x].inputSchema", "the same schema")
    results = (
        InteractionResult(seq=1, line=2, method="tools/call", name="a", status="fail", findings=(added, changed)),
        InteractionResult(seq=2, line=3, method="tools/call", name="b", status="fail", findings=(added,)),
        InteractionResult(seq=3, line=4, method="tools/list", name=None, status="pass", findings=(renamed,)),
    )
    cassette = CassetteResult(path="c.jsonl", results=results, score=score(80.0, "B"))
    gate = evaluate_gate((cassette,), cassette.score, GatePolicy())
    assert gate.accepted_classes == (("additive", 1), ("cosmetic", 1))
    lines = console.render(report(cassette, gate=gate), verbose=True).splitlines()
    # The breaking row names its breaking kind, not the additive finding's worse-ranked kind.
    i = lines.index("  [FAIL] #1 tools/call a  breaking value-change")
    assert lines[i + 1 : i + 3] == [
        "         $.result.structuredContent.unit: key 'unit' added [additive]",
        "         $.result.structuredContent.sum: value changed: 5 -> 6",
    ]
    j = lines.index("  [DIFF] #2 tools/call b  additive structure-change")
    assert lines[j + 1] == "         $.result.structuredContent.unit: key 'unit' added"
    k = lines.index("  [PASS] #3 tools/list")
    assert lines[k + 1] == "         $.result.tools[name=x].inputSchema: the same schema [cosmetic]"
    assert lines[-1] == (
        "gate FAILED (fail on breaking): 1 breaking change(s) and 0 missing response(s); "
        "1 additive and 1 cosmetic changes reported, not gating (accept with a refresh)"
    )
    strict = evaluate_gate((cassette,), cassette.score, GatePolicy(fail_on="any"))
    assert strict.reasons == ("1 breaking and 1 additive change(s) and 0 missing response(s)",)
    assert strict.accepted_classes == (("cosmetic", 1),)
