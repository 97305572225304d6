"""Workflow commands: escaping exactly as the runner unescapes, neutralised foreign text,
multiline-safe outputs, debug logging, and the annotation budget (worst 9 + one notice)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from mcp_replay_action.github.annotations import annotations_for
from mcp_replay_action.github.commands import (
    Annotation,
    Commands,
    escape_data,
    escape_property,
    format_command,
    neutralise,
    write_outputs,
)
from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult
from report_fixtures import HOSTILE, hostile_report, regressed_cassette, report
from runner_parse import parse_commands, read_outputs, unescape_data, unescape_property

pytestmark = pytest.mark.unit


def test_escaping_matches_githubs_rules() -> None:
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert escape_data("%0A") == "%250A"  # a literal "%0A" stays literal


def test_round_trip_through_the_runners_parser() -> None:
    line = format_command("error", {"file": "a,b:c.jsonl", "line": 3, "title": "x::y,z"}, HOSTILE)
    assert "\n" not in line and "\r" not in line
    [cmd] = parse_commands(line)
    assert cmd.name == "error"
    assert cmd.properties == {"file": "a,b:c.jsonl", "line": "3", "title": "x::y,z"}
    assert cmd.data == HOSTILE


def test_neutralised_text_has_no_command_line() -> None:
    text = neutralise(HOSTILE + "\n   ::set-output name=x::1\n##[error]y")
    assert parse_commands(text) == []


def test_untrusted_block_is_fenced_by_stop_commands() -> None:
    buf = io.StringIO()
    out = Commands(buf)
    with out.untrusted():
        out.log("::error::nope")
    lines = buf.getvalue().splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert lines[-1] == f"::{token}::"
    assert parse_commands(lines[1]) == []


def test_debug_only_when_runner_debug() -> None:
    quiet, loud = io.StringIO(), io.StringIO()
    Commands(quiet, debug=False).debug("x")
    Commands(loud, debug=True).debug("x\n::error::y")
    assert quiet.getvalue() == ""
    assert loud.getvalue() == "::debug::x%0A::error::y\n"


def test_outputs_are_multiline_safe(tmp_path: Path) -> None:
    path = tmp_path / "output"
    hostile = "line1\nEOF\nghadelimiter_x\ngrade=A\n"
    write_outputs(path, {"grade": "B", "report": hostile, "comment-url": ""})
    assert read_outputs(path) == {"grade": "B", "report": hostile, "comment-url": ""}
    write_outputs(None, {"grade": "B"})  # outside GitHub: nothing, no error


def test_annotation_command_shape() -> None:
    buf = io.StringIO()
    Commands(buf).annotate(Annotation("warning", "m", "t", "cassettes/a.jsonl", 5))
    assert buf.getvalue() == "::warning file=cassettes/a.jsonl,line=5,title=t::m\n"


def test_annotations_point_at_cassette_lines_worst_first() -> None:
    notes = annotations_for(report(regressed_cassette()))
    assert [(a.level, a.file, a.line) for a in notes] == [
        ("error", "cassettes/regressed.jsonl", 7),
        ("error", "cassettes/regressed.jsonl", 6),
        ("error", "cassettes/regressed.jsonl", 6),
        ("warning", "cassettes/regressed.jsonl", 5),
    ]
    assert notes[0].title == "missing-response: tools/call slow"
    assert notes[1].title == "breaking value-change: tools/call add"
    assert notes[1].message.startswith("'5' -> '6'\nat $.result.content[0].text")
    assert "recorded:" not in notes[1].message  # the message already quotes the values
    assert 'live: {"echoed": true}' in notes[3].message


def _many(n_errors: int, n_warnings: int) -> CassetteResult:
    results = []
    for i in range(n_errors + n_warnings):
        cls = "breaking" if i < n_errors else "additive"
        finding = Finding(kind="value-change", cls=cls, path=f"$.result.v{i}", message=f"change {i}")
        results.append(
            InteractionResult(seq=i, line=i + 2, method="tools/call", name="t", status="fail", findings=(finding,))
        )
    return regressed_cassette().__class__(
        path="cassettes/many.jsonl", results=tuple(results), score=regressed_cassette().score
    )


def test_annotation_budget_sends_worst_nine_and_one_notice() -> None:
    notes = annotations_for(report(_many(14, 12)))
    levels = [a.level for a in notes]
    assert levels.count("error") == 9 and levels.count("warning") == 9 and levels.count("notice") == 1
    assert [a.line for a in notes if a.level == "error"] == list(range(2, 11))
    notice = notes[-1]
    assert notice.level == "notice"
    assert "8 more findings (5 errors, 3 warnings)" in notice.message


def test_no_notice_within_budget() -> None:
    notes = annotations_for(report(_many(9, 9)))
    assert [a.level for a in notes].count("notice") == 0 and len(notes) == 18


def test_hostile_annotations_cannot_inject(tmp_path: Path) -> None:
    buf = io.StringIO()
    out = Commands(buf)
    for a in annotations_for(hostile_report()):
        out.annotate(a)
    text = buf.getvalue()
    lines = re.split(r"\r\n|\r|\n", text.rstrip("\n"))  # how the runner splits output
    commands = parse_commands(text)
    assert len(commands) == len(lines)  # every line is one of our commands, nothing more
    assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    text.encode("utf-8")  # lone surrogates were shown, not written
    assert {c.name for c in commands} <= {"error", "warning", "notice"}
    for c in commands:
        assert unescape_property(escape_property(c.properties.get("file", ""))) == c.properties.get("file", "")
        assert unescape_data(escape_data(c.data)) == c.data
