"""The status badge (``--badge FILE``): a shields.io endpoint JSON document.

Publish the file anywhere shields.io can fetch it and point
``https://img.shields.io/endpoint?url=...`` at it; the badge reads ``mcp-replay | A (97.5)``.
"""

from __future__ import annotations

import json

from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.results import Report
from mcp_replay_action.report import _format

# shields.io named colours, best grade to worst.
GRADE_COLOURS = {"A": "brightgreen", "B": "green", "C": "yellow", "D": "orange", "F": "red"}


def to_dict(report: Report, *, label: str = "mcp-replay") -> JSONObject:
    """The shields.io endpoint document:
    ``{"schemaVersion": 1, "label": "mcp-replay", "message": "A (97.5)", "color": "brightgreen"}``."""
    grade = report.score.grade
    return {
        "schemaVersion": 1,
        "label": label,
        "message": f"{grade} ({_format.score_text(report.score.score)})",
        "color": GRADE_COLOURS.get(grade, "lightgrey"),
    }


def dumps(report: Report, *, label: str = "mcp-replay") -> str:
    """The badge document as JSON text (ends with a newline)."""
    return json.dumps(to_dict(report, label=label)) + "\n"
