"""What a server sends while it answers (compare/notifications.py, replay/heard.py): progress by
count and last value, log messages by level and data, change notices by presence, requests to
the client by method; never timing.

End to end: an ``MCPServer`` written with the official SDK as a user writes one
(tests/servers/shop_server.py: progress and log messages from its tool's ``Context``), recorded
through ``mcp-replay record`` with the SDK client opted in to logs, then replayed against itself
and against drifted builds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import ignore_progress, python_server, replay
from mcp_replay_action.compare.notifications import comparable, compare_heard

pytestmark = pytest.mark.integration

SHOP = Path(__file__).parent / "servers" / "shop_server.py"


def note(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def progress(n: int, total: int = 3) -> list[dict[str, Any]]:
    return [note("notifications/progress", progressToken=7, progress=i + 1, total=total) for i in range(n)]


def log(level: str, data: Any) -> dict[str, Any]:
    return note("notifications/message", level=level, data=data)


def rules(recorded: list[dict[str, Any]], live: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(f.rule, f.path) for f in compare_heard(recorded, live)]


# -- by meaning, in process ---------------------------------------------------------------------------


def test_the_same_notifications_are_no_finding_whatever_their_token_or_time() -> None:
    recorded = [log("info", "at 2026-01-02T03:04:05Z"), *progress(3)]
    live = [
        log("info", "at 2027-05-06T07:08:09Z"),
        *[{**p, "params": {**p["params"], "progressToken": 99}} for p in progress(3)],
    ]
    assert rules(recorded, live) == []


def test_a_log_message_added_in_the_middle_is_one_finding() -> None:
    recorded = [log("info", "a"), log("info", "b"), log("info", "c")]
    live = [log("info", "a"), log("debug", "new"), log("info", "b"), log("info", "c")]
    assert rules(recorded, live) == [("log-changed", "$.notifications.message[1]")]
    raised = [log("info", "a"), log("error", "disk full"), log("info", "b"), log("info", "c")]
    assert rules(recorded, raised) == [("log-level-raised", "$.notifications.message[1]")]
    lowered = [log("info", "a"), log("debug", "b"), log("info", "c")]
    assert rules(recorded, lowered) == [("log-changed", "$.notifications.message[1]")]


def test_progress_by_count_and_last_value() -> None:
    assert rules(progress(3), progress(3)) == []
    assert rules(progress(3), progress(4, total=4)) == [
        ("progress-changed", "$.notifications.progress"),
        ("progress-changed", "$.notifications.progress.progress"),
        ("progress-changed", "$.notifications.progress.total"),
    ]
    assert [f.cls for f in compare_heard(progress(3), [])] == ["breaking"]


def test_progress_that_stops_short_of_its_total_is_the_same_finding_at_any_step() -> None:
    short = [rules(progress(3), progress(n))[-1] for n in (1, 2)]
    assert short == [("progress-unfinished", "$.notifications.progress.finished")] * 2
    unfinished = [f for n in (1, 2) for f in compare_heard(progress(3), progress(n)) if f.rule == "progress-unfinished"]
    assert unfinished[0] == unfinished[1] and unfinished[0].cls == "additive"  # equal: never learned as noise
    # Not this finding when the recording never reached its total either, or named none.
    assert rules(progress(2), progress(1)) == [
        ("progress-changed", "$.notifications.progress"),
        ("progress-changed", "$.notifications.progress.progress"),
    ]
    untotalled = [note("notifications/progress", progressToken=7, progress=i) for i in (1, 2)]
    assert "progress-unfinished" not in {r for r, _ in rules(untotalled, untotalled[:1])}


def test_how_many_progress_notifications_came_as_time_allowed_is_timing() -> None:
    def sent(*steps: float) -> list[dict[str, Any]]:
        return [note("notifications/progress", progressToken=7, progress=p, total=20) for p in steps]

    # Steps of uneven size (jcodemunch-mcp sends at most every 100 ms): the count is not compared.
    assert rules(sent(1, 4, 9, 13, 20), sent(1, 3, 7, 12, 16, 20)) == []
    # Equal steps are each step reported: one fewer is a finding.
    assert rules(sent(5, 10, 15, 20), sent(10, 20)) == [("progress-changed", "$.notifications.progress")]


def test_change_notices_by_presence() -> None:
    changed = note("notifications/tools/list_changed")
    assert rules([changed], [changed, changed]) == []  # a client refetches once either way
    assert rules([changed], []) == [
        ("notification-dropped", "$.notifications[method=notifications/tools/list_changed]")
    ]


def test_the_opt_out_and_what_is_never_compared_here() -> None:
    changed = note("notifications/resources/list_changed")
    # --ignore-notifications takes the method or its short name; a subscription's events are
    # the stream's to compare.
    on_stream = note("notifications/resources/updated", _meta={"io.modelcontextprotocol/subscriptionId": 1})
    kept = comparable([*progress(1), log("info", "x"), changed, on_stream], ["progress", "notifications/message"])
    assert kept == [changed]


# -- real processes ----------------------------------------------------------------------------------


async def shop_session(client: Client) -> dict[str, Any]:
    """The session ``conftest.shop_cassette`` records: a listing, an order with progress, a price."""
    await client.list_tools()
    placed = await client.call_tool("place_order", {"item": "tea", "quantity": 2}, progress_callback=ignore_progress)
    assert not placed.is_error, placed
    await client.call_tool("price", {"item": "tea"})
    return {}


def drifted(variant: str) -> str:
    """The shop server as a drifted build (``SHOP_SERVER_VARIANT``)."""
    return f"env SHOP_SERVER_VARIANT={variant} {python_server(SHOP)}"


def test_an_unchanged_server_with_notifications_replays_clean(shop_cassette: Path, tmp_path: Path) -> None:
    run = replay(python_server(SHOP), shop_cassette, report=tmp_path / "r.json")
    assert run.code == 0 and run.findings() == [], run.describe()


def test_progress_dropped_and_a_log_level_raised_are_caught(shop_cassette: Path, tmp_path: Path) -> None:
    run = replay(drifted("quiet,fraud"), shop_cassette, "--no-confirm", report=tmp_path / "r.json", gate=False)
    assert run.code == 1, run.describe()
    found = {(f["rule"], f["path"], f["class"]) for f in run.findings()}
    assert found == {
        ("progress-dropped", "$.notifications.progress", "breaking"),
        ("log-level-raised", "$.notifications.message[0]", "breaking"),
    }, run.describe()
    assert "warning: order REJECTED by fraud check" in run.stdout
    # A confirmation pass sees the same drift on a second start: it stays a finding.
    confirmed = replay(drifted("quiet,fraud"), shop_cassette, report=tmp_path / "c.json", gate=False)
    assert {(f["rule"], f["path"]) for f in confirmed.findings()} == {(r, p) for r, p, _ in found}


def test_an_output_property_named_title_removed_is_breaking(shop_cassette: Path, tmp_path: Path) -> None:
    # A property is a property whatever its name: not JSON Schema's ``title`` keyword.
    run = replay(drifted("untitled"), shop_cassette, "--no-confirm", report=tmp_path / "r.json", gate=False)
    assert run.code == 1, run.describe()
    listed = {(f["rule"], f["class"], f["path"]) for f in run.findings() if f["method"] == "tools/list"}
    schema = "$.result.tools[name=item_info].outputSchema"
    assert listed == {
        ("key-removed", "breaking", f"{schema}.properties.title"),  # the field a client reads
        ("item-removed", "breaking", f"{schema}.required[1]"),
        ("metadata-text", "cosmetic", f"{schema}.title"),  # the keyword: the model's name, Item -> UntitledItem
    }, run.describe()


def test_ignore_notifications_leaves_them_out(shop_cassette: Path, tmp_path: Path) -> None:
    run = replay(
        drifted("quiet,fraud,chatty"),
        shop_cassette,
        "--ignore-notifications",
        "progress",
        "--ignore-notifications",
        "notifications/message",
        report=tmp_path / "r.json",
    )
    assert run.code == 0 and run.findings() == [], run.describe()
    # A debug line more is reported, and does not gate by default (additive).
    chatty = replay(drifted("chatty"), shop_cassette, "--no-confirm", report=tmp_path / "c.json", gate=False)
    assert [(f["rule"], f["class"]) for f in chatty.findings()] == [("log-changed", "additive")], chatty.describe()
    assert chatty.code == 0, chatty.describe()
