"""carry's walks against the generator and per-message walks they replaced: the same pairs in the
same order, the same index bits, the same learned mapping, on thousands of generated answers."""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Iterator
from typing import Any

from mcp_replay_action import carry
from mcp_replay_action.carry import Carry, _align, _Quoted
from mcp_replay_action.minted import MIN_LENGTH, TOKEN_IN_TEXT, is_minted_key, looks_minted
from mcp_replay_action.normalize import json_text_of, loosely_equal


def _slow_pairs(recorded: Any, live: Any, key: str | None) -> Iterator[tuple[str, str]]:
    """The nested-generator walk ``carry._pairs`` replaced, verbatim."""
    if loosely_equal(recorded, live):
        return
    if isinstance(recorded, dict) and isinstance(live, dict):
        for k, value in recorded.items():
            if k in live:
                yield from _slow_pairs(value, live[k], k)
    elif isinstance(recorded, list) and isinstance(live, list):
        for i, j in _align(recorded, live):
            if not loosely_equal(recorded[i], live[j]):
                yield from _slow_pairs(recorded[i], live[j], key)
    elif isinstance(recorded, str) and isinstance(live, str) and recorded != live:
        yield from _slow_string_pairs(recorded, live, key)


def _slow_string_pairs(recorded: str, live: str, key: str | None) -> Iterator[tuple[str, str]]:
    if is_minted_key(key) or (looks_minted(recorded) and looks_minted(live)):
        yield recorded, live
        return
    parsed = json_text_of(recorded), json_text_of(live)
    if parsed[0] is not None and parsed[1] is not None:
        yield from _slow_pairs(parsed[0], parsed[1], key)
        return
    rec_tokens = [m.group() for m in TOKEN_IN_TEXT.finditer(recorded) if looks_minted(m.group())]
    if not rec_tokens:
        return
    live_tokens = [m.group() for m in TOKEN_IN_TEXT.finditer(live) if looks_minted(m.group())]
    if len(rec_tokens) != len(live_tokens) or TOKEN_IN_TEXT.sub("", recorded) != TOKEN_IN_TEXT.sub("", live):
        return
    for rec, value in zip(rec_tokens, live_tokens, strict=True):
        if rec != value:
            yield rec, value


def _collect_strings(value: Any, into: set[str]) -> None:
    """The recursive walk ``carry._strings_of`` replaced, verbatim."""
    if isinstance(value, dict):
        for item in value.values():
            _collect_strings(item, into)
    elif isinstance(value, list):
        for item in value:
            _collect_strings(item, into)
    elif isinstance(value, str):
        into.add(value)
        if len(value) > MIN_LENGTH:
            for match in TOKEN_IN_TEXT.finditer(value):
                token = match.group()
                into.add(token)
                into.update(p for p in carry._TOKEN_PARTS.split(token) if len(p) >= MIN_LENGTH)
            inner = json_text_of(value)
            if inner is not None:
                _collect_strings(inner, into)


class _SlowCarry(Carry):
    """Carry as it was: every message walked whole for the index, answers walked by generators."""

    def _quoted(self) -> _Quoted | None:
        if self._outgoing is not None:
            self._index = _Quoted()
            for message in self._outgoing:
                strings: set[str] = set()
                _collect_strings(message, strings)
                self._index.update(strings)
            self._outgoing = None
        return self._index

    def learn(self, recorded: Any, live: Any) -> None:
        candidates = list(_slow_pairs(recorded, live, None))
        if not candidates:
            return
        quoted = self._quoted()
        if quoted is not None:
            candidates = [(r, v) for r, v in candidates if r in quoted]
            if not candidates:
                return
        present: set[str] = set()
        _collect_strings(live, present)
        dumped = json.dumps(live, ensure_ascii=False)
        for rec, value in candidates:
            if rec and not carry._still_present(rec, present, dumped) and self.mapping.get(rec) != value:
                self.mapping[rec] = value
                self._pattern = None


def _token(rng: random.Random) -> str:
    kind = rng.randrange(6)
    if kind == 0:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    if kind == 1:
        return "tsk_" + "".join(rng.choice("0123456789abcdef") for _ in range(10))
    if kind == 2:
        return "".join(rng.choice("ABCdef0123xyzQ") for _ in range(rng.randrange(20, 30)))
    if kind == 3:
        return rng.choice(["add", "echo", "now", "2.0", "tools/call", "item-2184", "v1.2.3", "UTC"])
    if kind == 4:
        return f"2026-12-01T06:{rng.randrange(60):02d}:{rng.randrange(60):02d}+00:00"
    return rng.choice(["tasks://", "file:///tmp/", "started ", ""]) + str(uuid.UUID(int=rng.getrandbits(128)))


def _value(rng: random.Random, depth: int, tokens: list[str]) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        pick = rng.random()
        if pick < 0.6:
            return rng.choice(tokens)
        if pick < 0.7:
            return f"job {rng.choice(tokens)} is {rng.choice(['running', 'done'])}"
        if pick < 0.8:
            return rng.randrange(5)
        if pick < 0.9:
            return json.dumps(_value(rng, depth + 1, tokens))
        return rng.choice([True, None, 1.5])
    if roll < 0.7:
        keys = ["taskId", "text", "requestId", "uri", "name", "id", "time", "nextCursor", "handle", "data"]
        return {k: _value(rng, depth + 1, tokens) for k in rng.sample(keys, rng.randrange(0, 5))}
    return [_value(rng, depth + 1, tokens) for _ in range(rng.randrange(0, 4))]


def _mutate(rng: random.Random, value: Any, fresh: dict[str, str]) -> Any:
    """``value`` with some strings swapped for a fresh mint (consistently), items reordered."""
    if isinstance(value, dict):
        return {k: _mutate(rng, v, fresh) for k, v in value.items() if rng.random() > 0.05}
    if isinstance(value, list):
        out = [_mutate(rng, v, fresh) for v in value]
        if rng.random() < 0.2:
            rng.shuffle(out)
        return out
    if isinstance(value, str):
        if (parsed := json_text_of(value)) is not None:
            return json.dumps(_mutate(rng, parsed, fresh))
        for token in TOKEN_IN_TEXT.findall(value):
            if rng.random() < 0.6:
                value = value.replace(token, fresh.setdefault(token, str(uuid.UUID(int=rng.getrandbits(128)))))
        return value
    return value


def test_the_pairs_walk_finds_what_the_generator_walk_found_in_the_same_order() -> None:
    rng = random.Random(11)
    found = 0
    for _ in range(4000):
        tokens = [_token(rng) for _ in range(8)]
        recorded = _value(rng, 0, tokens)
        live = _mutate(rng, recorded, {})
        out: list[tuple[str, str]] = []
        carry._pairs(recorded, live, None, out)
        assert out == list(_slow_pairs(recorded, live, None)), (recorded, live)
        found += bool(out)
    assert found > 1000  # the inputs do differ by minted values


def test_the_index_holds_exactly_the_bits_of_every_message_walked_whole() -> None:
    """Same Bloom bits as indexing each message's whole collection, including across the clear
    of the seen strings (over 50,000 distinct strings)."""
    rng = random.Random(5)
    tokens = [_token(rng) for _ in range(40)]
    messages = [_value(rng, 0, tokens) for _ in range(3000)]
    messages += [{"params": {"arguments": {"message": f"message number {i}", "n": i}}} for i in range(60_000)]
    messages += [_value(rng, 0, tokens) for _ in range(500)]
    fast, slow = Carry(iter(messages))._quoted(), _SlowCarry(iter(messages))._quoted()
    assert fast is not None and slow is not None
    assert fast._bits == slow._bits


def test_learning_a_replay_maps_what_the_slow_carry_mapped() -> None:
    rng = random.Random(7)
    for _ in range(300):
        tokens = [_token(rng) for _ in range(10)]
        outgoing = [_value(rng, 0, tokens) for _ in range(rng.randrange(0, 6))]
        fast, slow = Carry(iter(outgoing)), _SlowCarry(iter(outgoing))
        fresh: dict[str, str] = {}
        for _ in range(6):
            recorded = _value(rng, 0, tokens)
            live = _mutate(rng, recorded, fresh)
            fast.learn(recorded, live)
            slow.learn(recorded, live)
        assert list(fast.mapping.items()) == list(slow.mapping.items())
        for message in outgoing:
            assert fast.rewrite(message) == slow.rewrite(message)


# Keys in every spelling is_minted_key folds (and near misses it does not), for may_learn_from.
_KEYS = ["text", "requestId", "uri", "name", "id", "time", "data", "items", "Session-Id", "session_id"]
_KEYS += ["NEXT_CURSOR", "taskId", "cursors", "handler", "job-id", "Ünïcode", "k\u212aey"]


def _answer(rng: random.Random, depth: int, tokens: list[str]) -> Any:
    """An answer shape: strings (tokens, prose around them, JSON texts written with and without
    escapes), numbers, nested objects and lists, under keys minted or not."""
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        pick = rng.random()
        if pick < 0.35:
            return rng.choice(tokens)
        if pick < 0.5:
            return f"job {rng.choice(tokens)}, see {rng.choice(tokens)}/log"
        if pick < 0.6:
            return json.dumps(_answer(rng, depth + 1, tokens), ensure_ascii=rng.random() < 0.5)
        if pick < 0.65:  # a JSON text spelling a key with a \u escape, or a slash as \/
            inner = json.dumps({rng.choice(_KEYS): rng.choice(tokens)})
            return inner.replace("a", "\\u0061", 1) if rng.random() < 0.5 else inner.replace("/", "\\/")
        if pick < 0.7:
            return " " + json.dumps([rng.choice(tokens), {rng.choice(_KEYS): rng.choice(tokens)}])
        if pick < 0.8:
            return rng.choice([0, 1, -0.0, 1.0, True, False, None, float("nan")])
        return rng.choice(["2.0", "UTC", "done", "päivä", "", "tools/call", "a" * 9])
    if roll < 0.75:
        return {k: _answer(rng, depth + 1, tokens) for k in rng.sample(_KEYS, rng.randrange(0, 5))}
    return [_answer(rng, depth + 1, tokens) for _ in range(rng.randrange(0, 4))]


def _fresh(rng: random.Random, value: Any, fresh: dict[str, str]) -> Any:
    """``value`` as a new server run might answer it: tokens re-minted (consistently), some whole
    strings replaced, some items reordered."""
    if isinstance(value, str) and value and rng.random() < 0.15:
        return fresh.setdefault(value, _token(rng) or "x")
    return _mutate(rng, value, fresh)


def test_an_answer_may_learn_from_says_false_only_when_learning_it_could_find_nothing() -> None:
    """``may_learn_from(recorded)`` False lets the replay skip the walk beside the live answer:
    then no pair ``_pairs`` finds in any live twin may be quoted by the outgoing messages (what
    ``learn`` keeps), for answers holding minted keys in every spelling, tokens the messages
    quote (whole, inside prose, inside JSON text with and without escapes), and none."""
    rng = random.Random(23)
    skipped = walked = learnable = 0
    for _ in range(400):
        tokens = [_token(rng) for _ in range(8)]
        outgoing = [_answer(rng, 0, tokens) for _ in range(rng.randrange(0, 5))]
        outgoing.append({"params": {"arguments": {"message": f"message number {rng.randrange(99)}"}}})
        carry_ = Carry(iter(outgoing))
        assert carry_.may_learn_from({"result": {}})  # no index yet: always walked
        quoted = carry_._quoted()
        assert quoted is not None
        for _ in range(12):
            recorded = {"jsonrpc": "2.0", "id": 1, "result": _answer(rng, 0, tokens)}
            may = carry_.may_learn_from(recorded)
            for _ in range(3):
                live = _fresh(rng, recorded, {})
                found: list[tuple[str, str]] = []
                carry._pairs(recorded, live, None, found)
                kept = [(r, v) for r, v in found if r in quoted]
                learnable += bool(kept)
                if not may:
                    assert kept == [], (recorded, live, kept)
            skipped += not may
            walked += may
    assert skipped > 1000 and walked > 1000 and learnable > 300


def test_may_learn_from_is_true_when_the_messages_quote_too_many_tokens_to_keep() -> None:
    tokens = [str(uuid.UUID(int=i)) for i in range(carry._TOKENS_KEPT + 1)]
    many = Carry(iter([{"params": {"ids": tokens}}]))
    few = Carry(iter([{"params": {"ids": tokens[:2]}}]))
    many._quoted()
    few._quoted()
    plain = {"result": {"content": [{"type": "text", "text": "nothing minted here"}]}}
    assert many.may_learn_from(plain)
    assert not few.may_learn_from(plain)
    assert few.may_learn_from({"result": {"text": f"see {tokens[1]}"}})
