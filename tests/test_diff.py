"""``mcp-replay diff A B`` between two sessions of the same server made by two different clients.

The first session is recorded through the proxy with the official ``mcp`` SDK as the client; the
second is the same session as another client sends it: its own ``clientInfo`` and capabilities,
``params`` left out where the SDK sends ``{}``, and a request the SDK made that it never makes.
None of that is the server's doing, so diff reports nothing; a changed answer still fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import PYTHON, command, record_through_proxy, run_cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CALC = command(PYTHON, "-m", "mcp_replay_action.samples.calc_server")


async def session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.list_resources()
    await client.call_tool("add", {"a": 2, "b": 3})
    await client.read_resource("memo://readme")
    return {}


def other_client(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same session as another client would record it."""
    out = [entries[0]]
    for entry in entries[1:]:
        message = entry["message"]
        if message.get("method") == "resources/list":
            continue  # this client never lists resources
        params = message.get("params")
        if message.get("method") == "initialize":
            params["clientInfo"] = {"name": "other-client", "version": "9.9.9"}
            params["capabilities"] = {"sampling": {}}
        elif isinstance(params, dict) and not {k: v for k, v in params.items() if k != "_meta"}:
            message.pop("params")  # no params at all where the SDK sends {}
        out.append(entry)
    return out


def test_two_clients_sessions_of_one_server_diff_clean(tmp_path: Path) -> None:
    sdk = tmp_path / "sdk.jsonl"
    record_through_proxy(CALC, sdk, session, mode="legacy")
    entries = [json.loads(line) for line in sdk.read_text("utf-8").splitlines()]
    assert any(
        e.get("message", {}).get("params") == {} or "params" not in e.get("message", {"params": 1}) for e in entries[1:]
    )
    other = tmp_path / "other.jsonl"
    other.write_text("\n".join(json.dumps(e) for e in other_client(entries)) + "\n", encoding="utf-8")

    done = run_cli("diff", sdk, other, "--fail-on-regression", "--json")
    assert done.code == 0, done.describe()
    report = json.loads(done.stdout)
    interactions = [i for c in report["cassettes"] for i in c["interactions"]]
    assert not [i for i in interactions if i["status"] in ("fail", "missing")], done.describe()
    assert [i["method"] for i in interactions if i["status"] == "skipped"] == ["resources/list"]

    # A changed answer is still a finding.
    changed = [e for e in other_client(entries)]
    for e in changed:
        if e.get("message", {}).get("params", {}).get("name") == "add":
            e["response"]["result"]["content"][0]["text"] = "6"
    other.write_text("\n".join(json.dumps(e) for e in changed) + "\n", encoding="utf-8")
    failed = run_cli("diff", sdk, other, "--fail-on-regression")
    assert failed.code == 1, failed.describe()
