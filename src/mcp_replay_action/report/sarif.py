"""The SARIF 2.1.0 report (``--sarif FILE``, action output ``sarif``), for GitHub code scanning
(``github/codeql-action/upload-sarif``) and any other SARIF viewer.

One result per finding that matters to a reviewer of the server, at the cassette line of the
interaction it was found on: every breaking finding, and the definition-drift findings of a
listing (``tools/list``, ``prompts/list``, ``resources/list``, ``resources/templates/list``) even
when they do not gate: a description reworded (cosmetic) or dropped, an input schema that now
accepts more (an argument no longer required, a new one), an annotation that changed. A tool
definition that changes under a client that approved it is how a "rug pull" looks, so those carry the
``definition-drift`` and ``security`` tags. Noise is never reported.

A finding of an exploration that lives in no file of the repository (input ``baseline``: the
base build explored into a temporary cassette, named ``baseline <commit>``) has no cassette line,
and code scanning refuses a result without a physical location in the repository
(``locationFromSarifResult: expected artifact location``): it points at the ``Anchor`` the caller
gives (the action: the workflow line that asks for the baseline), and names the tool or listing
it concerns as its logical location. With no anchor such findings are left out of the log.

``ruleId`` is the finding's row of the class table (``classes.py``; the kind when a finding names
none), and the driver's rules are those rows. Every text passed the redactor before the report
was built; here it is made one plain line that cannot mention anyone or link an issue.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

from mcp_replay_action import __version__
from mcp_replay_action.compare.classes import RULE
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report
from mcp_replay_action.report._format import finding_line
from mcp_replay_action.values.safe import no_mentions, no_references, visible

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/mcp-replay/mcp-replay-action"
MESSAGE_LIMIT = 1000
LISTINGS = frozenset({"tools/list", "prompts/list", "resources/list", "resources/templates/list"})
# The drift rows reported even though they do not gate (breaking ones are reported anyway).
DRIFT_RULES = frozenset({"description-changed", "description-dropped", "hint-narrowed", "required-dropped"})
LEVELS = {"breaking": "error", "additive": "warning", "cosmetic": "note"}


def is_drift(result: InteractionResult, finding: Finding) -> bool:
    """A listing's finding that changes what a tool (prompt, resource) is or may do."""
    if result.method not in LISTINGS:
        return False
    return (
        finding.rule in DRIFT_RULES
        or finding.rule.startswith("hint-")
        or ".inputSchema" in finding.path
        or finding.path.endswith(".description")
    )


@dataclass(frozen=True)
class Anchor:
    """A line of a file of the repository, where the findings that have no cassette line point."""

    uri: str  # relative to the repository's root, as code scanning resolves it
    line: int


def render(report: Report, root: str | os.PathLike[str] | None = None, anchor: Anchor | None = None) -> str:
    """The report as a SARIF 2.1.0 log (one run), cassette paths relative to ``root`` (default:
    the working directory; the action passes the workspace); the findings of a cassette that is
    no file at ``anchor`` (left out without one)."""
    base = os.path.realpath(root if root is not None else os.getcwd())
    results = list(_results(report, base, anchor))
    used = sorted({r["ruleId"] for r in results})
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mcp-replay",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": [_rule(rule_id) for rule_id in used],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _results(report: Report, base: str, anchor: Anchor | None) -> Iterator[JSONObject]:
    for cassette in report.cassettes:
        if os.path.isfile(cassette.path):
            where: _Where | None = _Where(_uri(cassette, base), None, "")
        else:  # an exploration no file holds: at the anchor, named by what it was (``baseline <commit>``)
            where = _Where(anchor.uri, anchor.line, cassette.path) if anchor else None
        if where is None:
            continue
        for result in cassette.results:
            for finding in result.findings:
                drift = is_drift(result, finding)
                if finding.cls != "breaking" and not drift:
                    continue
                yield _result(where, result, finding, drift)


@dataclass(frozen=True)
class _Where:
    uri: str
    line: int | None  # None: the interaction's own cassette line
    name: str  # what the findings were found against when that is no file (``baseline 1a2b3c4d5e6f``)


def _result(where: _Where, result: InteractionResult, finding: Finding, drift: bool) -> JSONObject:
    text = f"{where.name + ': ' if where.name else ''}{result.label}: {finding_line(finding)}"
    # Code scanning keeps one alert per fingerprint across runs: the cassette line, the interaction
    # and the finding's path, not its (changing) message; at an anchor, the interaction by what it
    # asked (its seq moves when the base gains a tool).
    place = f"{result.seq}" if where.line is None else result.label
    out: JSONObject = {
        "ruleId": finding.rule or finding.kind,
        "level": LEVELS[finding.cls],
        "message": {"text": no_references(no_mentions(visible(text, MESSAGE_LIMIT)))},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": where.uri},
                    "region": {"startLine": max(1, result.line if where.line is None else where.line)},
                },
                "logicalLocations": [_logical(result)],
            }
        ],
        "partialFingerprints": {"mcpReplayFinding/v1": f"{where.uri}:{place}:{finding.kind}:{finding.path}"},
        "properties": {"kind": finding.kind, "class": finding.cls, "path": finding.path, "seq": result.seq},
    }
    if where.name:
        out["properties"]["cassette"] = visible(where.name, 200)
    if drift:
        out["properties"]["tags"] = ["definition-drift", "security"]
    return out


def _logical(result: InteractionResult) -> JSONObject:
    """What the finding concerns: the tool, prompt or resource it called (``tools/call add``), or
    the listing (``tools/list``)."""
    return {
        "name": visible(result.name or result.method, 200),
        "fullyQualifiedName": visible(result.label, 200),
        "kind": "function",
    }


def _rule(rule_id: str) -> JSONObject:
    row = RULE.get(rule_id)
    if row is None:
        return {"id": rule_id, "shortDescription": {"text": rule_id}}
    out: JSONObject = {
        "id": rule_id,
        "shortDescription": {"text": _plain(row.when)},
        "fullDescription": {"text": _plain(f"{row.when}: {row.cls}, because {row.why}")},
        "defaultConfiguration": {"level": LEVELS[row.cls]},
        "properties": {"class": row.cls},
    }
    return out


def _plain(text: str) -> str:
    return text.replace("`", "")


def _uri(cassette: CassetteResult, base: str) -> str:
    """The cassette's path as a URI relative to ``base`` when it lies under it (what code
    scanning resolves against the checkout), else a ``file://`` URI."""
    path = os.path.realpath(cassette.path)
    if path.startswith(base.rstrip(os.sep) + os.sep):
        return quote(os.path.relpath(path, base).replace(os.sep, "/"))
    return "file://" + quote(path.replace(os.sep, "/"))
