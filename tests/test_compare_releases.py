"""``mcp-replay compare-builds`` across two releases of one third-party server: the official
``@modelcontextprotocol/server-memory`` 2025.4.25 (installed here into a temporary directory with
``npm install``) as the base, and the 2026.8.31 release tests/servers pins as the head. The
release's listing and answer changes are each found and classed: every tool gained an
``outputSchema`` (additive) and a ``title`` (cosmetic), its hints were spelled out, the read-only
tools' answers gained ``structuredContent`` (additive), and the server now speaks the protocol
version the client asked for (``initialize``: a value change, breaking, as a downgrade would be).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from e2e_helpers import command, run_cli
from test_e2e_real_servers import MEMORY, needs_node

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600), needs_node]

BASE_RELEASE = "2025.4.25"


@pytest.fixture(scope="module")
def base_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The older release, installed with npm (from its cache when it has the package)."""
    root = tmp_path_factory.mktemp("memory-base")
    (root / "package.json").write_text("{}\n")
    spec = f"@modelcontextprotocol/server-memory@{BASE_RELEASE}"
    done = subprocess.run(
        ["npm", "install", "--prefer-offline", "--no-audit", "--no-fund", "--silent", spec],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"npm install {spec} failed: {done.stderr[-2000:]}")
        pytest.skip(f"npm install {spec} failed (no registry reachable?): {done.stderr.strip()[-300:]}")
    return root / "node_modules" / ".bin" / "mcp-server-memory"


def test_two_releases_differ_in_their_listing_and_answers_each_classed(base_release: Path, tmp_path: Path) -> None:
    store = f"MEMORY_FILE_PATH={tmp_path / 'memory.jsonl'}"
    run = run_cli(
        "compare-builds",
        "--base",
        command("env", store, base_release),
        "--head",
        command("env", store, MEMORY),
        # The old release marks no tool read-only, so nothing would be called unless named.
        *("--call", "read_graph", "--call", "search_nodes", "--call", "open_nodes"),
        report=tmp_path / "report.json",
    )
    assert run.code == 1, run.describe()
    seen = {(f["method"], f["rule"], f["class"]) for f in run.findings()}
    assert seen >= {
        ("initialize", "value-changed", "breaking"),  # protocolVersion 2024-11-05 -> 2025-11-25
        ("initialize", "capability-added", "additive"),  # resources, tools.listChanged
        ("tools/list", "key-added", "additive"),  # outputSchema, execution, $schema
        ("tools/list", "hint-narrowed", "additive"),  # destructiveHint, openWorldHint spelled out
        ("tools/list", "metadata-text", "cosmetic"),  # a title on every tool
    }, run.describe()
    calls = [f for f in run.findings() if f["method"] == "tools/call"]
    assert {f["name"] for f in calls} == {"read_graph", "search_nodes", "open_nodes"}, run.describe()
    assert all(f["path"] == "$.result.structuredContent" and f["class"] == "additive" for f in calls)
    assert "base: " in run.stderr and "3 tools called" in run.stderr
