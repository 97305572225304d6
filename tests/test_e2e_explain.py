"""A failure explains itself, end to end: a real server on the official ``mcp`` Python SDK
(``tests/servers/notes_dict_server.py``, an ``MCPServer`` whose tools return a dict, a multi-line
text and a lookup) is recorded through the proxy and replayed, through the CLI, against its
regressed twin, which changes one field of the dict to a string, one line of the text, and turns
the lookup into an error whose text quotes a token-like secret and a ``::warning::`` injection.

Each change is one finding (the SDK sends a dict as ``structuredContent`` and again as JSON text:
the twin is named, not reported again), a type change shows both JSON spellings, a text change a
unified diff, the error its live text, redacted, in every sink: console with ``-v``, Markdown,
the JSON report, annotations and the PR comment built from that report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, python_server, record_through_proxy, replay
from fakegithub import FakeGitHub
from github_action_run import make_workspace, run_action
from github_events import pull_request
from mcp_replay_action.github.annotations import annotations_for
from mcp_replay_action.github.commands import format_annotation_command
from mcp_replay_action.github.template import render_comment
from mcp_replay_action.report import json_report as report_json

pytestmark = pytest.mark.integration

NOTES = python_server(SERVERS / "notes_dict_server.py")
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # what the regressed server quotes


async def notes_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    note = await client.call_tool("get_note", {"note_id": "n1"})
    assert note.structured_content == {"id": "n1", "title": "Groceries", "count": 2}, note
    await client.call_tool("report", {})
    await client.call_tool("lookup", {"key": "colour"})
    return {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("explain")


@pytest.fixture(scope="module")
def cassette(workdir: Path) -> Path:
    path = workdir / "notes.jsonl"
    record_through_proxy(NOTES, path, notes_session, mode="legacy")
    return path


@pytest.fixture(scope="module")
def regressed(cassette: Path, workdir: Path) -> Any:
    markdown = workdir / "notes.md"
    run = replay(
        NOTES,
        cassette,
        "-v",
        "--markdown",
        str(markdown),
        "--env",
        "NOTES_VARIANT=regressed",
        report=workdir / "regressed.json",
        gate=False,
    )
    assert run.code == 1, run.describe()
    return run, markdown.read_text("utf-8")


def by_name(run: Any) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for finding in run.findings():
        out.setdefault(finding["name"], []).append(finding)
    return out


def test_the_unchanged_server_replays_clean(cassette: Path, workdir: Path) -> None:
    run = replay(NOTES, cassette, report=workdir / "clean.json")
    assert run.code == 0 and run.findings() == [], run.describe()


def test_a_dict_carried_twice_is_one_finding_with_both_json_spellings(regressed: Any) -> None:
    run, markdown = regressed
    [finding] = by_name(run)["get_note"]
    assert finding["path"] == "$.result.structuredContent.count"
    assert finding["also"] == ["$.result.content[0].text{json}.count"]
    assert (finding["class"], finding["rule"]) == ("breaking", "type-changed")
    assert finding["message"] == 'type changed from number to string: 2 -> "2"'
    line = (
        '$.result.structuredContent.count: type changed from number to string: 2 -> "2"'
        " (also in $.result.content[0].text{json}.count)"
    )
    assert line in run.stdout, run.describe()
    assert markdown.count("type changed from number to string") == 2  # its table row and its details


def test_a_changed_text_shows_a_unified_diff(regressed: Any) -> None:
    run, markdown = regressed
    [finding] = by_name(run)["report"]  # the returned string is also structuredContent.result: once
    assert finding["also"] == ["$.result.content[0].text"]
    assert "-shared: 3\n+shared: 5" in finding["diff"]
    assert " tags: 4\n-shared: 3" in finding["diff"]  # context around the changed line
    assert "           -shared: 3\n           +shared: 5\n" in run.stdout, run.describe()
    assert "```diff\n--- recorded\n+++ live\n" in markdown and "\n-shared: 3\n+shared: 5\n" in markdown


def test_a_result_that_became_an_error_shows_its_live_text_redacted(regressed: Any) -> None:
    run, markdown = regressed
    [finding] = by_name(run)["lookup"]
    assert (finding["kind"], finding["rule"]) == ("error-status-change", "tool-became-error")
    assert "lookup of colour refused: token [REDACTED] expired" in finding["message"]
    assert "lookup of colour refused: token [REDACTED] expired" in run.stdout, run.describe()
    assert "lookup of colour refused: token &#91;REDACTED] expired" in markdown
    everything = run.stdout + run.stderr + markdown + json.dumps(run.report)
    assert SECRET not in everything and SECRET[:12] not in everything
    # Nothing the server wrote starts a line: no workflow command in the log or the summary.
    assert not [ln for ln in (run.stdout + markdown).splitlines() if ln.lstrip().startswith("::")]


def test_annotations_and_comment_show_one_row_per_change_redacted(regressed: Any) -> None:
    run, _ = regressed
    report = report_json.from_dict(run.report)
    notes = annotations_for(report)
    assert [a.title for a in notes] == [
        "breaking error-status-change: tools/call lookup",
        "breaking structure-change: tools/call get_note",
        "breaking value-change: tools/call report",
    ]
    lookup, get_note, text = notes
    assert "token [REDACTED] expired ::warning::injected" in lookup.message
    assert "also in $.result.content[0].text{json}.count" in get_note.message
    assert "-shared: 3\n+shared: 5" in text.message  # the diff's changed lines, capped
    for note in notes:
        props = {"file": note.file, "line": note.line, "title": note.title}
        command = format_annotation_command(note.level, props, note.message)
        assert "\n" not in command and command.startswith(f"::{note.level} ")  # one command, escaped
        assert SECRET not in command
    comment = render_comment(report, marker="<!-- mcp-replay -->")
    rows = [ln for ln in comment.splitlines() if ln.startswith("| ") and "tools/call" in ln]
    assert len(rows) == 3, comment
    lookup_row, note_row, text_row = rows  # worst first, as the annotations
    assert "| breaking structure-change |" in note_row and 'type changed from number to string: 2 -> "2"' in note_row
    assert "token &#91;REDACTED] expired" in lookup_row
    assert text_row.endswith("-shared: 3 +shared: 5 |"), text_row  # a capped excerpt of the diff
    assert SECRET not in comment
    assert not [ln for ln in comment.splitlines() if ln.lstrip().startswith("::")]


def test_the_action_shows_each_change_once_redacted(cassette: Path, tmp_path: Path, fake: FakeGitHub) -> None:
    ws = make_workspace(tmp_path, {"cassettes/notes.jsonl": cassette})
    inputs = {"server": NOTES, "env": "NOTES_VARIANT=regressed", "github-token": "app-token"}
    run = run_action(ws, event_name="pull_request", event=pull_request(7, "a" * 40), inputs=inputs, api_url=fake.url)
    assert run.returncode == 1, run.stdout + run.stderr
    found = [c for c in run.annotations() if c.properties.get("file") == "cassettes/notes.jsonl"]
    titles = sorted(c.properties["title"] for c in found)
    assert titles == [
        "breaking error-status-change: tools/call lookup",
        "breaking structure-change: tools/call get_note",
        "breaking value-change: tools/call report",
    ], run.stdout
    (lookup,) = [c for c in found if "lookup" in c.properties["title"]]
    assert "token [REDACTED] expired ::warning::injected" in lookup.data
    assert not [c for c in run.commands if c.name == "warning" and "injected" in c.data + str(c.properties)]
    assert "```diff" in run.summary and "\n-shared: 3\n+shared: 5\n" in run.summary
    assert 'type changed from number to string: 2 -> "2"' in run.summary
    (body,) = [c["body"] for c in fake.comments.get(("octo/demo", 7), [])]
    assert body.count("| breaking ") == 3, body  # one row per change, the dict's twin not again
    for where, text in (("log", run.stdout + run.stderr), ("summary", run.summary), ("comment", body)):
        assert SECRET not in text, where
