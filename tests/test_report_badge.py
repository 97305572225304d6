"""The shields.io endpoint badge."""

from __future__ import annotations

import json

import pytest

from mcp_replay_action.report import badge
from report_fixtures import healthy_cassette, report, score

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(
    ("grade", "value", "colour"),
    [
        ("A", 97.5, "brightgreen"),
        ("B", 80.0, "green"),
        ("C", 71.25, "yellow"),
        ("D", 60.0, "orange"),
        ("F", 12.0, "red"),
    ],
)
def test_badge_by_grade(grade: str, value: float, colour: str) -> None:
    doc = badge.to_dict(report(healthy_cassette(), overall=score(value, grade)))
    assert doc == {
        "schemaVersion": 1,
        "label": "mcp-replay",
        "message": f"{grade} ({value:.1f})",
        "color": colour,
    }


def test_badge_json_text_and_label() -> None:
    text = badge.dumps(report(healthy_cassette(), overall=score(97.5, "A")), label="replay")
    assert json.loads(text) == {"schemaVersion": 1, "label": "replay", "message": "A (97.5)", "color": "brightgreen"}
    assert text.endswith("\n")
