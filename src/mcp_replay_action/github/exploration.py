"""What a ``baseline`` comparison explored, for the comment: the tools the base's exploration
called, the ones it left alone and why (not read-only, destructive, an input schema it could not
satisfy), and the report's findings as folded JSON a coding agent can act on.

Everything here is server text (tool names, reasons that quote a schema, finding messages), already
redacted by the exploration and the replay: each name passes ``md_cell`` (one inert line), the JSON
sits in a fenced block nothing inside can close (``md_code_block``)."""

from __future__ import annotations

import json

from mcp_replay_action.explore.explorer import Explored
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.results import Report
from mcp_replay_action.values.safe import md_cell, md_code_block

NAMES_SHOWN = 30  # tools named in the called line and the skipped table
JSON_FINDINGS = 100  # findings in the folded JSON summary
JSON_CHARS = 20_000


def exploration_block(explored: Explored, commit: str, report: Report) -> str:
    """Safe Markdown: what was explored of the base at ``commit``, and the findings as JSON."""
    called = ", ".join(f"`{md_cell(name, 80)}`" for name in explored.called[:NAMES_SHOWN])
    more = len(explored.called) - NAMES_SHOWN
    lines = [
        f"**Explored the base build** (`{md_cell(commit[:12], 12)}`): "
        + (f"{len(explored.called)} tool(s) called: {called}" if explored.called else "no tool called")
        + (f" and {more} more" if more > 0 else "")
        + f"; {len(explored.skipped)} left alone."
    ]
    if explored.skipped:
        lines += ["", "<details><summary>Left alone, and why</summary>", "", "| What | Why |", "|---|---|"]
        for skipped in explored.skipped[:NAMES_SHOWN]:
            lines.append(f"| {skipped.kind} {md_cell(skipped.name, 80)} | {md_cell(skipped.why, 200)} |")
        if len(explored.skipped) > NAMES_SHOWN:
            lines.append(f"| … {len(explored.skipped) - NAMES_SHOWN} more | |")
        lines += ["", "</details>"]
    summary = json.dumps(findings_json(report), indent=1, ensure_ascii=False)
    lines += [
        "",
        "<details><summary>Findings as JSON (for tools and coding agents)</summary>",
        "",
        md_code_block(summary, JSON_CHARS, "json").rstrip("\n"),
        "",
        "</details>",
    ]
    return "\n".join(lines)


def findings_json(report: Report) -> list[JSONObject]:
    """Every finding of a failed or changed interaction, worst class first: where it is (cassette,
    interaction, path), its rule and class, and what changed."""
    out: list[JSONObject] = []
    for cassette in report.cassettes:
        for result in cassette.results:
            for finding in result.findings:
                out.append(
                    {
                        "cassette": cassette.path,
                        "interaction": result.label,
                        "rule": finding.rule,
                        "class": finding.cls,
                        "kind": finding.kind,
                        "path": finding.path,
                        "message": finding.message,
                    }
                )
    order = {"breaking": 0, "additive": 1, "cosmetic": 2}
    out.sort(key=lambda f: order.get(str(f["class"]), 3))
    return out[:JSON_FINDINGS]
