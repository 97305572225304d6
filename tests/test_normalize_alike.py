"""``normalized_alike``: compare's fast path for two answers that differ only where the
normaliser masks both sides alike (a fresh timestamp or UUID, JSON in text holding one, a value
under a minted key). Saying True must mean the full normal forms are equal; when it says False
compare normalises as before. Checked against the slow path on thousands of generated pairs and
on pairs built to break a careless shortcut."""

from __future__ import annotations

import copy
import json
import math
import random
import re
import uuid
from typing import Any

import pytest

from mcp_replay_action.compare import engine as compare_module
from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.compare.normalize import canonical, normalize, normalized_alike

pytestmark = pytest.mark.unit

OPTION_SETS = [
    CompareOptions(),
    CompareOptions(allow_reorder=True),
    CompareOptions(moments=(1_700_000_000.0,)),
    CompareOptions(ignore_keys=("zone",)),
    CompareOptions(ignore_paths=("result.content[].text.requestId",)),
    CompareOptions(ignore_paths=("result.tools[name=job-2026-11-30].description",)),
]


def slow_compare(a: Any, b: Any, options: CompareOptions, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as m:
        m.setattr(compare_module, "normalized_alike", lambda *_: False)
        return compare(copy.deepcopy(a), copy.deepcopy(b), options)


def check(a: Any, b: Any, monkeypatch: pytest.MonkeyPatch) -> int:
    """The fast path against the slow one under every option set; how often it answered."""
    said = 0
    for options in OPTION_SETS:
        body_a, body_b = _body(a), _body(b)
        if normalized_alike(body_a, body_b, options):
            said += 1
            assert canonical(normalize(body_a, options)) == canonical(normalize(body_b, options)), (a, b, options)
        assert compare(copy.deepcopy(a), copy.deepcopy(b), options) == slow_compare(a, b, options, monkeypatch)
    return said


def _body(message: Any) -> Any:
    return {k: v for k, v in message.items() if k not in ("jsonrpc", "id")}


# -- generated pairs --------------------------------------------------------------------------


def stamp(rng: random.Random) -> str:
    """A moment near today in one of several spellings (masked), or now and then one far away
    (data, compared)."""
    year = rng.choice([2026, 2026, 2026, 2019, 2031])
    day = rng.randint(1, 28)
    spellings = [
        f"{year}-11-{day:02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}+00:00",
        f"{year}-11-{day:02d}",
        f"{day} Nov {year} 10:{rng.randint(10, 59)}:00 +0000",
        f"11/{day:02d}/{year}",
        f"{rng.randint(1, 12)}:{rng.randint(10, 59)}:{rng.randint(10, 59)} PM",
    ]
    return rng.choice(spellings)


def token(rng: random.Random) -> str:
    return rng.choice(
        [
            str(uuid.UUID(int=rng.getrandbits(128))),
            str(uuid.UUID(int=rng.getrandbits(128))).upper(),
            f"{rng.getrandbits(128):032x}",
            f"0x{rng.getrandbits(48):012x}",
            "".join(rng.choice("ABCDEFGHJKabcdefghjk0123456789") for _ in range(24)),
        ]
    )


def text(rng: random.Random) -> str:
    """Prose holding volatile tokens, next to digits and letters, with non-ASCII now and then."""
    parts = []
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.3:
            parts.append(stamp(rng))
        elif kind < 0.5:
            parts.append(token(rng))
        elif kind < 0.6:
            parts.append(rng.choice(["7", "x", "é", "-", "ü2"]) + stamp(rng) + rng.choice(["", "1", "Z", "é"]))
        else:
            parts.append(rng.choice(["ok", "item 42", "naïve café", "line\nbreak", "a\\u0041b", "tab\t", "日本"]))
    return rng.choice([" ", "", ", "]).join(parts)


KEYS = ["time", "zone", "requestId", "name", "id", "cursor", "nextCursor", "data", "blob", "createdAt", "msg", "ts"]


def document(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        return rng.choice(
            [
                text(rng),
                stamp(rng),
                token(rng),
                rng.randint(-5, 5),
                rng.choice([0, 1, 1_700_000_000, 1_764_000_000_000]),
                rng.choice([1.5, -0.0, 0.0, 1.0, float("nan"), 1.7e9]),
                rng.choice([True, False, None]),
                "",
            ]
        )
    if roll < 0.5:
        inner = document(rng, depth + 1)
        return json.dumps(inner, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1]))  # JSON in text
    if roll < 0.6:
        return [{"name": f"job-{stamp(rng)}", "description": text(rng)} for _ in range(rng.randint(1, 3))]
    if roll < 0.75:
        return [document(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    keys = rng.sample(KEYS, rng.randint(1, 4))
    return {k: document(rng, depth + 1) for k in keys}


def twin(value: Any, rng: random.Random) -> Any:
    """A live twin: volatile tokens refreshed, and now and then something else changed."""
    if isinstance(value, dict):
        keys = list(value)
        if rng.random() < 0.1:
            rng.shuffle(keys)  # key order never matters
        out = {k: twin(value[k], rng) for k in keys}
        if rng.random() < 0.03:
            out[rng.choice(KEYS)] = "added"
        return out
    if isinstance(value, list):
        out_list = [twin(v, rng) for v in value]
        if out_list and rng.random() < 0.03:
            out_list.pop()
        return out_list
    if isinstance(value, str):
        parsed = None
        if value[:1] in "{[":
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
        if parsed is not None and rng.random() < 0.9:
            return json.dumps(twin(parsed, rng), ensure_ascii=rng.random() < 0.5)
        roll = rng.random()
        if roll < 0.6:
            return _refreshed(value, rng)
        if roll < 0.65:
            return value + "!"
        return value
    if value is True and rng.random() < 0.2:
        return 1  # True == 1, normalised apart
    if type(value) is int and rng.random() < 0.2:
        return rng.choice([float(value), value + 1, str(value)])
    if type(value) is float and rng.random() < 0.2:
        return rng.choice([-value, int(value) if not math.isnan(value) else value, value])
    return value


def _refreshed(value: str, rng: random.Random) -> str:
    """Other text altogether, or ``value`` with its UUIDs and clock times spelt afresh."""
    if rng.random() < 0.3:
        return text(rng)
    value = re.sub(
        r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
        lambda _: str(uuid.UUID(int=rng.getrandbits(128))),
        value,
    )
    return re.sub(r"\b(\d{2}):(\d{2}):(\d{2})\b", lambda _: f"{rng.randint(10, 23)}:{rng.randint(10, 59)}:00", value)


def message(body: Any, seq: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": seq, "result": body}


def test_the_fast_path_gives_what_the_slow_path_gives_on_generated_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(11)
    said = 0
    for seq in range(1500):
        recorded = message({"content": [{"type": "text", "text": text(rng)}], "doc": document(rng)}, seq)
        live = twin(recorded, rng)
        said += check(recorded, live, monkeypatch)
    assert said > 1000  # the fast path answered a good share of the pairs (not a vacuous check)


def now_answer(moment: str, request_id: str, *, ensure_ascii: bool = True) -> dict[str, Any]:
    doc = {"time": moment, "zone": "UTC", "requestId": request_id}
    text = json.dumps(doc, ensure_ascii=ensure_ascii)
    return {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}], "isError": False}}


U1, U2 = "da6fa540-5627-455e-b062-e405533b21c8", "0b7c51a2-1e2f-4c55-9d61-31bb0e1b7f02"


@pytest.mark.parametrize(
    ("recorded", "live", "alike"),
    [
        # the bench's 'now' answer: a fresh timestamp and UUID in JSON text
        (now_answer("2026-12-01T11:54:08+00:00", U1), now_answer("2026-12-01T12:03:51+00:00", U2), True),
        # the same text written with and without \u escapes: one parsed value
        (now_answer("2026-12-01T11:54:08+00:00", "é" + U1), now_answer("2026-12-01T11:54:09+00:00", "é" + U2), True),
        (
            now_answer("2026-12-01T11:54:08+00:00", "é" + U1, ensure_ascii=False),
            now_answer("2026-12-01T11:54:09+00:00", "é" + U2),
            True,
        ),
        # a timestamp glued to a digit is no timestamp mask on one side
        (now_answer("12026-12-01T11:54:08+00:00", U1), now_answer("2026-12-01T11:54:08+00:00", U2), False),
        # a date years away is data
        (now_answer("2019-12-01T11:54:08+00:00", U1), now_answer("2026-12-01T11:54:08+00:00", U1), False),
        # a UUID that became prose
        (now_answer("2026-12-01T11:54:08+00:00", U1), now_answer("2026-12-01T11:54:08+00:00", "pending"), False),
        # True where the recording has 1, 1.0 where it has 1, NaN, -0.0
        ({"result": {"n": 1, "t": U1}}, {"result": {"n": True, "t": U2}}, False),
        ({"result": {"n": [1, {"m": 1}], "t": U1}}, {"result": {"n": [1, {"m": True}], "t": U1}}, False),
        ({"result": {"n": 1, "t": U1}}, {"result": {"n": 1.0, "t": U2}}, False),
        ({"result": {"n": float("nan"), "t": U1}}, {"result": {"n": float("nan"), "t": U2}}, False),
        ({"result": {"n": 0.0, "t": U1}}, {"result": {"n": -0.0, "t": U2}}, True),
        # key order never matters; a key missing does
        ({"result": {"a": 1, "t": U1}}, {"result": {"t": U2, "a": 1}}, True),
        ({"result": {"a": 1, "t": U1}}, {"result": {"t": U2, "b": 1}}, False),
        # a minted key's value is <opaque> whatever it is; a base64 payload is not known
        ({"result": {"nextCursor": "abc"}}, {"result": {"nextCursor": "xyz"}}, True),
        ({"result": {"data": "aGVsbG8="}}, {"result": {"data": "aGVsbG9v"}}, False),
        # a named list whose names differ only by a masked date: keyed alike
        (
            {"result": {"tools": [{"name": "job-2026-11-30"}, {"name": "b"}]}},
            {"result": {"tools": [{"name": "job-2026-12-01"}, {"name": "b"}]}},
            True,
        ),
        # JSON in text on one side only
        ({"result": {"t": '{"a": 1}'}}, {"result": {"t": "{a: 1}"}}, False),
        # deep nesting: not known past the bound
        (
            {"result": json.loads("[" * 40 + json.dumps(U1) + "]" * 40)},
            {"result": json.loads("[" * 40 + json.dumps(U2) + "]" * 40)},
            False,
        ),
    ],
)
def test_the_fast_path_on_pairs_built_to_break_it(
    recorded: dict[str, Any], live: dict[str, Any], alike: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert normalized_alike(_body(recorded), _body(live)) is alike
    check(recorded, live, monkeypatch)


@pytest.mark.parametrize(
    "options",
    [
        CompareOptions(ignore_keys=("alikeProbeZone",)),
        CompareOptions(ignore_paths=("result.content[0].text{json}.alikeProbeId",)),
    ],
)
def test_under_an_ignore_rule_the_slow_path_runs_and_records_the_rule_as_used(options: CompareOptions) -> None:
    from mcp_replay_action.compare.normalize import unused_rules

    def answer(moment: str, request_id: str) -> dict[str, Any]:
        doc = {"time": moment, "alikeProbeZone": "UTC", "alikeProbeId": request_id}
        return {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": json.dumps(doc)}]}}

    recorded, live = answer("2026-12-01T11:54:08+00:00", U1), answer("2026-12-01T11:55:08+00:00", U2)
    assert unused_rules(options)  # no compare under these options has used the rule yet
    assert not normalized_alike(_body(recorded), _body(live), options)
    assert compare(recorded, live, options) == ()
    assert unused_rules(options) == []


def records_answer(count: int, moment: str, *, as_text: bool) -> dict[str, Any]:
    """An answer of ``count`` records, the last stamped with ``moment``: parsed or as JSON text."""
    records = [{"name": f"item-{i}", "score": i % 7} for i in range(count)]
    records[-1]["updatedAt"] = moment
    body: Any = json.dumps({"records": records}) if as_text else {"records": records}
    key = "text" if as_text else "structuredContent"
    return {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", key: body}]}}


@pytest.mark.parametrize("as_text", [False, True])
def test_past_its_bounds_the_fast_path_leaves_a_long_answer_to_the_slow_path(
    as_text: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed look costs what the slow path then costs again: it gives up on a long answer
    (more values than it visits, a JSON text longer than it parses), which still compares equal."""
    small = (
        records_answer(3, "2026-12-01T10:00:00Z", as_text=as_text),
        records_answer(3, "2026-12-01T11:00:00Z", as_text=as_text),
    )
    assert normalized_alike(_body(small[0]), _body(small[1])) is True
    long = (
        records_answer(400, "2026-12-01T10:00:00Z", as_text=as_text),
        records_answer(400, "2026-12-01T11:00:00Z", as_text=as_text),
    )
    assert normalized_alike(_body(long[0]), _body(long[1])) is False
    assert compare(*long) == () == slow_compare(*long, CompareOptions(), monkeypatch)


def test_a_long_text_is_left_to_the_slow_path_however_few_values_it_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(moment: str) -> dict[str, Any]:
        text = json.dumps({"note": "lorem ipsum " * 400, "at": moment})
        return {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": text}]}}

    pair = (answer("2026-12-01T10:00:00Z"), answer("2026-12-01T11:00:00Z"))
    assert normalized_alike(_body(pair[0]), _body(pair[1])) is False
    assert compare(*pair) == () == slow_compare(*pair, CompareOptions(), monkeypatch)
