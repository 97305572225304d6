"""The PR comment template and the job summary: content, safety with hostile text, size limits."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_replay_action.github import comment as sticky
from mcp_replay_action.github.summary import SUMMARY_LIMIT, render_summary, write_summary
from mcp_replay_action.github.template import MAX_COMMENT_CHARS, Links, render_comment
from mcp_replay_action.model.gate import Gate, GatePolicy
from mcp_replay_action.model.results import Report
from report_fixtures import HOSTILE, healthy_cassette, hostile_report, regressed_cassette, report
from runner_parse import parse_commands

pytestmark = pytest.mark.unit

LINKS = Links(
    server_url="https://github.com",
    repository="octo/demo",
    sha="abcdef1234567890abcdef1234567890abcdef12",
    run_url="https://github.com/octo/demo/actions/runs/42",
)
MENTION = re.compile(r"@(?=[0-9A-Za-z_-])")


def gated(r: Report, passed: bool) -> Report:
    return replace(
        r,
        gate=Gate(
            passed=passed,
            reasons=() if passed else ("grade B is below the minimum A",),
            policy=GatePolicy(fail_on="any", min_grade="A"),
        ),
    )


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


def outside_code(text: str) -> str:
    """``text`` without its fenced code blocks (GitHub neither links mentions nor renders HTML
    there); a fence closes only on a line of at least as many backticks."""
    out: list[str] = []
    fence = ""
    for line in text.splitlines():
        if fence:
            if line.startswith(fence) and set(line) == {"`"}:
                fence = ""
            continue
        match = re.match(r"(`{3,})", line)
        if match:
            fence = match.group(1)
            continue
        out.append(line)
    assert not fence, "unclosed code block"
    return "\n".join(out)


def assert_safe_markdown(text: str) -> None:
    """No mention, no raw HTML from outside, no workflow command, every table row intact."""
    assert parse_commands(text) == []
    text = outside_code(text)
    assert not MENTION.search(text), MENTION.search(text)
    assert "<script>" not in text
    # The only HTML is ours: <details>/<summary>/<sub> and the marker.
    tags = set(re.findall(r"</?([A-Za-z][A-Za-z0-9-]*)", text))
    assert tags <= {"details", "summary", "sub"}, tags
    tables: list[list[str]] = []
    previous_was_row = False
    for line in text.splitlines():
        if line.startswith("|"):
            if not previous_was_row:
                tables.append([])
            tables[-1].append(line)
            previous_was_row = True
        else:
            previous_was_row = False
    for rows in tables:
        widths = {row.count("|") for row in rows}
        assert len(widths) == 1, rows  # every row has the header's number of cells


def test_comment_shows_grade_table_findings_and_run_link() -> None:
    r = gated(report(healthy_cassette(), regressed_cassette()), passed=False)
    text = render_comment(r, marker=sticky.marker("default"), links=LINKS)
    assert text.startswith("<!-- mcp-replay:default -->\n")
    assert "### ❌ MCP replay failed (min-grade: A): grade **B** (80.0/100)" in text
    assert (
        "✅ fail-on: any: no regression or missing response · ❌ min-grade: A: grade B is below the minimum A" in text
    )
    assert "cassettes/regressed.jsonl" in text and "cassettes/healthy.jsonl" in text
    assert "#### Top findings" in text
    assert (
        "[cassettes/regressed.jsonl&#58;7](https://github.com/octo/demo/blob/"
        "abcdef1234567890abcdef1234567890abcdef12/cassettes/regressed.jsonl#L7)"
        in text
        or "cassettes/regressed.jsonl:7](" in text
    )
    assert "(https://github.com/octo/demo/actions/runs/42)" in text
    assert "`abcdef123456`" in text
    # Failing cassettes come first; the passing ones are folded after the findings.
    rows = table_rows(text)
    assert "regressed" in rows[2] and "healthy" not in rows[3]
    fold = text.index("<details><summary>✅ 1 passing cassette</summary>")
    assert text.index("#### Top findings") < fold < text.index("| ✅ cassettes/healthy.jsonl |")
    assert_safe_markdown(text)


def test_comment_for_a_passing_run_and_a_named_comment_id() -> None:
    r = gated(report(healthy_cassette()), passed=True)
    text = render_comment(r, marker=sticky.marker("node"), comment_id="node", links=Links())
    assert text.startswith("<!-- mcp-replay:node -->")
    assert "### ✅ MCP replay (node) passed: grade **A**" in text
    assert "What to do" not in text  # nothing to accept
    assert "<details><summary>✅ 1 passing cassette</summary>" in text
    assert "Top findings" not in text
    assert "local run" in text


def test_hostile_report_cannot_break_the_comment() -> None:
    r = gated(hostile_report(), passed=False)
    text = render_comment(r, marker=sticky.marker("default"), links=LINKS)
    assert_safe_markdown(text)
    assert text.count("<!-- mcp-replay:") == 1


def test_huge_report_fits_githubs_comment_limit() -> None:
    big_finding = regressed_cassette()
    cassettes = tuple(replace(big_finding, path=f"cassettes/c{i:04d}-{'x' * 80}.jsonl") for i in range(2000))
    r = gated(report(*cassettes), passed=False)
    text = render_comment(r, marker=sticky.marker("default"), links=LINKS)
    assert len(text) <= MAX_COMMENT_CHARS
    assert text.startswith("<!-- mcp-replay:default -->")
    assert "more cassette" in text
    assert_safe_markdown(text)


def test_summary_is_the_markdown_report_with_safe_text(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("earlier step output\n")
    written = write_summary(path, gated(hostile_report(), passed=False))
    text = path.read_text()
    assert written > 0 and text.startswith("earlier step output\n")
    assert "## ❌ MCP replay failed (min-grade: A): grade F" in text
    assert "<details>" in text
    assert_safe_markdown(text)
    assert HOSTILE not in text


def test_summary_stays_under_one_mebibyte() -> None:
    long_diff = "--- recorded\n+++ live\n" + "\n".join(f"-old {i}\n+new {i}" for i in range(200))
    base = regressed_cassette()
    results = tuple(
        replace(res, findings=tuple(replace(f, diff=long_diff) for f in res.findings)) for res in base.results
    )
    cassettes = tuple(replace(base, path=f"cassettes/{i}.jsonl", results=results) for i in range(250))
    text = render_summary(gated(report(*cassettes), passed=False))
    assert len(text.encode("utf-8")) < SUMMARY_LIMIT
    assert "shortened" in text or "truncated" in text


def test_no_summary_file_outside_github() -> None:
    assert write_summary(None, report()) == 0
