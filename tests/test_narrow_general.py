"""narrow.py on long lists whatever names their records: by ``name`` (a named list), by ``id``
(no identity key), by nothing, or records that repeat, with one change or a few anywhere (a leaf, a key renamed, added
or removed, a record inserted or removed, a string with escapes and non-ASCII characters, a
number spelled otherwise), from a server that answers at once (nothing read ahead). The narrowed
comparison finds exactly what parsing both texts whole finds, and the narrowing did the work."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from typing import Any

import pytest

from mcp_replay_action.compare import pairing
from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.values import narrow
from mcp_replay_action.values.limits import Limits

pytestmark = pytest.mark.unit

FULL = 1 << 62  # a ``Limits.narrow_min_chars`` that no text reaches: the full path
STRINGS = ['quote " in it', "back\\slash", "line\nbreak", "caf\u00e9", "\u2028sep", "emoji \U0001f600", "tab\t", ""]
NUMBERS = [0, -1, 7, 10**12, 1.5, -0.0, 1e21, 2.5e-7, 3.0]


def _leaf(rng: random.Random) -> Any:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(NUMBERS) if rng.random() < 0.5 else rng.randint(-99, 99)
    if roll < 0.8:
        return rng.choice(STRINGS) + str(rng.randint(0, 9))
    return rng.choice([True, False, None, [], {}])


def _record(rng: random.Random, i: int, key: str) -> dict[str, Any]:
    if key == "repeat":  # records that repeat: six kinds, over and over
        return {"kind": f"k{i % 3}", "score": i % 2, "tags": ["a"]}
    rec: dict[str, Any] = {"score": _leaf(rng), "tags": [_leaf(rng) for _ in range(rng.randint(0, 2))]}
    if key == "name":
        rec["name"] = f"item-{i}"
    elif key == "id":
        rec["id"] = i
    else:
        rec["seq"] = f"n{i}"
    if rng.random() < 0.3:
        rec["owner"] = {"team": _leaf(rng), "n\u00e9": i % 5}
    return rec


def _edit(rng: random.Random, records: list[dict[str, Any]], key: str) -> None:
    at = rng.randrange(len(records))
    rec = records[at]
    kind = rng.choice(["leaf", "leaf", "escape", "number", "rename-key", "add-key", "drop-key", "insert", "remove"])
    if kind == "leaf":
        rec["score"] = _leaf(rng)
    elif kind == "escape":
        rec["tags"] = [*rec["tags"], rng.choice(STRINGS) + '\\"\u00e9']
    elif kind == "number":
        rec["score"] = rng.choice([1.0, 1, True, 10**20, -5])  # 1.0 against 1 and true: told apart
    elif kind == "rename-key":
        rec["sc\u00f6re"] = rec.pop("score")
    elif kind == "add-key":
        rec[rng.choice(["extra", "name", 'z"q'])] = _leaf(rng)
    elif kind == "drop-key":
        rec.pop(rng.choice(list(rec)))
    elif kind == "insert":
        records.insert(at, _record(rng, len(records) + 7, key))
    else:
        records.pop(at)


def _answer(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}


@pytest.mark.parametrize("key", ["name", "id", "none", "repeat"])
def test_a_long_list_narrowed_finds_what_the_whole_parse_finds(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    rng = random.Random({"name": 1, "id": 2, "none": 3, "repeat": 4}[key])
    settled = calls = marked = 0
    real_skeletons, real_mark_of = narrow.skeletons, narrow.Stretch.mark_of

    def counted(a: str, b: str, levels: int, *rest: Any) -> Any:
        nonlocal settled, calls
        calls += 1
        got = real_skeletons(a, b, levels, *rest)
        settled += got is not None
        return got

    def mark_of(self: narrow.Stretch, part: Any) -> Any:
        nonlocal marked
        got = real_mark_of(self, part)
        marked += got is not None
        return got

    monkeypatch.setattr(pairing, "skeletons", counted)
    monkeypatch.setattr(narrow.Stretch, "mark_of", mark_of)
    for case in range(12):
        records = [_record(rng, i, key) for i in range(rng.randint(700, 1200))]
        before = json.dumps({"records": records, "meta": {"n": len(records)}}, ensure_ascii=rng.random() < 0.5)
        for _ in range(rng.choice([1, 1, 2])):
            _edit(rng, records, key)
        after = json.dumps({"records": records, "meta": {"n": len(records)}}, ensure_ascii=before.isascii())
        if after == before:
            continue
        options = rng.choice([CompareOptions(), CompareOptions(allow_reorder=True)])
        narrowed = compare(_answer(before), _answer(after), replace(options, limits=Limits(narrow_min_chars=1 << 12)))
        full = compare(_answer(before), _answer(after), replace(options, limits=Limits(narrow_min_chars=FULL)))
        assert narrowed == full, (key, case)
        assert narrowed, (key, case)  # every edit here is a difference
    # The narrowing settled most pairs; a named list's names came from what it marked as it read.
    assert calls >= 10 and settled >= calls - 2, (settled, calls)
    if key == "name":
        assert marked > 20, marked


@pytest.mark.parametrize("key", ["id", "none", "repeat"])
def test_a_plain_list_s_shared_records_are_not_parsed_again(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    # The narrowing learns from each run's parse that all its items are objects (``_Source.kinds``),
    # so the Slices of a long plain list's shared stretches are made without a second parse; the
    # findings are those of parsing both texts whole.
    rng = random.Random(11)
    records = [_record(rng, i, key) for i in range(3000)]
    before = json.dumps({"records": records})
    records[1500]["score"] = "changed"
    records.insert(2500, _record(rng, 9999, key))
    after = json.dumps({"records": records})
    again = 0
    real = narrow._items_to

    def counted(*args: Any) -> Any:
        nonlocal again
        again += 1
        return real(*args)

    monkeypatch.setattr(narrow, "_items_to", counted)
    narrowed = compare(_answer(before), _answer(after), CompareOptions(limits=Limits(narrow_min_chars=1 << 12)))
    assert again == 0
    full = compare(_answer(before), _answer(after), CompareOptions(limits=Limits(narrow_min_chars=FULL)))
    assert narrowed == full
    where = {f.path.rsplit("records", 1)[1] for f in narrowed}
    # Among records that repeat, the one inserted may be read as any of its equal neighbours.
    assert where == {"[1500].score", "[2500]"} if key != "repeat" else "[1500].score" in where
