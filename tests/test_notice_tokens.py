"""Noise at the token in what the server sends besides its answers (issue 27: "the rule applies to
every message a session holds"): a log message's data and a progress message that quote an id
minted afresh by every start are learned as noise only in the tokens that varied between the two
live starts, so a clause dropped beside the id still fails; an id an answer minted and a later
request quoted is threaded into the log messages that carry it, and needs no second start.

End to end: ``tests/servers/logged_notes_server.py`` (official SDK), recorded with the SDK client
through ``mcp-replay record``, opted in to logs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import (
    SERVERS,
    accept_elicitation,
    ignore_progress,
    python_server,
    record_through_proxy,
    replay,
    run_cli,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

NOTES = SERVERS / "logged_notes_server.py"


async def threaded_session(client: Client) -> dict[str, Any]:
    """A note created, then read by the id its answer gave."""
    made = await client.call_tool("create_note", {"title": "groceries"}, progress_callback=ignore_progress)
    note_id = made.content[0].text  # type: ignore[union-attr]
    assert (await client.call_tool("get_note", {"id": note_id})).content[0].text == "groceries"  # type: ignore[union-attr]
    return {}


async def synced_session(client: Client) -> dict[str, Any]:
    """The same, then a sync whose job id no answer gives."""
    await threaded_session(client)
    synced = await client.call_tool("sync", {}, progress_callback=ignore_progress)
    assert not synced.is_error, synced
    return {}


def server(starts: Path, variant: str = "") -> str:
    return f"env STARTS_FILE={starts} LOGGED_NOTES_VARIANT={variant} {python_server(NOTES)}"


@pytest.fixture(scope="module")
def synced_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("logged") / "synced.jsonl"
    record_through_proxy(python_server(NOTES), cassette, synced_session, log_level="debug")
    text = cassette.read_text("utf-8")
    assert "sync job j_" in text and "created note n_" in text and '"notifications/progress"' in text
    return cassette


def starts_of(path: Path) -> int:
    return len(path.read_text().splitlines())


def noise_of(run: Any) -> list[dict[str, Any]]:
    return [n for i in run.interactions() for n in i["noise"]]


def test_an_id_threaded_into_a_log_message_needs_no_second_start(tmp_path: Path) -> None:
    cassette = tmp_path / "threaded.jsonl"
    record_through_proxy(python_server(NOTES), cassette, threaded_session, log_level="debug")
    assert "created note n_" in cassette.read_text("utf-8")
    starts = tmp_path / "starts"
    run = replay(server(starts), cassette, "--fail-on", "any", report=tmp_path / "r.json", gate=False)
    assert run.code == 0 and run.findings() == [] and noise_of(run) == [], run.describe()
    assert starts_of(starts) == 1, run.describe()  # threaded, not noise: no confirmation pass
    # Latency judged: each answer is compared before the next request is sent, and the progress
    # of create_note is compared with the id its own answer minted already learned.
    timed = replay(server(starts), cassette, "--max-slowdown", "1000", report=tmp_path / "t.json", gate=False)
    assert timed.code == 0 and timed.findings() == [] and noise_of(timed) == [], timed.describe()
    assert starts_of(starts) == 2, timed.describe()
    # A clause dropped beside the threaded id fails, told with the live id in place.
    dropped = replay(server(starts, "clause"), cassette, "--fail-on", "any", report=tmp_path / "c.json", gate=False)
    assert dropped.code == 1, dropped.describe()
    found = sorted(f["path"] for f in dropped.findings())
    assert found == ["$.notifications.message[0]", "$.notifications.progress.message"], dropped.describe()
    assert noise_of(dropped) == [], dropped.describe()


def test_an_id_each_start_mints_is_noise_at_the_token(synced_cassette: Path, tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    run = replay(server(starts), synced_cassette, "--fail-on", "any", report=tmp_path / "r.json", gate=False)
    assert run.code == 0 and run.findings() == [], run.describe()
    assert starts_of(starts) == 2, run.describe()  # the job id: only a second start tells it varies
    learned = sorted(n["path"] for n in noise_of(run))
    assert learned == [
        "$.notifications.message[2]",
        "$.notifications.message[3]",
        "$.notifications.progress.message",
    ], run.describe()


def test_a_clause_dropped_beside_an_id_each_start_mints_still_fails(synced_cassette: Path, tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    run = replay(server(starts, "clause"), synced_cassette, "--fail-on", "any", report=tmp_path / "c.json", gate=False)
    assert run.code == 1, run.describe()
    assert starts_of(starts) == 2, run.describe()
    found = sorted(f["path"] for f in run.findings())
    assert found == [
        "$.notifications.message[0]",  # created note <threaded id> (groceries)
        "$.notifications.message[2]",  # sync job <job id> started (1 notes)
        "$.notifications.message[3]",  # {"event": "job <job id>", "summary": "1 notes synced"}
        "$.notifications.progress.message",  # create_note's: note <threaded id> stored (groceries)
        "$.notifications.progress.message",  # sync's: job <job id> done (1 notes)
    ], run.describe()
    assert noise_of(run) == [], run.describe()


async def purged_session(client: Client) -> dict[str, Any]:
    assert (await client.call_tool("purge", {})).content[0].text == "purged"  # type: ignore[union-attr]
    return {}


def test_a_request_to_the_client_learns_its_job_id_at_the_token(tmp_path: Path) -> None:
    """The handshake era, where the server asks ``elicitation/create`` in the middle of a call."""
    cassette = tmp_path / "purged.jsonl"
    record_through_proxy(python_server(NOTES), cassette, purged_session, mode="legacy", elicitation=accept_elicitation)
    assert "Purge job j_" in cassette.read_text("utf-8")
    starts = tmp_path / "starts"
    run = replay(server(starts), cassette, "--fail-on", "any", report=tmp_path / "r.json", gate=False)
    assert run.code == 0 and run.findings() == [], run.describe()
    assert [n["path"] for n in noise_of(run)] == ["$.server_requests[method=elicitation/create]"], run.describe()
    dropped = replay(server(starts, "clause"), cassette, "--fail-on", "any", report=tmp_path / "c.json", gate=False)
    assert dropped.code == 1 and noise_of(dropped) == [], dropped.describe()
    assert [f["path"] for f in dropped.findings()] == ["$.server_requests[method=elicitation/create]"], (
        dropped.describe()
    )


def test_calibrate_learns_the_ids_in_notifications_at_the_token(synced_cassette: Path, tmp_path: Path) -> None:
    """``calibrate`` learns what varies in the log messages and progress as it learns an answer's
    noise: the job id, at the token. A replay then needs no second start to pass, and a clause
    dropped beside the id still fails on the stored rules alone."""
    cassette = tmp_path / "calibrated.jsonl"
    cassette.write_bytes(synced_cassette.read_bytes())
    starts = tmp_path / "starts"
    done = run_cli("calibrate", "--server", server(starts), "--cassette", cassette, "--runs", "3")
    assert done.code == 0 and starts_of(starts) == 3, done.describe()
    rules = json.loads(cassette.read_text("utf-8").splitlines()[0])["meta"]["noise"]
    heard = sorted((r["path"], "pattern" in r) for r in rules if r["path"].startswith("$.notifications"))
    assert heard == [
        ("$.notifications.message[2].data", True),  # sync job <j_...> started (1 notes)
        ("$.notifications.message[3].data.event", True),  # job <j_...>
        ("$.notifications.progress.message", True),  # job <j_...> done (1 notes)
    ], rules
    run = replay(server(starts), cassette, "--fail-on", "any", report=tmp_path / "r.json", gate=False)
    assert run.code == 0 and run.findings() == [], run.describe()
    assert starts_of(starts) == 4, run.describe()  # the stored rules explain it: no confirmation pass
    assert sorted(n["path"] for n in noise_of(run)) == [
        "$.notifications.message[2]",
        "$.notifications.message[3]",
        "$.notifications.progress.message",
    ], run.describe()
    dropped = replay(
        server(starts, "clause"), cassette, "--no-confirm", "--fail-on", "any", report=tmp_path / "c.json", gate=False
    )
    assert dropped.code == 1 and noise_of(dropped) == [], dropped.describe()
    assert "$.notifications.message[2]" in [f["path"] for f in dropped.findings()], dropped.describe()


def test_update_says_a_new_request_to_the_client_is_not_written(tmp_path: Path) -> None:
    """A build that asks the client once more: ``--update`` writes no answer it cannot know, and
    says so in those words, not as an interaction "without a live response"."""
    cassette = tmp_path / "purged.jsonl"
    record_through_proxy(python_server(NOTES), cassette, purged_session, mode="legacy", elicitation=accept_elicitation)
    before = cassette.read_bytes()
    starts = tmp_path / "starts"
    done = replay(server(starts, "twice"), cassette, "--update", report=tmp_path / "u.json", gate=False)
    said = done.stdout + done.stderr
    assert f"not written to {cassette}: 1 new request to the client" in said, done.describe()
    assert "without a live response" not in said and done.code == 1, done.describe()  # a change is left
    assert cassette.read_bytes() == before, done.describe()
