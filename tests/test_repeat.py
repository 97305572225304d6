"""``replay --repeat N`` re-sends side-effect-free requests N times, and only those: counted at
the real server (server-memory, whose tools say ``readOnlyHint``), by a ``tee`` of its stdin."""

from __future__ import annotations

import collections
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import NODE_BIN, command, passed, record_through_proxy, replay

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

MEMORY = NODE_BIN / "mcp-server-memory"

needs_node = pytest.mark.skipif(
    not os.environ.get("CI") and (not MEMORY.exists() or shutil.which("node") is None),
    reason="npm test servers not installed (run: tests/run.sh, or npm ci in tests/servers)",
)


async def session(client: Client) -> dict[str, Any]:
    await client.list_tools()  # the recorded listing says which tools are read-only
    entities = [{"entityType": "person", "name": "Ada", "observations": ["wrote the first program"]}]
    assert not (await client.call_tool("create_entities", {"entities": entities})).is_error
    await client.call_tool("add_observations", {"observations": [{"entityName": "Ada", "contents": ["born 1815"]}]})
    await client.call_tool("read_graph", {})
    await client.call_tool("search_nodes", {"query": "Ada"})
    return {}


def arrivals(log: Path) -> collections.Counter[str]:
    """How many times each request reached the server: ``method`` or ``tools/call name``."""
    seen: collections.Counter[str] = collections.Counter()
    for line in log.read_text("utf-8").splitlines():
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue  # notifications and our answers to the server's requests
        name = (message.get("params") or {}).get("name") if message["method"] == "tools/call" else None
        seen[f"{message['method']} {name}" if name else message["method"]] += 1
    return seen


@needs_node
def test_repeat_resends_read_only_requests_and_never_a_tool_that_may_write(tmp_path: Path) -> None:
    cassette = tmp_path / "memory.jsonl"
    store = tmp_path / "record" / "memory.jsonl"
    store.parent.mkdir()
    record_through_proxy(command(MEMORY), cassette, session, proxy_args=["--env", f"MEMORY_FILE_PATH={store}"])
    listing = next(json.loads(x) for x in cassette.read_text("utf-8").splitlines() if '"tools/list"' in x)
    hints = {t["name"]: t["annotations"]["readOnlyHint"] for t in listing["response"]["result"]["tools"]}
    assert hints["read_graph"] is True and hints["search_nodes"] is True
    assert hints["create_entities"] is False and hints["add_observations"] is False

    for repeat in (1, 3):
        log = tmp_path / f"stdin-{repeat}.jsonl"
        live_store = tmp_path / f"live-{repeat}" / "memory.jsonl"
        live_store.parent.mkdir()
        # The server's stdin passes through tee on its way in: every line that reached it.
        server = f"sh -c 'tee -a {log} | MEMORY_FILE_PATH={live_store} {MEMORY}'"
        run = replay(server, cassette, "--repeat", str(repeat), report=tmp_path / f"r{repeat}.json", gate=False)
        assert run.code == 0 and run.report is not None, run.describe()
        assert all(passed(i) for c in run.report["cassettes"] for i in c["interactions"]), run.describe()
        opening = {"initialize", "server/discover"}  # as recorded, once: the client's own opening
        assert {k: v for k, v in arrivals(log).items() if k not in opening} == {
            "tools/list": repeat,
            "tools/call create_entities": 1,
            "tools/call add_observations": 1,
            "tools/call read_graph": repeat,
            "tools/call search_nodes": repeat,
        }, run.describe()
