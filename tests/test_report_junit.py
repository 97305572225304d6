"""The JUnit XML report: structure, counts, and well-formed XML whatever the server said."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from xml.dom import minidom

import pytest

from mcp_replay_action.model.results import CassetteResult, InteractionResult
from mcp_replay_action.report import junit
from report_fixtures import HOSTILE, healthy_cassette, hostile_report, regressed_cassette, report, score

pytestmark = pytest.mark.unit


def test_one_suite_per_cassette_one_case_per_interaction() -> None:
    text = junit.render(report(healthy_cassette(), regressed_cassette()))
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n')
    root = ET.fromstring(text.encode("utf-8"))
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "9",
        "failures": "2",
        "errors": "1",
        "skipped": "1",
    }
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["cassettes/healthy.jsonl", "cassettes/regressed.jsonl"]
    cases = suites[1].findall("testcase")
    assert [c.get("name") for c in cases] == [
        "#0 initialize",
        "#2 tools/list",
        "#3 tools/call echo",
        "#4 tools/call add",
        "#5 tools/call slow",
        "#6 ping",
    ]
    props = {p.get("name"): p.get("value") for p in suites[1].iter("property")}
    assert props["grade"] == "D" and props["score"] == "62.5" and props["capped"] == "true"

    add = cases[3]
    assert add.get("line") == "6" and add.get("file") == "cassettes/regressed.jsonl"
    failure = add.find("failure")
    assert failure is not None and failure.get("type") == "value-change"
    assert failure.get("message") == "value-change: $.result.content[0].text: '5' -> '6'"
    assert "[value-change, breaking] $.result.content[0].text: '5' -> '6'" in (failure.text or "")
    assert "-line two\n+line 2" in (failure.text or "")

    slow = cases[4]
    error = slow.find("error")
    assert error is not None and error.get("type") == "missing-response" and slow.find("failure") is None
    assert cases[5].find("skipped") is not None
    assert cases[0].find("failure") is None and cases[0].find("error") is None
    assert cases[0].get("time") == "0.002"


def test_a_replay_that_stopped_early_is_an_error_case_with_stderr() -> None:
    cassette = CassetteResult(
        path="c.jsonl",
        results=(InteractionResult(seq=1, line=2, method="tools/call", name="x", status="missing"),),
        score=score(0.0, "F", capped=True),
        error="server exited with status 1",
        stderr_tail="Traceback: boom\n",
    )
    root = ET.fromstring(junit.render(report(cassette)))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("errors") == "2"
    replay = [c for c in suite.findall("testcase") if c.get("name") == "replay"]
    assert replay and replay[0].find("error").get("message") == "server exited with status 1"  # type: ignore[union-attr]
    assert suite.findtext("system-err") == "Traceback: boom\n"


def test_hostile_text_still_makes_well_formed_xml() -> None:
    text = junit.render(hostile_report())
    text.encode("utf-8")
    root = ET.fromstring(text.encode("utf-8"))  # expat: strict XML 1.0
    minidom.parseString(text.encode("utf-8"))
    case = root.find("testsuite/testcase")
    assert case is not None
    # The hostile name survives, with forbidden characters shown as escapes.
    name = case.get("name") or ""
    assert "<script>alert(1)</script>" in name and "\\x00" in name and "\x00" not in name
    assert "\\ud800" in (case.find("failure").text or "")  # type: ignore[union-attr]
    assert case.get("time") == "0.000"  # NaN latency
    assert HOSTILE[:20] in (root.findtext("testsuite/system-err") or "")
