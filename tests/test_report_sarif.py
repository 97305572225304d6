"""``--sarif FILE``: a SARIF 2.1.0 log of every breaking finding and every definition-drift
finding at its cassette line, validated against the SARIF 2.1.0 JSON Schema shipped with the
tests (tests/schemas/sarif-2.1.0.json, from oasis-tcs/sarif-spec sarif-2.1/schema at a560296;
never fetched). Driven through the CLI against a real FastMCP server (tests/servers/typed_server.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from e2e_helpers import SERVERS, command, run_cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-2.1.0.json").read_text("utf-8"))
SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
TYPED = SERVERS / "typed_server.py"


def valid_sarif(text: str) -> dict[str, Any]:
    log = json.loads(text)
    validator = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return log


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


def test_server_text_cannot_mention_or_link() -> None:
    from mcp_replay_action.grade.score import score
    from mcp_replay_action.model.gate import Gate
    from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report, ResultList
    from mcp_replay_action.report.sarif import render

    finding = Finding("value-change", "breaking", "$.result", "@octocat see #12\n::error::x", rule="value-changed")
    inter = InteractionResult(seq=3, line=4, method="tools/call", name="t", status="fail", findings=(finding,))
    results = ResultList([inter])
    cassette = CassetteResult(path="/elsewhere/a b.jsonl", results=results, score=score(results))
    text = render(Report(cassettes=(cassette,), score=cassette.score, gate=Gate()), root="/work")
    log = valid_sarif(text)
    (result,) = log["runs"][0]["results"]
    message = result["message"]["text"]
    assert "@octocat" not in message and "#12" not in message and "\n" not in message
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "file:///elsewhere/a%20b.jsonl"
