"""Hand-built Reports for the renderer tests (tests/test_report_*.py): a healthy cassette, a
regressed one with pass / fail / missing / skipped rows, and one full of hostile strings."""

from __future__ import annotations

from mcp_replay_action.model.gate import Gate, GatePolicy
from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report, Score

HOSTILE = (
    "| pipe | `tick` ``` <script>alert(1)</script> @octocat @org/team "
    "[link](https://evil.example) ![img](https://evil.example/p.png) **bold** $x^2$ & &amp; "
    "\\| ~strike~ \n::error file=a,line=1::injected\r\n  ::warning::two ##[error]legacy "
    "\x00\x07\x1b[31mred\x1b[0m \u202eevil\u202c \ud800 \u2028::notice::sep \x85x \ufffe </details>"
)


def score(value: float, grade: str, *, capped: bool = False) -> Score:
    return Score(
        score=value,
        grade=grade,
        responsiveness=1.0 if not capped else 0.75,
        match_rate=value / 100,
        error_parity=1.0,
        structural_stability=0.9,
        capped=capped,
    )


def healthy_cassette(path: str = "cassettes/healthy.jsonl") -> CassetteResult:
    results = (
        InteractionResult(seq=0, line=2, method="initialize", name=None, status="pass", latency_ms=3.2),
        InteractionResult(seq=2, line=4, method="tools/list", name=None, status="pass", latency_ms=1.0),
        InteractionResult(seq=3, line=5, method="tools/call", name="add", status="pass", latency_ms=0.7),
    )
    return CassetteResult(
        path=path,
        results=results,
        score=score(100.0, "A"),
        era="handshake",
        protocol_version="2025-06-18",
        duration_s=0.25,
    )


def regressed_cassette(path: str = "cassettes/regressed.jsonl") -> CassetteResult:
    value_change = Finding(
        kind="value-change",
        cls="breaking",
        path="$.result.content[0].text",
        message="'5' -> '6'",
        before="5",
        after="6",
    )
    added_key = Finding(
        kind="structure-change",
        cls="additive",
        path="$.result",
        message="key 'echoed' added",
        before=None,
        after={"echoed": True},
    )
    long_text = Finding(
        kind="value-change",
        cls="breaking",
        path="$.result.content[1].text",
        message="",
        before="line one\nline two",
        after="line one\nline 2",
        diff="--- recorded\n+++ live\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2",
    )
    missing = Finding(
        kind="missing-response",
        cls="breaking",
        path="$",
        message="no response within 5.0s",
    )
    results = (
        InteractionResult(seq=0, line=2, method="initialize", name=None, status="pass", latency_ms=2.0),
        InteractionResult(seq=2, line=4, method="tools/list", name=None, status="pass", latency_ms=1.5),
        InteractionResult(
            seq=3, line=5, method="tools/call", name="echo", status="fail", findings=(added_key,), latency_ms=1.1
        ),
        InteractionResult(
            seq=4,
            line=6,
            method="tools/call",
            name="add",
            status="fail",
            findings=(value_change, long_text),
            latency_ms=0.9,
            live_error=False,
        ),
        InteractionResult(
            seq=5, line=7, method="tools/call", name="slow", status="missing", findings=(missing,), live_error=None
        ),
        InteractionResult(seq=6, line=8, method="ping", name=None, status="skipped"),
    )
    return CassetteResult(
        path=path,
        results=results,
        score=score(62.5, "D", capped=True),
        era="handshake",
        protocol_version="2025-06-18",
        duration_s=5.5,
        error="",
        stderr_tail="",
    )


def hostile_cassette() -> CassetteResult:
    finding = Finding(
        kind="value-change",
        cls="breaking",
        path="$.result.content[0].text",
        message=HOSTILE,
        before=HOSTILE,
        after={"k|ey": HOSTILE, "n": float("nan"), "t": (1, 2), "s": {1, 2}},
        diff="--- recorded\n+++ live\n-" + HOSTILE + "\n+```\n+::error::x\n",
    )
    results = (
        InteractionResult(
            seq=1,
            line=3,
            method="tools/call",
            name=HOSTILE,
            status="fail",
            findings=(finding,),
            latency_ms=float("nan"),
        ),
        InteractionResult(seq=2, line=4, method=HOSTILE, name=None, status="missing"),
    )
    return CassetteResult(
        path="cassettes/::error::" + HOSTILE[:40] + ".jsonl",
        results=results,
        score=score(40.0, "F"),
        era="stateless",
        protocol_version=HOSTILE[:30],
        error="server exited with status 1: " + HOSTILE,
        stderr_tail=HOSTILE + "\nTraceback\n```\n::error::boom\n",
        non_json_lines=2,
    )


def report(*cassettes: CassetteResult, overall: Score | None = None, **kwargs: object) -> Report:
    cassettes = cassettes or (healthy_cassette(), regressed_cassette())
    if overall is None:
        overall = score(80.0, "B") if len(cassettes) > 1 else cassettes[0].score
    return Report(cassettes=cassettes, score=overall, **kwargs)  # type: ignore[arg-type]


def hostile_report() -> Report:
    return report(
        hostile_cassette(),
        regressed_cassette(),
        overall=score(40.0, "F"),
        target="https://user:s3cret@example.test/mcp?token=abc " + HOSTILE,
        gate=Gate(passed=False, reasons=(HOSTILE,), policy=GatePolicy(fail_on="any", min_grade="B")),
    )
