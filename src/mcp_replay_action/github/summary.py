"""The job summary (``GITHUB_STEP_SUMMARY``): the Markdown report, sized for GitHub.

GitHub refuses a step summary over 1 MiB. The Markdown renderer (``report/markdown.py``) already
drops passing rows first, then failure details, then trims with a note, within a byte budget; here
we give it the budget that is left in this step's summary file, and the "what to do" the PR
comment also shows (``template.what_to_do``) under the headline.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp_replay_action.github.commands import append_summary
from mcp_replay_action.model.results import Report
from mcp_replay_action.report import markdown
from mcp_replay_action.values.safe import md_cell

SUMMARY_LIMIT = 1024 * 1024  # GitHub's limit for one step's summary, in bytes
MARGIN = 4096
TITLE = "MCP replay"


def render_summary(report: Report, *, max_bytes: int = SUMMARY_LIMIT - MARGIN, footer: str = "", lead: str = "") -> str:
    """The job summary for ``report`` in at most ``max_bytes`` bytes of UTF-8 (``lead``, what to
    do, under the headline, and ``footer``, added last, are our own Markdown)."""
    tail = f"\n{footer}\n" if footer else ""
    budget = max(markdown.MIN_BYTES, max_bytes - len(tail.encode("utf-8")))
    return markdown.render(report, max_bytes=budget, title=TITLE, lead=lead) + tail


def write_summary(path: str | os.PathLike[str] | None, report: Report, *, footer: str = "", lead: str = "") -> int:
    """Append the summary to this step's summary file; returns the bytes written (0 when the run
    has no summary file)."""
    if not path:
        return 0
    used = Path(path).stat().st_size if Path(path).exists() else 0
    room = SUMMARY_LIMIT - MARGIN - used
    if room < markdown.MIN_BYTES:
        return 0  # earlier output filled the step's summary; the annotations and comment remain
    text = render_summary(report, max_bytes=room, footer=footer, lead=lead)
    append_summary(path, text)
    return len(text.encode("utf-8"))


def write_failure_summary(path: str | os.PathLike[str] | None, message: str) -> None:
    """When the run stopped before a report existed, say why in the summary (one safe line)."""
    append_summary(path, f"## ⛔ {TITLE} could not run\n\n{md_cell(message, 1000)}\n")
