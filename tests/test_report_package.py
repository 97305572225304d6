"""mcp_replay_action.report.render: every format by name, from the same finished Report."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from mcp_replay_action import report as reports
from mcp_replay_action.errors import ConfigError
from report_fixtures import report

pytestmark = pytest.mark.unit


def test_every_format_renders_by_name() -> None:
    done = report()
    outputs = {fmt: reports.render(done, fmt) for fmt in reports.FORMATS}
    assert outputs["console"].startswith("cassettes/healthy.jsonl")
    assert json.loads(outputs["json"])["schema"] == "mcp-replay/report@1"
    assert outputs["markdown"].startswith("## ✅ mcp-replay passed: grade B")
    assert ET.fromstring(outputs["junit"]).tag == "testsuites"
    assert json.loads(outputs["badge"])["message"] == "B (80.0)"


def test_unknown_format_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown report format 'html'"):
        reports.render(report(), "html")


def test_the_json_module_does_not_shadow_the_standard_library() -> None:
    from mcp_replay_action.report import json_report as report_json

    assert report_json.json is json  # inside the module, `json` is still the standard library
    assert reports.json_report is report_json
