"""The confirmation pass's rule for notifications (replay/heard_again.py): a difference in what the
server sent is noise when the second fresh start, judged against the same recording, does not
repeat it. End to end with real processes: tests/test_notice_noise.py."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_replay_action.compare.notifications import compare_heard
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model.results import Finding
from mcp_replay_action.replay.heard_again import unrepeated

pytestmark = pytest.mark.unit

OPTIONS = CompareOptions()
TOOLS = "notifications/tools/list_changed"
RESOURCES = "notifications/resources/list_changed"


def note(method: str, **params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def log(data: str, level: str = "info") -> dict[str, Any]:
    return note("notifications/message", level=level, data=data)


def parted(recorded: list[Any], first: list[Any], again: list[Any]) -> tuple[list[str], list[str]]:
    """(kept, noise) paths of the findings ``recorded`` against ``first`` gives."""
    kept, noise = unrepeated(compare_heard(recorded, first, OPTIONS), recorded, first, again, OPTIONS)
    return [f.path for f in kept], [f.path for f in noise]


def test_a_notice_the_second_start_sent_is_noise_and_one_both_dropped_stays() -> None:
    recorded = [note(TOOLS), note(RESOURCES)]
    kept, noise = parted(recorded, [], [note(TOOLS)])
    assert kept == [f"$.notifications[method={RESOURCES}]"]
    assert noise == [f"$.notifications[method={TOOLS}]"]


def test_the_same_live_messages_on_both_starts_are_never_noise() -> None:
    recorded = [note(TOOLS), log("ready")]
    kept, noise = parted(recorded, [log("ready", level="error")], [log("ready", level="error")])
    assert len(kept) == 2 and noise == []


def test_a_log_message_is_placed_by_the_recording_on_both_starts() -> None:
    # One message more in the middle: at index 1 of the recording, whichever start sent it.
    recorded, one_more = [log("a"), log("b")], [log("a"), log("x"), log("b")]
    assert parted(recorded, one_more, [log("a"), log("b")]) == ([], ["$.notifications.message[1]"])
    # Sent on both starts, it is repeated: a finding, though the starts differ elsewhere.
    assert parted(recorded, one_more, [*one_more, note(TOOLS)]) == (["$.notifications.message[1]"], [])
    # The same place with another text on each start: it varied.
    assert parted(recorded, one_more, [log("a"), log("y"), log("b")]) == ([], ["$.notifications.message[1]"])


def test_an_answers_own_findings_are_never_moved_and_an_unknown_start_moves_nothing() -> None:
    answer = Finding("value-change", "breaking", "$.result.content[0].text", "changed", rule="value-changed")
    recorded = [note(TOOLS)]
    heard = compare_heard(recorded, [], OPTIONS)
    kept, noise = unrepeated((answer, *heard), recorded, [], [note(TOOLS)], OPTIONS)
    assert kept == (answer,) and noise == heard
    assert unrepeated((answer, *heard), recorded, [], None, OPTIONS) == ((answer, *heard), ())


# -- noise at the token: a changed text learned as the answers' noise rules learn it ---------------


def progress(message: str) -> dict[str, Any]:
    return note("notifications/progress", progressToken=1, progress=1, total=1, message=message)


@pytest.mark.parametrize(
    ("recorded", "live", "noise"),
    [
        ("sync job j_1b2c3d4e started (3 notes)", "sync job j_9e37c05a started (3 notes)", True),
        ("sync job j_1b2c3d4e started (3 notes)", "sync job j_9e37c05a started", False),  # a clause dropped
        ("sync job j_1b2c3d4e started (3 notes)", "sync job j_9e37c05a stopped (3 notes)", False),  # a word
        ("sync job j_1b2c3d4e started (3 notes)", "sync job j_9e37c05a started (3 notes, 1 failed)", False),
    ],
)
def test_a_log_message_varies_only_in_the_tokens_that_varied_between_the_starts(
    recorded: str, live: str, noise: bool
) -> None:
    """The second start's job id is its own (``j_5f7d6ccd``): what varied between the two starts is
    that one word, and only a difference from the recording in it is noise."""
    again = live.replace("j_9e37c05a", "j_5f7d6ccd")
    path = ["$.notifications.message[1]"]
    rec, first, second = ([log("ready"), log(text)] for text in (recorded, live, again))
    assert parted(rec, first, second) == (([], path) if noise else (path, []))
    # The same in the last progress message.
    path = ["$.notifications.progress.message"]
    assert parted([progress(recorded)], [progress(live)], [progress(again)]) == (([], path) if noise else (path, []))


def test_nested_data_varies_at_its_leaves_and_a_level_raised_beside_an_id_stays() -> None:
    def structured(job: str, summary: str = "3 notes synced") -> dict[str, Any]:
        return note("notifications/message", level="info", data={"job": job, "summary": summary})

    # j_5bc04ace looks minted to the mask (<opaque>); the live ids, with two digits each, do not.
    recorded = [structured("j_5bc04ace")]
    assert parted(recorded, [structured("j_2ffdfad2")], [structured("j_99fdfad2")]) == (
        [],
        ["$.notifications.message[0]"],
    )
    dropped = [structured("j_2ffdfad2", "synced")], [structured("j_99fdfad2", "synced")]
    assert parted(recorded, *dropped) == (["$.notifications.message[0]"], [])
    raised = [log("job j_2ffdfad2 failed", "warning")], [log("job j_99fdfad2 failed", "warning")]
    assert parted([log("job j_1b2c3d4e failed")], *raised) == (["$.notifications.message[0]"], [])


def test_a_changed_text_the_second_start_did_not_send_stays_a_finding() -> None:
    # Nothing was seen to vary at the token: no second text to learn it from.
    recorded, first = [log("a"), log("job j_1b2c3d4e done")], [log("a"), log("job j_9e37c05a done")]
    assert parted(recorded, first, [log("a")]) == (["$.notifications.message[1]"], [])


def test_a_request_to_the_client_varies_at_the_token_too() -> None:
    def elicit(message: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {"message": message}}

    recorded = [elicit("Delete job j_1b2c3d4e (3 notes)?")]
    path = ["$.server_requests[method=elicitation/create]"]
    same = [elicit("Delete job j_9e37c05a (3 notes)?")], [elicit("Delete job j_5f7d6ccd (3 notes)?")]
    assert parted(recorded, *same) == ([], path)
    dropped = [elicit("Delete job j_9e37c05a?")], [elicit("Delete job j_5f7d6ccd?")]
    assert parted(recorded, *dropped) == (path, [])


# -- the same rule ahead of time: ``calibrate``'s rules for notifications (noise.learn_heard) ------


def calibrated(recorded: list[Any], starts: list[list[Any]]) -> list[Any]:
    """The rules ``calibrate`` stores from these starts' messages, each judged against ``recorded``."""
    from mcp_replay_action.compare.noise import learn_heard

    found = [compare_heard(recorded, live, OPTIONS) for live in starts]
    paths = dict.fromkeys(f.path for run in found for f in run)
    return [r for p in paths for r in learn_heard([next((f for f in run if f.path == p), None) for run in found])]


def split_paths(recorded: list[Any], live: list[Any], rules: list[Any]) -> tuple[list[str], list[str]]:
    from mcp_replay_action.compare.noise import split_heard

    kept, noise = split_heard(compare_heard(recorded, live, OPTIONS), rules, OPTIONS)
    return [f.path for f in kept], [f.path for f in noise]


def test_calibrated_rules_learn_an_id_at_the_token_and_a_notice_as_one() -> None:
    recorded = [log("sync job j_5f7d started (3 notes)"), note(TOOLS)]
    ids = ("9e37", "04c1", "b2a8")
    starts = [[log(f"sync job j_{j} started (3 notes)")] + ([note(TOOLS)] if i % 2 else []) for i, j in enumerate(ids)]
    rules = calibrated(recorded, starts)
    assert sorted((r.path, r.pattern is None) for r in rules) == [
        ("$.notifications.message[0].data", False),
        (f"$.notifications[method={TOOLS}]", True),
    ]
    kept, noise = split_paths(recorded, [log("sync job j_d5e6 started (3 notes)")], rules)
    assert kept == [] and sorted(noise) == ["$.notifications.message[0]", f"$.notifications[method={TOOLS}]"]
    # A clause dropped beside the id, or the level raised, is not what varied.
    assert split_paths(recorded, [log("sync job j_d5e6 started"), note(TOOLS)], rules)[0] == [
        "$.notifications.message[0]"
    ]
    raised = [log("sync job j_d5e6 started (3 notes)", level="error"), note(TOOLS)]
    assert split_paths(recorded, raised, rules)[0] == ["$.notifications.message[0]"]


def test_a_difference_every_calibrating_start_gives_alike_is_no_rule() -> None:
    recorded = [note(TOOLS), log("ready")]
    starts = [[log("ready", level="warning")]] * 3
    assert calibrated(recorded, starts) == []
