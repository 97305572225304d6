"""What the recording proves was threaded (``correlate.py``), and the traps it must not fall into:
short or common values, values the client held first, values every answer repeats, declarations,
and declared rules (``--thread`` / ``--no-thread``)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_replay_action.compare.carry import Carry
from mcp_replay_action.compare.correlate import MANY, ThreadRules, correlate, locate
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model.cassette import Interaction

pytestmark = pytest.mark.unit


def call(seq: int, arguments: dict[str, Any], result: Any = None, method: str = "tools/call") -> Interaction:
    params = {"name": "t", "arguments": arguments} if method == "tools/call" else arguments
    message = {"jsonrpc": "2.0", "id": seq, "method": method, "params": params}
    return Interaction(seq, "request", message, {"jsonrpc": "2.0", "id": seq, "result": result or {}})


def test_a_value_an_answer_gave_and_a_later_request_quoted_is_one_whatever_its_key_or_shape() -> None:
    found = correlate(
        [
            call(
                1,
                {"title": "plan"},
                {
                    "structuredContent": {"id": "n0te-x"},
                    "content": [{"type": "text", "text": "Created ticket 4821937."}],
                },
            ),
            call(2, {"id": "n0te-x", "ticket": 4821937}),
        ]
    )
    assert found.values == {"n0te-x", "4821937"} and set(found.holders) == {1}


@pytest.mark.parametrize("value", [True, "ok", "yes", "abc12", "true", "success", "string", 1.5])
def test_short_and_common_values_are_never_correlations(value: Any) -> None:
    found = correlate([call(1, {}, {"structuredContent": {"id": value, "flag": value}}), call(2, {"id": value})])
    assert found.values == set()


@pytest.mark.parametrize("value", [7, 42, 23014, "23014", 4821937])
def test_an_integer_both_places_call_an_identifier_is_threaded_whatever_its_size(value: Any) -> None:
    for held, quoted in (("id", "id"), ("ticket_id", "ticketId"), ("ref", "orderRef")):
        found = correlate([call(1, {}, {"structuredContent": {held: value}}), call(2, {quoted: value})])
        assert found.values == {str(value)} and not found.declared, (held, quoted)


@pytest.mark.parametrize("count", [5, 23014])
def test_a_count_a_page_or_a_limit_is_never_threaded(count: int) -> None:
    for held, quoted in (("count", "limit"), ("result", "limit"), ("total", "id"), ("id", "page"), ("n", "pageSize")):
        found = correlate([call(1, {}, {"structuredContent": {held: count}}), call(2, {quoted: count})])
        assert found.values == set(), (held, quoted)


def test_an_integer_that_occurs_nowhere_else_is_threaded_from_three_digits() -> None:
    # The official Python SDK's answer to a tool that returns an int: {"result": N} and the text "N".
    def minted(n: int) -> Interaction:
        return call(1, {}, {"structuredContent": {"result": n}, "content": [{"type": "text", "text": str(n)}]})

    assert correlate([minted(23014), call(2, {"ticket": 23014})]).values == {"23014"}
    assert correlate([minted(512), call(2, {"ticket": 512})]).values == {"512"}
    # Two digits prove nothing by being unique; an identifier on both sides would.
    assert correlate([minted(42), call(2, {"ticket": 42})]).values == set()
    # Printed in prose and quoted in a URI.
    prose = call(1, {}, {"content": [{"type": "text", "text": "Ticket 23014 opened."}]})
    assert correlate([prose, call(2, {"uri": "tickets://23014/log"})]).values == {"23014"}
    # Held by two answers before it is quoted, or by a declaration: not unique.
    assert correlate([minted(23014), call(2, {}, {"other": 23014}), call(3, {"ticket": 23014})]).values == set()
    tools = call(1, {}, {"tools": [{"name": "t", "inputSchema": {"maximum": 23014}}]}, method="tools/list")
    later = call(2, {}, {"structuredContent": {"result": 23014}})
    assert correlate([tools, later, call(3, {"ticket": 23014})]).values == set()


def test_a_value_the_client_held_before_the_answer_is_its_own_not_minted() -> None:
    found = correlate(
        [
            call(1, {"title": "groceries-2026"}, {"structuredContent": {"title": "groceries-2026"}}),
            call(2, {"find": "groceries-2026"}),
        ]
    )
    assert found.values == set()
    # Its own request holding it counts too: the answer echoes what it was asked.
    found = correlate([call(1, {"q": "alpha-beta"}, {"echo": "alpha-beta"}), call(2, {"q": "alpha-beta"})])
    assert found.values == set()


def test_a_value_many_answers_repeat_before_it_is_quoted_is_vocabulary() -> None:
    repeated = [call(n, {}, {"text": "workspace main-project ready"}) for n in range(1, MANY + 2)]
    found = correlate([*repeated, call(MANY + 2, {"project": "main-project"})])
    assert found.values == set()
    found = correlate([*repeated[:MANY], call(MANY + 2, {"project": "main-project"})])
    assert found.values == {"main-project"}


def test_a_declaration_names_things_it_does_not_mint() -> None:
    tools = call(1, {}, {"tools": [{"name": "create_note", "inputSchema": {"type": "object"}}]}, method="tools/list")
    found = correlate([tools, call(2, {})])
    assert (
        correlate(
            [tools, Interaction(2, "request", {"method": "tools/call", "params": {"name": "create_note"}})]
        ).values
        == set()
    )
    assert found.values == set()


def test_declared_rules_thread_a_short_value_at_their_place_only_and_refuse_another() -> None:
    recording = [
        call(1, {}, {"structuredContent": {"ref": "r7", "other": "r7", "id": "note_abcdef12"}}),
        call(2, {"ref": "r7", "id": "note_abcdef12"}),
    ]
    assert correlate(recording).values == set() | {"note_abcdef12"}
    rules = ThreadRules(thread=("ref",), no_thread=("result.structuredContent.id",))
    found = correlate(recording, rules)
    assert found.values == {"r7"} and found.declared == {"r7"}
    carry = Carry(recording, rules)
    live = {"result": {"structuredContent": {"ref": "r9", "other": "zz", "id": "note_99999999"}}}
    carry.learn(recording[0].response, live, 1)
    assert carry.mapping == {"r7": "r9"}  # learned at the ref, not at "other"; the id refused
    sent = carry.apply(recording[1].message)
    assert sent["params"]["arguments"] == {"ref": "r9", "id": "note_abcdef12"}


def test_rules_round_trip_through_the_header_and_a_bad_one_is_a_clear_error() -> None:
    rules = ThreadRules(("ref", "result.structuredContent.items[].key"), ("id",))
    assert ThreadRules.from_meta({"threading": rules.to_json()}) == rules
    assert ThreadRules.from_meta({}) == ThreadRules() and not ThreadRules()
    assert rules.threads(("result", "structuredContent", "items", 3, "key"))
    assert not rules.threads(("result", "structuredContent", "items", "key"))
    assert rules.refuses(("result", "content", 0, "text", "{json}", "id"))
    with pytest.raises(ConfigError, match="threading rule"):
        ThreadRules(("result..[",))


def test_integers_thread_as_integers_and_inside_text() -> None:
    recording = [
        call(1, {}, {"structuredContent": {"ticket": 4821937}}),
        call(2, {"ticket": 4821937, "uri": "tickets://4821937/log", "label": "4821937"}),
    ]
    carry = Carry(recording)
    carry.learn(recording[0].response, {"result": {"structuredContent": {"ticket": 5930021}}}, 1)
    args = carry.apply(recording[1].message)["params"]["arguments"]
    assert args == {"ticket": 5930021, "uri": "tickets://5930021/log", "label": "5930021"}


def test_a_word_of_prose_is_found_by_its_literal_context() -> None:
    recorded = "Created note note_a1 (rev rv_9x8y7z) in folder fld_b2c3d4 at 10:31:07."
    live = "Created note note_q7 (rev rv_1a2b3c) in folder fld_e5f6g7 at 11:02:55."
    assert locate(recorded, "fld_b2c3d4", live) == "fld_e5f6g7"
    assert locate(recorded, "rv_9x8y7z", live) == "rv_1a2b3c"
    # The same context twice: the occurrence counts.
    assert locate("id abc123x, id def456y.", "def456y", "id zzz111a, id yyy222b.") == "yyy222b"
    assert locate("tok_1234567 opened", "tok_1234567", "tok_7654321 opened") == "tok_7654321"
    # Another sentence around it: no such place, nothing learned.
    assert locate("Created note note_a1x2y3.", "note_a1x2y3", "Failed: quota exceeded.") is None
    assert locate("Created note note_a1x2y3.", "note_a1x2y3", "Created note note_b1 now.") is None


def test_locating_in_adversarial_megabyte_texts_ends_and_finds_nothing_false() -> None:
    run = "a" * 1_000_000
    assert locate(f"id {run[:5000]}9 end", f"{run[:5000]}9", "id " + run + " end") is None
    assert locate("x: value_12345 y", "value_12345", "x: " * 300_000 + "y") is None
    found = correlate([call(1, {}, {"text": "b" * 2_000_000}), call(2, {"q": "b" * 10})])
    assert found.values == set()


class _Calls:
    """A long recording made as it is read, every time (as a streamed cassette is): ``add``
    answers the sum, and ``echo`` later quotes that sum in prose ("message number 1007")."""

    def __init__(self, count: int) -> None:
        self.count = count

    def __iter__(self) -> Iterator[Interaction]:
        for i in range(self.count):
            if i % 2 == 0:
                yield call(i, {"a": 3 * i, "b": 7}, {"content": [{"type": "text", "text": str(3 * i + 7)}]})
            else:
                text = f"message number {3 * i - 2}"
                yield call(i, {"message": text}, {"content": [{"type": "text", "text": text}]})


def test_a_long_recording_is_read_holding_its_correlations_not_every_value_it_sent() -> None:
    count = 6000  # ~9,000 distinct values sent: the first pass's table grows several times
    calls = _Calls(count)
    # The sum 3i + 7 of call i is quoted by call i + 3, and occurs nowhere else (3 digits up).
    expected = {str(3 * i + 7) for i in range(0, count - 3, 2) if 3 * i + 7 >= 100}
    tracemalloc.start()
    try:
        found = correlate(calls)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.values == expected and not found.declared
    assert set(found.holders) == {i for i in range(0, count - 3, 2) if 3 * i + 7 >= 100}
    assert 98 in found.holders and 99 not in found.holders and -1 not in found.holders
    # What is held is the correlations and a few bytes per value sent, not the values sent:
    # a dict of every value and a set of keys each held ~540 bytes an interaction.
    assert peak < 250 * count, peak
