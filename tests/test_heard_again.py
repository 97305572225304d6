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
