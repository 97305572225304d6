"""Tasks on replay (``tasks.py``): a task polled N times in the recording and M times live is
compared by the state it reaches and its result, not poll by poll.

The server is ``tests/servers/tasks_server.py`` on the official ``mcp`` SDK 1.x (the 2025-11-25
revision's experimental Tasks: the SDK answers ``tasks/get`` and ``tasks/result`` itself); the
recording client is the same SDK's (``tests/servers/tasks_client.py``), driving the real recording
proxy, polling every 10 ms while the task works 5 x 60 ms.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from e2e_helpers import (
    MCP_REPLAY,
    PYTHON,
    REPO,
    SERVERS,
    TAG_VAR,
    CliRun,
    cassette_lines,
    command,
    reap_strays,
    replay,
    run_tagged,
)
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.replay.tasks import Polls, milestone, status_of
from mcp_replay_action.transport.session import ClientSession
from mcp_replay_action.transport.stdio import StdioTransport

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
SERVER = SERVERS / "tasks_server.py"
CLIENT = SERVERS / "tasks_client.py"


def server(*args: str) -> str:
    return command(SDK1_PYTHON, SERVER, "--steps", "5", *args)


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SDK1_PYTHON.exists():
        pytest.skip("tests/run.sh builds tests/servers/.venv-sdk1 (the 1.x SDK)")
    path = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    record = [str(MCP_REPLAY), "record", "--server", server("--step-ms", "60"), "--cassette", str(path)]
    seen, strays = run_tagged([str(SDK1_PYTHON), str(CLIENT), "--poll-ms", "10", "--", *record], 90)
    assert seen.returncode == 0 and not strays, seen.stderr[-3000:]
    assert seen.stdout.splitlines()[-2:] == ["completed", "report on tides: 3 sources, all agree"], seen.stdout
    return path


def recorded_polls(path: Path) -> list[dict[str, Any]]:
    return [line for line in cassette_lines(path)[1:] if line["message"].get("method") == "tasks/get"]


def test_the_recording_polled_the_task_many_times(cassette: Path) -> None:
    polls = recorded_polls(cassette)
    statuses = [p["response"]["result"]["status"] for p in polls]
    assert statuses[-1] == "completed" and set(statuses[:-1]) == {"working"}, statuses
    assert len(polls) >= 8, statuses  # 300 ms of work polled every 10 ms
    # The task id the server minted is what every poll quotes.
    (call,) = [line for line in cassette_lines(cassette)[1:] if line["message"].get("method") == "tools/call"][:1]
    minted = call["response"]["result"]["task"]["taskId"]
    assert {p["message"]["params"]["taskId"] for p in polls} == {minted}


def clean_replay(cassette: Path, tmp_path: Path, step_ms: int) -> tuple[CliRun, int, int]:
    """A replay against a build whose steps take ``step_ms``: clean, with the recorded and the live
    number of polls."""
    log = tmp_path / "polls"
    run = replay(server("--step-ms", str(step_ms), "--poll-log", str(log)), cassette, report=tmp_path / "r.json")
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()
    return run, len(recorded_polls(cassette)), len(log.read_text("utf-8").splitlines())


def test_a_slower_task_polled_more_often_live_is_clean(cassette: Path, tmp_path: Path) -> None:
    run, n, m = clean_replay(cassette, tmp_path, 250)
    assert m > n, (m, n)  # every recorded poll was sent, and the live task still needed more
    statuses = {i["seq"]: i["status"] for i in run.interactions()}
    assert set(statuses.values()) == {"pass"}, statuses
    # Every poll was sent with the live task id, interim ones too, and says so.
    polls = [i for i in run.interactions() if i["method"] == "tasks/get"]
    assert polls and all(len(p["substitutions"]) == 1 for p in polls), polls


def test_a_quicker_task_stops_the_polling_early_and_is_clean(cassette: Path, tmp_path: Path) -> None:
    run, n, m = clean_replay(cassette, tmp_path, 0)
    assert m < n, (m, n)
    polls = [i for i in run.interactions() if i["method"] == "tasks/get"]
    # The recorded terminal poll was sent and compared; interim polls after the live task ended
    # were not sent (skipped), and none is a finding or a failure.
    assert polls[-1]["status"] == "pass"
    assert {p["status"] for p in polls} <= {"pass", "skipped"}
    assert sum(p["status"] == "skipped" for p in polls) == n - m


def test_a_task_whose_result_changed_is_caught(cassette: Path, tmp_path: Path) -> None:
    run = replay(server("--step-ms", "60", "--changed"), cassette, report=tmp_path / "r.json", gate=False)
    found = [(f["method"], f["kind"], f["path"], f["class"]) for f in run.findings()]
    assert found == [("tasks/result", "value-change", "$.result.content[0].text", "breaking")], run.describe()
    (finding,) = run.findings()
    assert finding["before"] == "report on tides: 3 sources, all agree"
    assert finding["after"] == "report on tides: 2 sources, no conclusion"
    assert run.code == 1


def test_a_task_that_never_ends_within_the_timeout_is_compared_as_it_stands(cassette: Path, tmp_path: Path) -> None:
    # 5 x 3 s of work, 2 s per request: the terminal poll gives up polling and its last live
    # answer, still working, is what differs from the recorded completed task.
    run = replay(server("--step-ms", "3000"), cassette, "--timeout", "2", report=tmp_path / "r.json", gate=False)
    changed = [
        (f["method"], f["path"], f["before"], f["after"]) for f in run.findings() if f["path"] == "$.result.status"
    ]
    assert changed == [("tasks/get", "$.result.status", "completed", "working")], run.describe()


def poll(seq: int, status: str, task: str = "t1") -> Interaction:
    return Interaction(
        seq=seq,
        kind="request",
        message={"jsonrpc": "2.0", "id": seq, "method": "tasks/get", "params": {"taskId": task}},
        response={"jsonrpc": "2.0", "id": seq, "result": {"taskId": task, "status": status}},
    )


def test_which_polls_are_milestones() -> None:
    assert status_of({"result": {"status": "working"}}) == "working"
    assert status_of({"error": {"code": -32602, "message": "no task"}}) is None
    assert not milestone(poll(1, "working"))
    for status in ("completed", "failed", "cancelled", "input_required"):
        assert milestone(poll(1, status))
    call = Interaction(seq=0, kind="request", message={"method": "tools/call"}, response={"result": {"status": "x"}})
    assert not milestone(call)


def test_only_an_ended_task_stops_its_interim_polls() -> None:
    polls = Polls()
    never_asked = {"jsonrpc": "2.0", "id": 2}

    def ask(message: dict[str, Any], left: float) -> dict[str, Any]:
        raise AssertionError(f"polled again: {json.dumps(message)}")

    # input_required is a milestone but not an end: the task works again after tasks/update.
    live = {"jsonrpc": "2.0", "id": 2, "result": {"taskId": "L", "status": "input_required"}}
    assert polls.follow(poll(2, "input_required"), never_asked, live, ask, 0.0) is live
    assert not polls.needless(poll(3, "working"))
    done = {"jsonrpc": "2.0", "id": 4, "result": {"taskId": "L", "status": "completed"}}
    polls.follow(poll(4, "working"), never_asked, done, ask, 0.0)
    assert polls.needless(poll(5, "working"))
    assert not polls.needless(poll(6, "completed"))  # the recorded end is always sent
    assert not polls.needless(poll(7, "working", task="t2"))  # another task


# -- 2026-07-28: the io.modelcontextprotocol/tasks extension ---------------------------------------
# ``tests/servers/tasks_ext_server.py`` serves it on the SDK 2.x extension API (the SDK has no
# tasks runtime yet, and its client none either): the client here is the project's own
# ``ClientSession`` speaking the extension's wire shapes to the real recording proxy.

EXT_SERVER = SERVERS / "tasks_ext_server.py"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "test_tasks", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


def ext_server(*args: str) -> str:
    return command(PYTHON, EXT_SERVER, *args)


def drive_ext(client: ClientSession) -> None:
    """A report task polled until it ends; an approve task polled to its input request, answered
    with ``tasks/update``, and polled until it ends."""

    def call(method: str, **params: Any) -> dict[str, Any]:
        answer = client.call(method, {**params, "_meta": META})
        assert "result" in answer, answer
        return answer["result"]

    def poll(task_id: str) -> str:
        while (status := call("tasks/get", taskId=task_id)["status"]) == "working":
            time.sleep(0.01)
        return status

    call("server/discover")
    report = call("tools/call", name="report", arguments={"topic": "tides"})  # no ``task`` asked
    assert report["resultType"] == "task", report
    assert poll(report["taskId"]) == "completed"
    approve = call("tools/call", name="approve", arguments={"item": "budget"})
    assert poll(approve["taskId"]) == "input_required"
    answer = {"action": "accept", "content": {"ok": True}}
    call("tasks/update", taskId=approve["taskId"], inputResponses={"confirm": answer})
    assert poll(approve["taskId"]) == "completed"


@pytest.fixture(scope="module")
def ext_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tasks-ext") / "tasks-ext.jsonl"
    tag = uuid.uuid4().hex
    record = [str(MCP_REPLAY), "record", "--server", ext_server("--step-ms", "60"), "--cassette", str(path)]
    transport = StdioTransport(record, cwd=REPO, env={TAG_VAR: tag})
    try:
        transport.start()
        drive_ext(ClientSession(transport, timeout=30))
    finally:
        transport.close()
        strays = reap_strays(tag)
    assert not strays and path.exists(), strays
    return path


def test_the_extension_recording_holds_unasked_handles_and_an_update(ext_cassette: Path) -> None:
    lines = cassette_lines(ext_cassette)[1:]
    calls = [line for line in lines if line["message"].get("method") == "tools/call"]
    assert [c["response"]["result"]["resultType"] for c in calls] == ["task", "task"]
    assert not any("task" in c["message"]["params"] for c in calls)  # the handles came unasked
    statuses = [line["response"]["result"]["status"] for line in lines if line["message"].get("method") == "tasks/get"]
    assert statuses.count("working") >= 5 and statuses.count("input_required") == 1, statuses
    (update,) = [line for line in lines if line["message"].get("method") == "tasks/update"]
    assert update["message"]["params"]["taskId"] == calls[1]["response"]["result"]["taskId"]


@pytest.mark.parametrize("step_ms", ["250", "0"])
def test_an_extension_task_ending_later_or_sooner_is_clean(ext_cassette: Path, tmp_path: Path, step_ms: str) -> None:
    run = replay(ext_server("--step-ms", step_ms), ext_cassette, report=tmp_path / "r.json")
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()
    # tasks/update was sent with the live task id (threaded) and acknowledged as recorded.
    (update,) = [i for i in run.interactions() if i["method"] == "tasks/update"]
    assert update["status"] == "pass"


def test_an_extension_task_whose_result_changed_is_caught(ext_cassette: Path, tmp_path: Path) -> None:
    run = replay(ext_server("--step-ms", "60", "--changed"), ext_cassette, report=tmp_path / "r.json", gate=False)
    found = [(f["method"], f["kind"], f["path"]) for f in run.findings()]
    # 2026-07-28 has no tasks/result: the result is inline in the terminal tasks/get.
    assert found == [("tasks/get", "value-change", "$.result.result.content[0].text")], run.describe()
    assert run.code == 1
