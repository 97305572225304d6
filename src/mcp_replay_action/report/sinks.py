"""Report sinks shared by the CLI and the action: the files a finished report is written to.
Each is written atomically, only when asked for (and its renderer imported only then)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from mcp_replay_action.cassette import atomic_write_text
from mcp_replay_action.model.results import Report
from mcp_replay_action.report import render

if TYPE_CHECKING:
    from mcp_replay_action.report.sarif import Anchor

PathLike = str | os.PathLike[str]


def write_files(
    report: Report,
    *,
    json_file: PathLike | None = None,
    markdown_file: PathLike | None = None,
    junit_file: PathLike | None = None,
    badge_file: PathLike | None = None,
    sarif_file: PathLike | None = None,
    root: PathLike | None = None,
    sarif_anchor: Anchor | None = None,
) -> None:
    """Write ``report`` as JSON, Markdown, JUnit XML, a shields.io badge and SARIF, each where
    asked (SARIF names each cassette relative to ``root``, default the working directory, and
    points the findings of a cassette that is no file at ``sarif_anchor``)."""
    if json_file:
        from mcp_replay_action.report import json_report

        atomic_write_text(json_file, json_report.stream(report))  # never held whole
    for fmt, path in (("markdown", markdown_file), ("junit", junit_file), ("badge", badge_file)):
        if path:
            atomic_write_text(path, render(report, fmt))
    if sarif_file:
        from mcp_replay_action.report import sarif

        atomic_write_text(sarif_file, sarif.render(report, root, sarif_anchor))
