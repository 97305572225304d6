"""The JSON report: the documented mcp-replay/report@1 contract, checked by its JSON Schema."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import jsonschema
import pytest

from mcp_replay_action import __version__
from mcp_replay_action.model.gate import Gate, GatePolicy
from mcp_replay_action.model.results import Report
from mcp_replay_action.report import json_report as report_json
from report_fixtures import healthy_cassette, hostile_report, regressed_cassette, report, score

pytestmark = pytest.mark.unit

DOC = Path(__file__).resolve().parents[1] / "docs" / "report-format.md"


def _validator() -> jsonschema.protocols.Validator:
    schema = report_json.schema()
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _strict_loads(text: str) -> object:
    def reject(name: str) -> None:
        raise AssertionError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=reject)


def test_schema_is_a_valid_json_schema_shipped_with_the_package() -> None:
    schema = report_json.schema()
    assert schema["properties"]["schema"] == {"const": "mcp-replay/report@1"}
    _validator()


def test_fields_of_the_contract() -> None:
    gate = Gate(passed=False, reasons=("grade D below B",), policy=GatePolicy(fail_on="any", min_grade="B"))
    data = report_json.to_dict(
        report(healthy_cassette(), regressed_cassette(), target="python -m srv", gate=gate, tool_version="9.9")
    )
    _validator().validate(data)
    assert data["schema"] == "mcp-replay/report@1"
    assert data["tool_version"] == "9.9" and data["target"] == "python -m srv"
    assert (data["grade"], data["score"], data["capped"]) == ("B", 80.0, False)
    assert data["dimensions"] == {
        "responsiveness": 1.0,
        "match_rate": 0.8,
        "error_parity": 1.0,
        "structural_stability": 0.9,
    }
    counts = {k: data[k] for k in ("passed", "failed", "missing", "skipped", "total")}
    assert counts == {"passed": 5, "failed": 2, "missing": 1, "skipped": 1, "total": 9}
    assert data["gate"] == {
        "passed": False,
        "reasons": ["grade D below B"],
        "fail_on": "any",
        "min_grade": "B",
        "fail_on_regression": True,
        "accepted": 0,
        "accepted_classes": {},
    }
    regressed = data["cassettes"][1]
    assert regressed["path"] == "cassettes/regressed.jsonl"
    assert (regressed["grade"], regressed["score"], regressed["capped"]) == ("D", 62.5, True)
    assert (regressed["era"], regressed["protocol_version"]) == ("handshake", "2025-06-18")
    assert (regressed["passed"], regressed["failed"], regressed["missing"], regressed["total"]) == (2, 2, 1, 6)
    add = regressed["interactions"][3]
    assert {k: add[k] for k in ("seq", "line", "method", "name", "status", "kind", "class")} == {
        "seq": 4,
        "line": 6,
        "method": "tools/call",
        "name": "add",
        "status": "fail",
        "kind": "value-change",
        "class": "breaking",
    }
    assert add["latency_ms"] == 0.9 and add["live_error"] is False
    assert add["findings"][0] == {
        "kind": "value-change",
        "class": "breaking",
        "path": "$.result.content[0].text",
        "message": "'5' -> '6'",
        "before": "5",
        "after": "6",
        "diff": "",
        "rule": "",  # a finding built by hand names no row of the class table
        "also": [],
    }
    assert add["findings"][1]["diff"].startswith("--- recorded\n+++ live\n")
    missing = regressed["interactions"][4]
    assert (missing["status"], missing["kind"], missing["live_error"], missing["latency_ms"]) == (
        "missing",
        "missing-response",
        None,
        None,
    )


def test_renders_the_fields_it_is_given_and_never_rescores() -> None:
    # A deliberately inconsistent Report: the renderer must echo its Score, not recompute one.
    odd = Report(cassettes=(regressed_cassette(),), score=score(99.0, "A"))
    data = report_json.to_dict(odd)
    assert (data["grade"], data["score"]) == ("A", 99.0)


def test_defaults_tool_version_and_redacts_credentials_in_target() -> None:
    data = report_json.to_dict(report(healthy_cassette(), target="https://bob:hunter2@h.test/mcp?api_key=k1"))
    assert data["tool_version"] == __version__
    assert data["target"] == "https://***@h.test/mcp?api_key=***"
    assert data["gate"]["passed"] is True and data["gate"]["fail_on"] == "breaking"
    _validator().validate(data)


def test_hostile_report_is_strict_valid_json() -> None:
    text = report_json.dumps(hostile_report())
    text.encode("utf-8")  # lone surrogates would fail here
    data = _strict_loads(text)  # NaN / Infinity would fail here
    _validator().validate(data)
    finding = data["cassettes"][0]["interactions"][0]["findings"][0]
    assert finding["after"]["n"] == "nan" and finding["after"]["t"] == [1, 2]
    assert "\\ud800" in finding["message"]  # the surrogate is kept visible, escaped
    assert data["cassettes"][0]["interactions"][0]["latency_ms"] is None
    assert data["target"].startswith("https://***@example.test/mcp?token=***")


def test_schema_rejects_broken_reports() -> None:
    good = report_json.to_dict(report())
    validator = _validator()
    broken = []
    for mutate in (
        lambda d: d.pop("grade"),
        lambda d: d.update(schema="mcp-replay/report@2"),
        lambda d: d.update(grade="E"),
        lambda d: d.update(score=101),
        lambda d: d["dimensions"].update(match_rate=1.5),
        lambda d: d["cassettes"][1]["interactions"][3].update(status="broken"),
        lambda d: d["cassettes"][1]["interactions"][3]["findings"][0].update(kind="typo-change"),
        lambda d: d["cassettes"][1]["interactions"][3]["findings"][0].pop("path"),
        lambda d: d["cassettes"][0].pop("interactions"),
    ):
        doc = copy.deepcopy(good)
        mutate(doc)
        broken.append(doc)
    for doc in broken:
        with pytest.raises(jsonschema.ValidationError):
            validator.validate(doc)


def test_the_documented_example_follows_the_schema() -> None:
    text = DOC.read_text("utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    assert blocks, "docs/report-format.md lost its example"
    for block in blocks:
        _validator().validate(json.loads(block))


def test_every_documented_field_is_emitted_and_vice_versa() -> None:
    documented = set(re.findall(r"^\| `([a-z_]+)`", DOC.read_text("utf-8"), re.M))
    documented |= {"skipped", "total", "failed", "missing", "score", "capped", "dimensions", "after"}
    data = report_json.to_dict(report())
    emitted = set(data) | set(data["cassettes"][1]) | set(data["cassettes"][1]["interactions"][3])
    emitted |= set(data["cassettes"][1]["interactions"][3]["findings"][0])
    assert emitted <= documented, emitted - documented
