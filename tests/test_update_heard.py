"""``--update`` rewrites what the server sent besides its answers where a finding names it
(``replay/update_heard.py``), and leaves every other line's bytes alone.

End to end: an ``MCPServer`` written with the official SDK (tests/servers/shop_server.py: progress
and a log message from its tool's ``Context``), recorded through ``mcp-replay record`` with the SDK
client opted in to logs, replayed against a drifted build (``quiet``: no progress; ``fraud``: the
``info`` log rises to ``warning``; ``chatty``: one debug line more): the replay fails, ``--update``
rewrites the notification lines, and the next replay passes with every other line as it was.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from e2e_helpers import python_server, replay
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Finding, InteractionResult
from mcp_replay_action.replay.heard import LiveHeard
from mcp_replay_action.replay.update_heard import update_heard
from test_notifications import SHOP, drifted

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]


# -- on plain data ------------------------------------------------------------------------------------


def note(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def log(level: str, data: str) -> dict[str, Any]:
    return note("notifications/message", level=level, data=data)


def progress(i: int, total: int = 3) -> dict[str, Any]:
    return note("notifications/progress", progressToken=1, progress=i, total=total)


def call(seq: int, ts: float) -> Interaction:
    message = {"jsonrpc": "2.0", "id": seq, "method": "tools/call", "params": {"name": "go"}}
    response = {"jsonrpc": "2.0", "id": seq, "result": {"content": []}}
    return Interaction(seq, "request", message, response, ts=ts, latency_ms=100.0)


def heard(seq: int, message: dict[str, Any], ts: float) -> Interaction:
    return Interaction(seq, "server-notification", message, ts=ts)


def row(seq: int, *paths: str) -> InteractionResult:
    findings = tuple(Finding(kind="value-change", path=p, message="", cls="breaking") for p in paths)
    return InteractionResult(seq=seq, line=0, method="tools/call", name="go", status="fail", findings=findings)


OPTIONS = CompareOptions()


def test_progress_is_rewritten_line_for_line_and_an_equal_line_keeps_its_object() -> None:
    lines = [call(0, 1.0), heard(1, progress(1), 1.01), heard(2, progress(2), 1.02), heard(3, progress(3), 1.03)]
    lines += [call(4, 2.0)]
    live = LiveHeard(progress={0: [progress(1, 2), progress(2, 2)]})
    done = update_heard(lines, [row(0, "$.notifications.progress")], live, dict, OPTIONS)
    out = done.interactions
    assert [i.seq for i in out] == [0, 1, 2, 4] and done.rows == {0} and done.kept == 0
    assert out[1].message["params"]["total"] == 2 and out[2].message["params"]["progress"] == 2
    # Dropped entirely: the lines leave, the request and the next one stay the same objects.
    gone = update_heard(lines, [row(0, "$.notifications.progress")], LiveHeard(progress={0: []}), dict, OPTIONS)
    assert gone.interactions == (lines[0], lines[4]) and gone.interactions[0] is lines[0]
    # One more: a new line after the last, in the request's window, with a seq past every one.
    more = LiveHeard(progress={0: [progress(1), progress(2), progress(3), progress(4, 4)]})
    added = update_heard(lines, [row(0, "$.notifications.progress")], more, dict, OPTIONS).interactions
    assert added[:4] == tuple(lines[:4]) and added[4].seq == 5 and added[4].ts == 1.0 and added[5] is lines[4]
    # No answer came (no window): nothing is written.
    unanswered = update_heard(lines, [row(0, "$.notifications.progress")], LiveHeard(), dict, OPTIONS)
    assert unanswered.interactions == tuple(lines) and unanswered.rows == set()


def test_log_messages_are_lined_up_and_a_masked_equal_one_keeps_its_bytes() -> None:
    stamped = log("info", "started at 2026-01-02T03:04:05Z")
    lines = [call(0, 1.0), heard(1, stamped, 1.01), heard(2, log("info", "placing order"), 1.02), call(3, 2.0)]
    lines += [call(5, 3.0)]
    live = LiveHeard(
        session=[log("info", "started at 2027-05-06T07:08:09Z"), log("warning", "REJECTED"), log("debug", "new")],
        during=[0, 0, 3],
    )
    done = update_heard(lines, [row(1, "$.notifications.message[1]")], live, dict, OPTIONS)
    out = done.interactions
    # The stamped line differs only by its time (masked): kept as it was. The changed one is
    # rewritten in its place; the new debug line is written after the request it came with.
    assert out[1] is lines[1]
    assert out[2].seq == 2 and out[2].message["params"] == {"level": "warning", "data": "REJECTED"}
    assert [i.seq for i in out] == [0, 1, 2, 3, 6, 5] and out[4].ts == 2.0, out
    assert out[4].message["params"]["data"] == "new" and done.rows == {1}
    # One no longer sent leaves.
    fewer = LiveHeard(session=[log("info", "started at 2027-05-06T07:08:09Z")], during=[0])
    assert update_heard(lines, [row(1, "$.notifications.message[1]")], fewer, dict, OPTIONS).interactions == (
        lines[0],
        lines[1],
        lines[3],
        lines[4],
    )


def test_a_log_message_whose_only_difference_is_noise_keeps_its_line_beside_a_real_change() -> None:
    """The confirmation pass (or ``calibrate``) explained message 0 (a job id each start mints);
    message 1 rose to ``warning``: only message 1's line is written."""
    lines = [call(0, 1.0), heard(1, log("info", "sync job j_5f7d"), 1.01), heard(2, log("info", "ok"), 1.02)]
    live = LiveHeard(session=[log("info", "sync job j_9e37"), log("warning", "ok")], during=[0, 0])
    noise = Finding(kind="value-change", path="$.notifications.message[0]", message="", cls="additive")
    result = replace(row(0, "$.notifications.message[1]"), noise=(noise,))
    out = update_heard(lines, [result], live, dict, OPTIONS).interactions
    assert out[1] is lines[1] and out[2].message["params"] == {"level": "warning", "data": "ok"}
    # Without the noise said, both differ and both are written.
    both = update_heard(lines, [row(0, "$.notifications.message[1]")], live, dict, OPTIONS).interactions
    assert both[1].message["params"]["data"] == "sync job j_9e37"


def test_a_change_notice_by_presence_and_what_is_left_out() -> None:
    changed = note("notifications/tools/list_changed")
    lines = [call(0, 1.0), heard(1, changed, 1.01), heard(2, log("info", "x"), 1.02), call(3, 2.0)]
    live = LiveHeard(session=[log("info", "x"), note("notifications/resources/list_changed")], during=[0, 3])
    paths = ("$.notifications[method=notifications/tools/list_changed]",)
    out = update_heard(lines, [row(1, *paths)], live, dict, OPTIONS).interactions
    methods = ["tools/call", "notifications/message", "tools/call", "notifications/resources/list_changed"]
    assert [i.method for i in out] == methods
    assert out[1] is lines[2]  # the log part had no finding: untouched
    # A method the recording over HTTP could not have heard is not written (it was not compared).
    partial = update_heard(lines, [row(1, *paths)], live, dict, OPTIONS, heard_all=False).interactions
    assert [i.method for i in partial] == ["tools/call", "notifications/message", "tools/call"]
    # An ignored method is never touched, whatever a finding says.
    ignoring = CompareOptions(ignore_notifications=("notifications/tools/list_changed",))
    assert update_heard(lines, [row(1, *paths)], LiveHeard(), dict, ignoring).interactions == tuple(lines)


def test_requests_to_the_client_keep_their_answers_and_a_new_one_is_kept_out() -> None:
    ask = {"jsonrpc": "2.0", "id": 0, "method": "roots/list", "params": {"why": "a"}}
    answer = {"jsonrpc": "2.0", "id": 0, "result": {"roots": []}}
    lines = [call(0, 1.0), Interaction(1, "server-request", ask, answer, ts=1.01), call(2, 2.0)]
    asked_again = {**ask, "id": 7, "params": {"why": "b"}}
    elicit = {"jsonrpc": "2.0", "id": 8, "method": "elicitation/create", "params": {}}
    live = LiveHeard(session=[asked_again, elicit], during=[0, 2])
    paths = ("$.server_requests[method=roots/list]", "$.server_requests[method=elicitation/create]")
    done = update_heard(lines, [row(1, *paths)], live, dict, OPTIONS)
    out = done.interactions
    assert len(out) == 3 and out[1].message == {**asked_again, "id": 0} and out[1].response == answer
    assert done.kept == 1  # what a client answers elicitation/create, a replay cannot know


def test_a_request_to_the_client_that_varied_by_noise_keeps_its_line_unless_one_asked_alike_changed() -> None:
    asked = "$.server_requests[method=elicitation/create]"

    def ask(id_: int, message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "method": "elicitation/create", "params": {"message": message}}

    answer = {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept"}}
    lines = [call(0, 1.0), Interaction(1, "server-request", ask(0, "Purge job j_5f7d?"), answer, ts=1.01)]
    lines += [Interaction(2, "server-request", ask(1, "Sure?"), answer, ts=1.02), call(3, 2.0)]
    live = LiveHeard(session=[ask(7, "Purge job j_9e37?"), ask(8, "Really sure?")], during=[0, 0])

    def finding(before: str, after: str) -> Finding:
        return Finding("value-change", "breaking", asked, "", before={"message": before}, after={"message": after})

    varied, changed = finding("Purge job j_5f7d?", "Purge job j_9e37?"), finding("Sure?", "Really sure?")
    out = update_heard(lines, [replace(row(0), findings=(changed,), noise=(varied,))], live, dict, OPTIONS).interactions
    assert out[1] is lines[1] and out[2].message["params"] == {"message": "Really sure?"}
    # The same params noise and a real change were found at: the real change is written.
    again = finding("Sure?", "Sure, j_9e37?")
    out = update_heard(lines, [replace(row(0), findings=(changed,), noise=(again,))], live, dict, OPTIONS).interactions
    assert out[2].message["params"] == {"message": "Really sure?"}


# -- real processes ------------------------------------------------------------------------------------


def _methods(lines: list[str]) -> list[str]:
    return [json.loads(line).get("message", {}).get("method", "") for line in lines[1:]]


def test_update_rewrites_dropped_progress_and_a_raised_log_level(shop_cassette: Path, tmp_path: Path) -> None:
    cassette = tmp_path / "shop.jsonl"
    cassette.write_bytes(shop_cassette.read_bytes())
    before = cassette.read_text("utf-8").splitlines()
    assert _methods(before).count("notifications/progress") == 3, before
    build = drifted("quiet,fraud")

    failed = replay(build, cassette, report=tmp_path / "failed.json")
    assert failed.code == 1, failed.describe()
    assert {f["rule"] for f in failed.findings()} == {"progress-dropped", "log-level-raised"}, failed.describe()
    assert "--update" in failed.stdout, failed.describe()  # the accept command is named

    updated = replay(build, cassette, "--update", report=tmp_path / "update.json")
    assert updated.code == 0, updated.describe()
    assert f"updated {cassette}: 2 interactions" in updated.stdout, updated.describe()
    after = cassette.read_text("utf-8").splitlines()

    passed = replay(build, cassette, report=tmp_path / "passed.json")
    assert passed.code == 0 and passed.findings() == [], passed.describe()

    # The progress lines left, the log line was rewritten in place, every other line (the
    # place_order call and its unchanged answer included) kept its bytes; the header gained updated_at.
    assert json.loads(after[0])["meta"].pop("updated_at").endswith("Z")
    assert _methods(after) == [m for m in _methods(before) if m != "notifications/progress"]
    [old_log] = [line for line in before if "notifications/message" in line]
    [new_log] = [line for line in after if "notifications/message" in line]
    assert json.loads(new_log)["message"]["params"]["level"] == "warning"
    assert json.loads(new_log)["seq"] == json.loads(old_log)["seq"]
    kept = [line for line in before[1:] if "notifications/progress" not in line and line != old_log]
    assert kept == [line for line in after[1:] if line != new_log]


def test_update_writes_a_new_log_line_and_an_unchanged_build_leaves_the_file_alone(
    shop_cassette: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / "shop.jsonl"
    cassette.write_bytes(shop_cassette.read_bytes())
    before = cassette.read_bytes()
    same = replay(python_server(SHOP), cassette, "--update", report=tmp_path / "same.json")
    assert same.code == 0 and cassette.read_bytes() == before, same.describe()

    chatty = drifted("chatty")
    updated = replay(chatty, cassette, "--update", "--fail-on", "any", report=tmp_path / "chatty.json")
    assert updated.code == 0, updated.describe()
    old, new = before.decode().splitlines(), cassette.read_text("utf-8").splitlines()
    added = [line for line in new[1:] if line not in old]
    assert [json.loads(line)["message"]["params"]["level"] for line in added] == ["debug"], added
    assert [line for line in new[1:] if line not in added] == old[1:]
    passed = replay(chatty, cassette, "--fail-on", "any", report=tmp_path / "passed.json", gate=False)
    assert passed.code == 0 and passed.findings() == [], passed.describe()


def test_update_rewrites_the_notifications_of_an_mcp_recorder_json_cassette(
    shop_cassette: Path, tmp_path: Path
) -> None:
    """The same rewrite in mcp-recorder's JSON format, where what the server sent besides its
    answers lives under our ``x_mcp_replay`` key (``recorder_json.py``): ``--update`` rewrites it
    there, the file stays mcp-recorder's format (its own loader still reads it), and the next
    replay passes."""
    from mcp_recorder._types import Cassette as RecorderCassette

    from mcp_replay_action.cassette.convert import convert_file

    cassette = tmp_path / "shop.json"
    convert_file(shop_cassette, cassette, to="recorder-json")
    before = json.loads(cassette.read_text("utf-8"))
    methods = [m["message"].get("method") for m in before["x_mcp_replay"]["server_messages"]]
    assert methods.count("notifications/progress") == 3, methods
    build = drifted("quiet,fraud")
    updated = replay(build, cassette, "--update", report=tmp_path / "update.json")
    assert updated.code == 0 and f"updated {cassette}: 2 interactions" in updated.stdout, updated.describe()
    after = json.loads(cassette.read_text("utf-8"))
    told = after["x_mcp_replay"]["server_messages"]
    assert [m["message"].get("method") for m in told] == [m for m in methods if m != "notifications/progress"]
    [logged] = [m["message"] for m in told if m["message"].get("method") == "notifications/message"]
    assert logged["params"]["level"] == "warning", logged
    assert after["interactions"] == before["interactions"]  # the client's side and answers: unchanged
    RecorderCassette.model_validate(after)  # still a cassette mcp-recorder loads
    passed = replay(build, cassette, report=tmp_path / "passed.json")
    assert passed.code == 0 and passed.findings() == [], passed.describe()
