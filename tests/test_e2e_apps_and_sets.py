"""Two more third-party servers nobody here wrote, recorded with the official SDK client through
``mcp-replay record`` and replayed three times unchanged with no options: not one finding.

* ``@modelcontextprotocol/server-pdf`` (npm): an MCP App, ``ui://pdf-viewer/mcp-app.html``, a
  4.4 MB HTML bundle of minified JavaScript (``text/html;profile=mcp-app``). It is compared as a
  document (``normalize.is_document``): a changed bundle is one finding with sizes and digests.
* ``cli-mcp-server`` (PyPI, on the 1.x SDK): its tool description lists the allowed commands and
  flags from a Python set, in a new order in every process (string hashing is salted per run).
  The confirmation pass learns "the same items in another order"; an item added is still caught.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, command, passed, record_through_proxy, replay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

REPLAYS = 3
PDF = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-pdf" / "dist" / "index.js"
APP = "ui://pdf-viewer/mcp-app.html"
CLI = SERVERS / ".venv-sdk1" / "bin" / "cli-mcp-server"
COMMANDS = "head,sort,wc,ls,cat,echo,pwd,tail"


async def pdf_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    listed = await client.list_resources()
    assert APP in [str(r.uri) for r in listed.resources], listed
    read = await client.read_resource(APP)
    return {"size": sum(len(getattr(c, "text", "") or "") for c in read.contents)}


async def cli_session(client: Client) -> dict[str, Any]:
    listed = await client.list_tools()
    await client.call_tool("show_security_rules", {})
    await client.call_tool("run_command", {"command": "ls"})
    return {"description": listed.tools[0].description}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("apps-and-sets")
    (path / "files").mkdir()
    (path / "files" / "a.txt").write_text("a\n", encoding="utf-8")
    return path


def pdf_server() -> str:
    return command("node", PDF, "--stdio")


def cli_server(workdir: Path) -> str:
    return command("/usr/bin/env", f"ALLOWED_DIR={workdir / 'files'}", f"ALLOWED_COMMANDS={COMMANDS}", CLI)


@pytest.fixture(scope="module")
def pdf_cassette(workdir: Path) -> Path:
    if not PDF.exists():
        pytest.skip("npm server-pdf is not installed: (cd tests/servers && npm ci)")
    cassette = workdir / "pdf.jsonl"
    seen = record_through_proxy(pdf_server(), cassette, pdf_session)
    assert seen["size"] > 4_000_000, seen  # the multi-megabyte bundle this is about
    return cassette


@pytest.fixture(scope="module")
def cli_cassette(workdir: Path) -> Path:
    if not CLI.exists():
        pytest.skip("cli-mcp-server is not installed: tests/run.sh (tests/servers/requirements-sdk1.txt)")
    cassette = workdir / "cli.jsonl"
    record_through_proxy(cli_server(workdir), cassette, cli_session)
    return cassette


def _assert_no_findings(run: Any) -> None:
    assert run.report is not None, run.describe()
    assert run.findings() == [], run.describe()
    assert all(passed(i) for i in run.interactions()), run.describe()
    assert run.code == 0, run.describe()


def _tampered(cassette: Path, old: str, new: str, into: Path) -> Path:
    """The cassette with ``old`` replaced by ``new`` once in recorded responses (a 'previous build')."""
    lines = []
    for text in cassette.read_text("utf-8").splitlines():
        entry = json.loads(text)
        body = json.dumps(entry.get("response"))
        if entry.get("response") is not None and old in body:
            entry["response"] = json.loads(body.replace(old, new, 1))
        lines.append(json.dumps(entry))
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


def test_the_mcp_app_server_replays_clean_three_times(pdf_cassette: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        _assert_no_findings(replay(pdf_server(), pdf_cassette, report=workdir / f"pdf-{attempt}.json", gate=False))


def test_a_changed_app_bundle_is_one_document_finding(pdf_cassette: Path, workdir: Path) -> None:
    tampered = _tampered(pdf_cassette, "<head>", "<head><meta name=build content=2>", workdir / "pdf-tampered.jsonl")
    run = replay(pdf_server(), tampered, report=workdir / "pdf-tampered.json", gate=False)
    messages = [f["message"] for f in run.findings()]
    assert len(messages) == 1 and messages[0].startswith("document changed: "), run.describe()


def test_the_set_order_server_replays_clean_three_times(cli_cassette: Path, workdir: Path) -> None:
    for attempt in range(REPLAYS):
        _assert_no_findings(
            replay(cli_server(workdir), cli_cassette, report=workdir / f"cli-{attempt}.json", gate=False)
        )


def test_an_added_command_in_the_set_is_still_caught(cli_cassette: Path, workdir: Path) -> None:
    tampered = _tampered(
        cli_cassette, "Available commands: ", "Available commands: rm, ", workdir / "cli-tampered.jsonl"
    )
    run = replay(cli_server(workdir), tampered, report=workdir / "cli-tampered.json", gate=False)
    assert [f["kind"] for f in run.findings()] == ["value-change"], run.describe()
