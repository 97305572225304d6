"""Integer ids by data flow, end to end, on a server written the way a user writes one
(``tests/servers/tickets_server.py``: the official Python SDK's ``MCPServer``, ids from a counter
that starts wherever the sequence stands, e.g. 23014), recorded with the official SDK client through
``mcp-replay record``:

* replayed unchanged, with and without ``--thread id``: every id is threaded (``recorded -> live``),
  the server starts once (it appends a line per start), nothing fails and nothing is noise;
* the count a later ``list_tickets`` quotes as its ``limit`` is never threaded;
* a changed count, carried as ``structuredContent: {"result": N}`` and the text ``"N"``, is one
  finding on one interaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, python_server, record_through_proxy, replay

pytestmark = pytest.mark.integration

TICKETS = python_server(SERVERS / "tickets_server.py")


async def tickets_session(client: Client) -> dict[str, Any]:
    """A user's session: each id is read from an answer and quoted back; the count is read and
    quoted as a limit."""
    await client.list_tools()
    ticket = (await client.call_tool("open_ticket", {"title": "printer jam"})).structured_content
    assert ticket is not None
    assert not (await client.call_tool("get_ticket", {"id": ticket["id"]})).is_error
    quick = (await client.call_tool("open_quick", {"title": "coffee"})).structured_content
    assert quick is not None
    assert not (await client.call_tool("close_ticket", {"ticket": quick["result"]})).is_error
    count = (await client.call_tool("count_tickets", {})).structured_content
    assert count is not None and count["result"] == 2
    assert not (await client.call_tool("list_tickets", {"limit": count["result"]})).is_error
    assert not (await client.call_tool("export_tickets", {})).is_error
    return {"id": ticket["id"], "quick": quick["result"]}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("tickets") / "tickets.jsonl"
    seen = record_through_proxy(TICKETS, path, tickets_session)
    return path, seen


def _by_name(run: Any) -> dict[str, dict[str, Any]]:
    return {i["name"]: i for i in run.interactions() if i["name"]}


@pytest.mark.parametrize("rules", [(), ("--thread", "id")], ids=["data-flow", "declared"])
def test_an_integer_id_below_100000_is_threaded_and_the_server_starts_once(
    recorded: tuple[Path, dict[str, Any]], rules: tuple[str, ...], tmp_path: Path
) -> None:
    cassette, seen = recorded
    assert seen["id"] < 100_000 and seen["quick"] < 100_000  # what the old floor never threaded
    starts = tmp_path / "starts"
    run = replay(TICKETS, cassette, "-v", "--env", f"TICKETS_STARTS={starts}", *rules, report=tmp_path / "r.json")
    assert run.code == 0, run.describe()
    assert len(starts.read_text().splitlines()) == 1, run.describe()  # no confirmation pass
    calls = _by_name(run)
    assert all(i["status"] == "pass" and not i["findings"] and not i["noise"] for i in calls.values()), run.describe()
    assert "learned as noise" not in run.stdout
    # The id is threaded where the answer minted it and where a request quoted it, and so is the
    # number the SDK wrapped as {"result": N}.
    for minted, quoted, recorded_value in (
        ("open_ticket", "get_ticket", seen["id"]),
        ("open_quick", "close_ticket", seen["quick"]),
    ):
        subs = [(s["recorded"], s["live"]) for s in calls[minted]["substitutions"]]
        assert [r for r, _ in subs] == [str(recorded_value)], calls[minted]
        assert [(s["recorded"], s["live"]) for s in calls[quoted]["substitutions"]] == subs
        assert f"threaded '{subs[0][0]}' -> '{subs[0][1]}'" in run.stdout
    # A count quoted as a limit is the client's reading, never a minted id.
    assert not calls["count_tickets"]["substitutions"] and not calls["list_tickets"]["substitutions"]


def test_a_changed_count_in_both_copies_is_one_finding_and_the_limit_is_sent_as_recorded(
    recorded: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    cassette, _ = recorded
    changed = f"env TICKETS_VARIANT=miscount {TICKETS}"
    run = replay(changed, cassette, report=tmp_path / "c.json")
    assert run.code == 1, run.describe()
    failed = [i for i in run.interactions() if i["status"] == "fail"]
    assert [i["name"] for i in failed] == ["count_tickets"], run.describe()
    [finding] = run.findings()
    assert finding["path"] == "$.result.structuredContent.result", finding
    assert (finding["before"], finding["after"]) == (2, 3), finding
    assert finding["also"] == ["$.result.content[0].text"], finding
    assert not _by_name(run)["list_tickets"]["substitutions"]
    assert "1 failed" in run.stdout, run.stdout
