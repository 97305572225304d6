"""The Markdown report, rendered by a real CommonMark + GFM-tables parser: layout, escaping of
hostile server text, and the size bound."""

from __future__ import annotations

import html
import re

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from mcp_replay_action.model.gate import Gate, GatePolicy
from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report
from mcp_replay_action.report import markdown
from report_fixtures import HOSTILE, healthy_cassette, hostile_report, regressed_cassette, report, score

pytestmark = pytest.mark.unit

OUR_HTML = re.compile(r"^(<details><summary>[^<]*</summary>|</details>)\s*$")


def _parse(text: str) -> list[Token]:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).parse(text)


def _tables(tokens: list[Token]) -> list[list[list[str]]]:
    """Every table as rows of cell contents (header row included)."""
    tables: list[list[list[str]]] = []
    row: list[str] = []
    in_cell = False
    for tok in tokens:
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            in_cell = True
            row.append("")
        elif tok.type == "inline" and in_cell:
            row[-1] = tok.content
        elif tok.type in ("th_close", "td_close"):
            in_cell = False
        elif tok.type == "tr_close":
            tables[-1].append(row)
    return tables


def _assert_structurally_safe(text: str) -> list[Token]:
    text.encode("utf-8")
    tokens = _parse(text)
    for tok in tokens:
        # Only our own <details>/<summary> HTML; nothing from the server becomes HTML.
        if tok.type == "html_block":
            for line in tok.content.strip().splitlines():
                assert OUR_HTML.match(line), line
        for child in tok.children or []:
            assert child.type not in ("html_inline", "link_open", "image", "code_inline"), child
    for table in _tables(tokens):
        assert len({len(row) for row in table}) == 1, table  # no row gained or lost a cell
    for line in re.split(r"\r\n|\r|\n", text):
        assert not line.lstrip().startswith("::") and "##[" not in line, line
    # Mentions do not fire inside code blocks; everywhere else none may be left.
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    outside_code = re.sub(r"<pre><code.*?</code></pre>", "", rendered, flags=re.S)
    assert not re.search(r"(?<![\w@/`.])@[A-Za-z0-9]", html.unescape(outside_code))
    html_blocks = "".join(t.content for t in tokens if t.type == "html_block")
    assert html_blocks.count("<details>") == html_blocks.count("</details>")
    return tokens


def test_layout() -> None:
    gate = Gate(
        passed=False,
        reasons=("2 regression(s) and 1 missing response(s)", "grade B is below the minimum A"),
        policy=GatePolicy(fail_on="any", min_grade="A"),
    )
    text = markdown.render(report(healthy_cassette(), regressed_cassette(), gate=gate, target="python -m srv"))
    lines = text.splitlines()
    # The headline's icon and word are the gate's, and it names the rules that failed.
    assert lines[0] == "## ❌ mcp-replay failed (fail-on: any, min-grade: A): grade B (80.0/100)"
    assert (
        "❌ fail-on: any: 2 regression(s) and 1 missing response(s) · ❌ min-grade: A: grade B is below the minimum A"
        in lines
    )
    assert "5 passed, 2 failed, 1 missing, 1 skipped of 9 interactions in 2 cassettes · target: python -m srv" in lines
    # Worst first: the regressed cassette before the healthy one, which is folded whole.
    regressed_at = lines.index("### cassettes/regressed.jsonl: grade D (62.5/100)")
    assert regressed_at < lines.index("<details><summary>✅ cassettes/healthy.jsonl: grade A, all passing</summary>")
    tokens = _assert_structurally_safe(text)
    tables = _tables(tokens)
    assert len(tables) == 4  # dimensions; regressed: what did not pass, its passing rows; healthy
    assert tables[0][1] == ["100.0%", "80.0%", "100.0%", "90.0%"]
    regressed = tables[1]
    assert regressed[0] == ["#", "interaction", "status", "kind", "detail"]
    assert [row[2] for row in regressed[1:]] == [
        "⚠️ changed",
        "❌ fail",
        "⛔ missing",
        "⏭️ skipped",
    ]  # echo only added a key
    assert regressed[2][:4] == ["4", "tools/call add", "❌ fail", "breaking value-change"]
    assert html.unescape(regressed[2][4]) == "$.result.content[0].text: '5' -> '6' (+1 more)"
    assert regressed[3][:4] == ["5", "tools/call slow", "⛔ missing", "missing-response"]
    assert [row[2] for row in tables[2][1:]] == ["✅ pass", "✅ pass"]  # folded after the failures
    assert "<details><summary>✅ 2 passing interaction(s)</summary>" in lines
    # Failures folded in <details>, with the diff as a diff code block.
    assert "<details><summary>#4 tools/call add: breaking value-change (cassette line 6)</summary>" in lines
    assert lines.index(
        "<details><summary>#4 tools/call add: breaking value-change (cassette line 6)</summary>"
    ) < lines.index("<details><summary>✅ 2 passing interaction(s)</summary>")
    fences = [t for t in tokens if t.type == "fence"]
    assert [f.info for f in fences] == ["diff"]
    assert fences[0].content.endswith("-line two\n+line 2\n")


def test_the_headline_names_the_rule_that_failed_when_the_grade_meets_the_minimum() -> None:
    gate = Gate(
        passed=False,
        reasons=("1 breaking change(s) and 0 missing response(s)",),
        policy=GatePolicy(fail_on="breaking", min_grade="B"),
    )
    text = markdown.render(report(healthy_cassette(), regressed_cassette(), gate=gate))
    lines = text.splitlines()
    assert lines[0] == "## ❌ mcp-replay failed (fail-on: breaking): grade B (80.0/100)"
    assert (
        "❌ fail-on: breaking: 1 breaking change(s) and 0 missing response(s) · ✅ min-grade: B: grade B meets it"
        in lines
    )
    passed = markdown.render(report(healthy_cassette(), gate=Gate(policy=GatePolicy(min_grade="B"))))
    assert passed.splitlines()[0].startswith("## ✅ mcp-replay passed: grade ")
    assert "✅ fail-on: breaking: nothing breaking or missing · ✅ min-grade: B: grade" in passed


def test_capped_grade_is_explained() -> None:
    text = markdown.render(report(regressed_cassette()))
    assert "capped at D" in text


def test_hostile_report_cannot_break_the_page() -> None:
    text = markdown.render(hostile_report())
    tokens = _assert_structurally_safe(text)
    rendered = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<script" not in rendered and "&lt;script&gt;alert(1)" in rendered
    # The hostile stderr and diff are shown verbatim inside fences that hold.
    fences = [t for t in tokens if t.type == "fence"]
    assert [f.info for f in fences] == ["text", "diff", "diff"]  # stderr, hostile diff, regressed diff
    assert "Traceback\n```\n" in fences[0].content
    assert "+```\n" in fences[1].content
    assert "s3cret" not in text and "token=abc" not in text


def _big_report(n_pass: int, n_fail: int, diff_lines: int = 40) -> Report:
    results = []
    for i in range(n_pass):
        results.append(InteractionResult(seq=i, line=i + 2, method="tools/call", name=f"ok{i}", status="pass"))
    for i in range(n_fail):
        finding = Finding(
            kind="value-change",
            cls="breaking",
            path=f"$.result.content[{i}].text",
            message=HOSTILE,
            diff="\n".join(f"-old {j}\n+new {j}" for j in range(diff_lines)),
        )
        seq = n_pass + i
        results.append(
            InteractionResult(
                seq=seq, line=seq + 2, method="tools/call", name=f"bad{i}", status="fail", findings=(finding,)
            )
        )
    cassette = CassetteResult(path="big.jsonl", results=tuple(results), score=score(50.0, "F"))
    return report(cassette)


def test_small_report_is_not_shortened() -> None:
    text = markdown.render(_big_report(5, 2))
    assert "not shown" not in text and "Report shortened" not in text


def test_passing_rows_go_first() -> None:
    big = _big_report(2000, 3)
    full = markdown.render(big)
    limit = len(full.encode()) - 1
    text = markdown.render(big, max_bytes=limit)
    assert len(text.encode()) <= limit
    tables = _tables(_assert_structurally_safe(text))
    rows = tables[-1]
    assert html.unescape(rows[1][1]) == "2000 passing interaction(s) not shown"
    assert [r[1] for r in rows[2:]] == ["tools/call bad0", "tools/call bad1", "tools/call bad2"]
    assert text.count("<details>") == 3  # failure details kept


def test_then_details_then_the_tail() -> None:
    big = _big_report(10, 300, diff_lines=60)
    for limit in (markdown.MIN_BYTES, 4000, 20_000, 65_536, 200_000):
        text = markdown.render(big, max_bytes=limit)
        assert len(text.encode("utf-8")) <= limit, limit
        tokens = _assert_structurally_safe(text)
        assert "The JSON report (--json) has everything." in text
        # The note is a real blockquote, not swallowed by an unclosed fence or <details>.
        assert tokens[-1].type == "blockquote_close"
        assert re.match(r"## (✅|❌) mcp-replay (passed|failed)\b.*: grade [BF] ", text), text[:80]
    mid = markdown.render(big, max_bytes=20_000)
    assert "Report truncated" in mid and "<details>" not in mid
    rows = _tables(_parse(mid))[-1]
    assert rows[2][1] == "tools/call bad0"  # failures kept in order from the top


def test_shortened_without_truncation_keeps_every_failure_row() -> None:
    big = _big_report(10, 50, diff_lines=200)
    no_details_size = len(markdown.render(big, max_bytes=10**9).encode())
    text = markdown.render(big, max_bytes=no_details_size // 3)
    assert "Report shortened" in text
    rows = _tables(_parse(text))[-1]
    assert len(rows) == 1 + 1 + 50  # header, "passing not shown", every failure


def test_max_bytes_has_a_floor() -> None:
    with pytest.raises(ValueError):
        markdown.render(report(), max_bytes=100)
