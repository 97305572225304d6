"""``--sarif FILE``: a SARIF 2.1.0 log of every breaking finding and every definition-drift
finding at its cassette line, validated against the SARIF 2.1.0 JSON Schema shipped with the
tests (tests/schemas/sarif-2.1.0.json, from oasis-tcs/sarif-spec sarif-2.1/schema at a560296;
never fetched). Driven through the CLI against a real FastMCP server (tests/servers/typed_server.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from e2e_helpers import SERVERS, command, run_cli
from sarif_check import valid_sarif

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
TYPED = SERVERS / "typed_server.py"


@pytest.fixture
def cassette(typed_cassette: Path) -> Path:
    return typed_cassette


def test_breaking_and_drift_findings_at_their_cassette_lines(cassette: Path, tmp_path: Path) -> None:
    sarif = tmp_path / "out.sarif"
    server = command(SDK1_PYTHON, TYPED, "--regressed", "--drift")
    run = run_cli(
        "replay", "--server", server, "--cassette", cassette, "--sarif", sarif, report=tmp_path / "r.json",
        cwd=cassette.parent,
    )  # fmt: skip
    assert run.code == 1, run.describe()
    log = valid_sarif(sarif.read_text("utf-8"))
    (only,) = log["runs"]
    results = only["results"]
    lines = {i["seq"]: i["line"] for i in run.interactions()}
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_rule.setdefault(result["ruleId"], []).append(result)
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "typed.jsonl"  # relative to the working directory
        assert physical["region"]["startLine"] == lines[result["properties"]["seq"]]
    # The regressed tool: its schema breach and its text copy, breaking, as errors.
    assert {r["level"] for r in by_rule["output-schema"]} == {"error"}
    assert by_rule["output-text-disagrees"][0]["level"] == "error"
    # The rug pull on echo: an annotation widened (breaking), the description reworded (cosmetic)
    # and a new optional argument (additive): those two do not gate, and are still in the log, tagged.
    drift = [r for r in results if "definition-drift" in r["properties"].get("tags", [])]
    drift_rules = {r["ruleId"] for r in drift}
    assert {"hint-widened", "description-changed"} <= drift_rules, drift_rules
    assert any(".inputSchema" in r["properties"]["path"] for r in drift), drift
    assert {r["level"] for r in by_rule["description-changed"]} == {"note"}
    assert all("tools/list" in r["message"]["text"] for r in drift)
    # Every ruleId is described by the driver.
    assert {r["id"] for r in only["tool"]["driver"]["rules"]} == set(by_rule)
    # The additive echo-output change of no tool definition is not in it; nothing unlisted is.
    report_breaking = sum(1 for f in run.findings() if f["class"] == "breaking")
    assert len(results) == report_breaking + sum(1 for r in drift if r["level"] != "error")


def test_a_clean_replay_writes_an_empty_valid_log(cassette: Path, tmp_path: Path) -> None:
    sarif = tmp_path / "clean.sarif"
    run = run_cli("replay", "--server", command(SDK1_PYTHON, TYPED), "--cassette", cassette, "--sarif", sarif)
    assert run.code == 0, run.describe()
    log = valid_sarif(sarif.read_text("utf-8"))
    assert log["runs"][0]["results"] == []


def _report(path: str, message: str = "value changed: 1 -> 2") -> Any:
    """A report of one breaking finding on ``tools/call t``, found against cassette ``path``."""
    from mcp_replay_action.grade.score import score
    from mcp_replay_action.model.gate import Gate
    from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report, ResultList

    finding = Finding("value-change", "breaking", "$.result", message, rule="value-changed")
    inter = InteractionResult(seq=3, line=4, method="tools/call", name="t", status="fail", findings=(finding,))
    results = ResultList([inter])
    cassette = CassetteResult(path=path, results=results, score=score(results))
    return Report(cassettes=(cassette,), score=cassette.score, gate=Gate())


def test_server_text_cannot_mention_or_link(tmp_path: Path) -> None:
    from mcp_replay_action.report.sarif import render

    elsewhere = tmp_path / "elsewhere" / "a b.jsonl"  # a cassette outside the root: a file:// URI
    elsewhere.parent.mkdir()
    elsewhere.write_text("{}\n", encoding="utf-8")
    text = render(_report(str(elsewhere), "@octocat see #12\n::error::x"), root=tmp_path / "work")
    log = valid_sarif(text)
    (result,) = log["runs"][0]["results"]
    message = result["message"]["text"]
    assert "@octocat" not in message and "#12" not in message and "\n" not in message
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file://" + str(elsewhere).replace(" ", "%20")


def test_findings_of_no_file_point_at_the_anchor_and_name_the_tool(tmp_path: Path) -> None:
    """A baseline's exploration lives in no file: its findings sit at the anchor the caller gives
    (a real line of the repository; code scanning refuses a result that is only logical), name the
    tool as their logical location, and keep one fingerprint whatever the base's seq numbers."""
    from mcp_replay_action.report.sarif import Anchor, render

    log = valid_sarif(render(_report("baseline 1a2b3c4d5e6f"), root=tmp_path, anchor=Anchor("ci/mcp.yml", 9)))
    (result,) = log["runs"][0]["results"]
    (location,) = result["locations"]
    assert location["physicalLocation"] == {"artifactLocation": {"uri": "ci/mcp.yml"}, "region": {"startLine": 9}}
    assert location["logicalLocations"] == [{"name": "t", "fullyQualifiedName": "tools/call t", "kind": "function"}]
    assert result["message"]["text"] == "baseline 1a2b3c4d5e6f: tools/call t: $.result: value changed: 1 -> 2"
    assert result["partialFingerprints"] == {"mcpReplayFinding/v1": "ci/mcp.yml:tools/call t:value-change:$.result"}
    assert result["properties"]["cassette"] == "baseline 1a2b3c4d5e6f"
    # With no anchor, such findings are left out: the log stays one code scanning accepts.
    assert valid_sarif(render(_report("baseline 1a2b3c4d5e6f"), root=tmp_path))["runs"][0]["results"] == []
