"""carry's fast paths against plain references, on thousands of generated recordings:

* ``correlate`` (one pass over the client's messages, one over the answers, indexed) finds exactly
  the correlations a brute-force reading of its definition finds (every quoted value searched in
  every earlier answer);
* ``Carry.learn``'s walk, which skips equal subtrees (``loosely_equal``) and answers that held no
  correlated value before it was quoted (``may_learn_from``), learns exactly what a plain walk of
  every answer's every place learns.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_replay_action.compare import correlate as corr
from mcp_replay_action.compare import intflow
from mcp_replay_action.compare.carry import Carry, _align
from mcp_replay_action.compare.correlate import (
    DECLARATIONS,
    MANY,
    ThreadRules,
    offered_values,
    plain_value,
    quoted_values,
    quotes,
)
from mcp_replay_action.compare.intflow import is_decimal
from mcp_replay_action.compare.normalize import json_text_of
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.prepared import Prepared

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]


def _reference(interactions: list[Interaction], rules: ThreadRules) -> tuple[set[str], set[str]]:
    """(values, declared) straight from the definitions in ``correlate``'s and ``intflow``'s
    docstrings."""
    values: set[str] = set()
    declared: set[str] = set()
    client = [(i.seq, list(quotes(i.message))) for i in interactions if i.kind in ("request", "notification")]
    answers = [
        (i.seq, list(offered_values(i.response["result"], rules)))
        for i in interactions
        if i.kind == "request"
        and isinstance(i.response, dict)
        and isinstance(i.response.get("result"), (dict, list))
        and i.method not in DECLARATIONS
    ]
    declarations = [
        (i.seq, {v for v, _, _ in offered_values(i.response["result"], ThreadRules())})
        for i in interactions
        if i.kind == "request" and isinstance(i.response, dict) and i.method in DECLARATIONS
    ]
    for _, quoted in client:
        for value, _ in quoted:
            first_quote = min(seq for seq, q in client if any(v == value for v, _ in q))
            holding = [
                (seq, offered)
                for seq, offered in answers
                if seq < first_quote and any(v == value for v, _, _ in offered)
            ]
            if not holding:
                continue
            ruled = any(r for _, offered in holding for v, r, _ in offered if v == value)
            if is_decimal(value):
                flow = intflow.threads(
                    value,
                    {k for _, offered in holding for v, _, k in offered if v == value},
                    {k for _, q in client for v, k in q if v == value},
                    held=len(holding),
                    many=MANY,
                    declared_before=any(seq < first_quote and value in held for seq, held in declarations),
                )
            else:
                flow = plain_value(value) and len(holding) <= MANY
            if ruled or flow:
                values.add(value)
                if not flow:
                    declared.add(value)
    return values, declared


WORDS = ["note_x7k2abcd9q1z", "cus_AbC123xyz456Qw", "4821937", "ok", "true", "groceries", "tools", "a1", "123", "512"]


def _recording(rng: random.Random) -> list[Interaction]:
    out = []
    for seq in range(1, rng.randrange(2, 9)):

        def leaf() -> Any:
            pick = rng.random()
            if pick < 0.5:
                return rng.choice(WORDS)
            if pick < 0.6:
                return int(rng.choice(["4821937", "12", "100000", "512", "7"]))
            if pick < 0.75:
                return f"Created {rng.choice(WORDS)} for {rng.choice(WORDS)}."
            if pick < 0.85:
                return json.dumps({rng.choice(["id", "ref"]): rng.choice(WORDS)})
            return rng.choice([True, None, 1.5])

        keys = ["id", "ref", "cursor", "text", "name", "count", "ticket"]
        params = {k: leaf() for k in rng.sample(keys, rng.randrange(0, 3))}
        result = {k: leaf() for k in rng.sample(keys, rng.randrange(0, 4))}
        method = rng.choice(["tools/call", "tools/call", "resources/read", "tools/list"])
        kind = "notification" if rng.random() < 0.1 else "request"
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        out.append(Interaction(seq, kind, message, {"result": result} if kind == "request" else None))
    return out


def test_correlate_finds_exactly_what_its_definition_says() -> None:
    rng = random.Random(21)
    found = 0
    for n in range(3000):
        recording = _recording(rng)
        rules = ThreadRules(("ref",), ("name",)) if n % 3 == 0 else ThreadRules()
        got = corr.correlate(recording, rules)
        values, declared = _reference(recording, rules)
        assert set(got.values) == values, recording
        assert set(got.declared) == declared, recording
        found += len(values)
    assert found > 500  # the property was tested on recordings that hold correlations


class _PlainCarry(Carry):
    """Every answer walked at every place: no equal-subtree shortcut, no holder gate."""

    def may_learn_from(self, seq: int) -> bool:
        return True

    def _pairs(self, recorded: Any, live: Any, path: Any, out: list[Any]) -> None:
        if isinstance(recorded, dict) and isinstance(live, dict):
            for k, value in recorded.items():
                if k in live:
                    self._pairs(value, live[k], (*path, k), out)
        elif isinstance(recorded, list) and isinstance(live, list):
            for i, j in _align(recorded, live):
                self._pairs(recorded[i], live[j], (*path, i), out)
        elif isinstance(recorded, str) and isinstance(live, str):
            if recorded != live:
                self._string_pairs(recorded, live, path, out)
        elif type(recorded) is int and type(live) is int and recorded != live:
            super()._pairs(recorded, live, path, out)


def _minted_anew(value: Any, fresh: dict[str, str], rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {k: _minted_anew(v, fresh, rng) for k, v in value.items()}
    if isinstance(value, list):
        return [_minted_anew(v, fresh, rng) for v in value]
    if isinstance(value, str):
        if (parsed := json_text_of(value)) is not None:
            return json.dumps(_minted_anew(parsed, fresh, rng))
        for word in WORDS:
            if word in value and rng.random() < 0.7:
                value = value.replace(word, fresh.setdefault(word, f"new_{rng.getrandbits(40):x}"))
        return value
    if type(value) is int and rng.random() < 0.5:
        return value + 1
    return value


def test_learning_a_replay_maps_what_a_plain_walk_of_every_answer_maps() -> None:
    rng = random.Random(5)
    learned = 0
    for _ in range(1500):
        recording = _recording(rng)
        fast, plain = Carry(recording), _PlainCarry(recording)
        fresh: dict[str, str] = {}
        for inter in recording:
            if inter.kind != "request" or inter.response is None:
                continue
            live = _minted_anew(inter.response, fresh, rng)
            # The plain walk learns from the holders only as well: an echo after the quote is
            # not a source, by definition, not by a shortcut.
            if inter.seq in fast.correlations.holders:
                plain.learn(inter.response, live, inter.seq)
            fast.learn(inter.response, live, inter.seq)
            message = inter.message
            assert fast.rewrite(message) == plain.rewrite(message)
        assert fast.mapping == plain.mapping and fast.ints == plain.ints
        learned += len(fast.mapping)
    assert learned > 150


def test_may_learn_from_is_false_only_for_answers_that_held_no_correlated_value_first() -> None:
    rng = random.Random(8)
    for _ in range(2000):
        recording = _recording(rng)
        found = corr.correlate(recording)
        carry = Carry(found)
        for inter in recording:
            if carry.may_learn_from(inter.seq) or inter.kind != "request" or inter.response is None:
                continue
            result = inter.response.get("result")
            if inter.method in DECLARATIONS or not isinstance(result, dict):
                continue
            quoted_after = set().union(
                *(quoted_values(i.message) for i in recording if i.seq > inter.seq and i.kind != "server-request")
            )
            held = {v for v, _, _ in offered_values(result, ThreadRules())} & set(found.values)
            # A correlated value it holds was first quoted before it (or by its own request).
            for value in held:
                sources = [
                    i.seq
                    for i in recording
                    if i.seq in found.holders
                    and value in {v for v, _, _ in offered_values(i.response["result"], ThreadRules())}
                ]
                assert sources and sources[0] < inter.seq or value not in quoted_after


def test_may_hold_from_what_the_client_sent_alone_never_refuses_a_holder() -> None:
    rng = random.Random(13)
    refused = 0
    for n in range(2000):
        recording = _recording(rng)
        rules = ThreadRules(("ref",), ("name",)) if n % 3 == 0 else ThreadRules()
        holders = set(corr.correlate(recording, rules).holders)
        flow = corr.Flow(recording, rules)
        for inter in recording:
            if inter.kind != "request":
                continue
            if not flow.may_hold(inter):
                assert inter.seq not in holders, recording
                refused += 1
        # Once the second pass is read, exactly its holders.
        flow.correlations()
        assert {i.seq for i in recording if i.kind == "request" and flow.may_hold(i)} == holders
    assert refused > 1000  # the first pass alone settled many answers


class _Counted(list[Interaction]):
    """A recording that counts how often it is read through (a streamed cassette: a read of the file)."""

    reads = 0

    def __iter__(self) -> Iterator[Interaction]:
        self.reads += 1  # as the first line is read, as a file's generator does
        yield from super().__iter__()


def test_an_answer_that_differs_by_a_value_nobody_quotes_is_settled_by_the_first_pass_alone() -> None:
    stamped = {
        "content": [{"type": "text", "text": '{"time": "2026-12-07T05:42:11+00:00", "requestId": "f4091f47-e67e"}'}]
    }
    recording = _Counted(
        [
            Interaction(1, "request", {"method": "tools/call", "params": {"name": "now"}}, {"result": stamped}),
            Interaction(2, "request", {"method": "tools/call", "params": {"a": 42, "b": 7}}, {"result": {"n": 49}}),
            Interaction(3, "request", {"method": "tools/call", "params": {"id": "note_x7k2abcd"}}, {"result": {}}),
        ]
    )
    carry = Carry(recording)
    assert not carry.may_learn_from(1, recording[0]) and recording.reads == 1
    assert not carry.may_learn_from(2, recording[1]) and recording.reads == 1
    # A value a later request quotes, which could be one: the second pass decides (it is not).
    minted = Interaction(1, "request", {"method": "tools/call", "params": {}}, {"result": {"ref": "note_x7k2abcd"}})
    recording[0] = minted
    assert Carry(recording).may_learn_from(1, minted) and recording.reads == 3


def test_may_hold_worked_out_ahead_is_what_it_is_asked_and_only_for_its_own_answer() -> None:
    rng = random.Random(21)
    for n in range(500):
        recording = _recording(rng)
        rules = ThreadRules(("ref",), ("name",)) if n % 3 == 0 else ThreadRules()
        plain, ahead = corr.Flow(recording, rules), corr.Flow(recording, rules)
        requests = [i for i in recording if i.kind == "request"]
        if not requests:
            continue
        ahead.may_hold(requests[0])  # the first pass, made by the first answer that differs
        for inter, after in zip(requests, requests[1:] + requests[:1], strict=True):
            ahead.look_ahead(inter)
            assert ahead.may_hold(after) == plain.may_hold(after)  # another answer: worked out afresh
            ahead.look_ahead(inter)
            assert ahead.may_hold(inter) == plain.may_hold(inter)


def test_carry_looks_ahead_only_at_a_tool_whose_answer_differed_and_never_before_the_first_pass() -> None:
    stamped = {"content": [{"type": "text", "text": '{"time": "2026-12-07T05:42:11+00:00"}'}]}

    def now(seq: int) -> Interaction:
        return Interaction(seq, "request", {"method": "tools/call", "params": {"name": "now"}}, {"result": stamped})

    add = Interaction(3, "request", {"method": "tools/call", "params": {"name": "add", "a": 42}}, {"result": {}})
    recording = _Counted([now(1), now(2), add, now(4)])
    carry = Carry(recording)
    carry.look_ahead(recording[1])  # nothing differed yet: the recording is not read
    assert recording.reads == 0 and carry.flow is not None and carry.flow._ahead is None
    assert not carry.may_learn_from(1, recording[0]) and recording.reads == 1
    carry.look_ahead(add)  # "add" never differed: nothing worked out
    assert carry.flow._ahead is None
    # An answer holding a long JSON text is read ahead for the comparison, not walked for values.
    long = Interaction(5, "request", {"method": "tools/call", "params": {"name": "now"}}, {"result": {}})
    document = {"content": [{"type": "text", "text": '{"rows": "' + "x" * 200 + '"}'}]}
    long_prepared = Prepared(Limits(read_ahead_chars=100), {"result": document})
    carry.look_ahead(long, long_prepared)
    assert carry.flow._ahead is None
    carry.look_ahead(recording[3], Prepared(Limits(read_ahead_chars=100), recording[3].response))
    assert carry.flow._ahead == (4, False) and not carry.may_learn_from(4, recording[3])
