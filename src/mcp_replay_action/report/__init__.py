"""Renderers of a finished ``Report``. Each renders the result it is given and never re-computes
a score.

- ``console.render(report, color=False, verbose=False)``: what ``mcp-replay replay`` prints.
- ``json_report.to_dict(report)`` / ``json_report.dumps(report)``: the versioned
  ``mcp-replay/report@1`` contract (``docs/report-format.md``).
- ``markdown.render(report, max_bytes=...)``: ``--markdown FILE``, bounded in size.
- ``junit.render(report)``: JUnit XML.
- ``badge.to_dict(report)`` / ``badge.dumps(report)``: shields.io endpoint JSON.
- ``sarif.render(report, root)``: ``--sarif FILE``, SARIF 2.1.0 for code scanning.
- ``sinks.write_files(report, json_file=..., markdown_file=..., ...)``: the report files the CLI
  and the action both write.
- ``public_target(text)``: a target (URL or command) with its credentials hidden.
- ``counts_text(report)``: ``12 passed, 3 reported (not gating), 0 missing``, in the gate's words.

``render(report, fmt)`` picks one of the file formats by name, for ``--format``-style options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.report._format import counts_text, public_target

if TYPE_CHECKING:
    from mcp_replay_action.model.results import Report

__all__ = ["FORMATS", "counts_text", "public_target", "render"]

FORMATS: tuple[str, ...] = ("console", "json", "markdown", "junit", "badge")


def render(report: Report, fmt: str) -> str:
    """``report`` as text in format ``fmt`` (one of ``FORMATS``), with each format's defaults."""
    # Each renderer is imported when asked for: a replay that prints to the console alone
    # should not pay for Markdown, JUnit and badge code at start-up.
    if fmt == "console":
        from mcp_replay_action.report import console

        return console.render(report)
    if fmt == "json":
        from mcp_replay_action.report import json_report

        return json_report.dumps(report)
    if fmt == "markdown":
        from mcp_replay_action.report import markdown

        return markdown.render(report)
    if fmt == "junit":
        from mcp_replay_action.report import junit

        return junit.render(report)
    if fmt == "badge":
        from mcp_replay_action.report import badge

        return badge.dumps(report)
    raise ConfigError(f"unknown report format {fmt!r}; expected one of {', '.join(FORMATS)}")
