"""narrow.py: two long JSON texts compared from their skeletons give exactly the findings of the
full parse, on many random documents and random edits (property-style, fixed seeds)."""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import replace
from typing import Any

import pytest

from mcp_replay_action.compare import normalize, pairing
from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.values import narrow
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.narrow import common_prefix, common_suffix, skeletons
from mcp_replay_action.values.prepared import Prepared

pytestmark = pytest.mark.unit

FULL = 1 << 62  # a ``Limits.narrow_min_chars`` that no text reaches: the full path


def _at(options: CompareOptions | None = None, **limits: Any) -> CompareOptions:
    """``options`` with these ``Limits`` (the fast paths on, whatever ``MCP_REPLAY_FAST`` says)."""
    return replace(options or CompareOptions(), limits=Limits(**limits))


def _read_ahead(before: Any, ahead: narrow.ReadAhead | None) -> Prepared:
    """What a replay prepares for the answer ``before`` records, with ``ahead`` read of its text."""
    prepared = Prepared(Limits(), before)
    prepared.ahead = ahead
    return prepared


WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "2026-11-30T10:00:00Z",
    "550e8400-e29b-41d4-a716-446655440000",
    "x{y}",
    "a,b]",
]


def _leaf(rng: random.Random) -> Any:
    return rng.choice(
        [
            lambda: rng.randint(-5, 5),
            lambda: rng.randint(0, 10**6),
            lambda: rng.choice([1.5, 2.0, -0.25, 1e21, 3.0]),
            lambda: rng.choice([True, False, None]),
            lambda: rng.choice(WORDS),
            lambda: "t" * rng.randint(0, 3) + str(rng.randint(0, 99)),
        ]
    )()


def _record(rng: random.Random, i: int, depth: int) -> dict[str, Any]:
    rec: dict[str, Any] = {"name": f"item-{i}", "score": _leaf(rng)}
    if rng.random() < 0.5:
        rec["tags"] = [_leaf(rng) for _ in range(rng.randint(0, 3))]
    if rng.random() < 0.4:
        rec["owner"] = {"team": _leaf(rng), "when": "2026-11-30T10:00:00Z", "nextCursor": f"c{i}"}
    if depth < 2 and rng.random() < 0.15:
        rec["inner"] = json.dumps(_document(rng, depth + 1))  # JSON text inside JSON text
    if depth < 3 and rng.random() < 0.2:
        rec["sub"] = _value(rng, depth + 1)
    return rec


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth >= 4 or roll < 0.3:
        return _leaf(rng)
    if roll < 0.55:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if roll < 0.8:
        return {f"k{j}": _value(rng, depth + 1) for j in range(rng.randint(0, 4))}
    return [_record(rng, j, depth + 1) for j in range(rng.randint(1, 5))]


def _document(rng: random.Random, depth: int = 0) -> Any:
    doc: dict[str, Any] = {
        "records": [_record(rng, i, depth) for i in range(rng.randint(1, 30))],
        "meta": {"count": rng.randint(0, 9), "requestId": "r-" + str(rng.randint(0, 9))},
    }
    for j in range(rng.randint(0, 3)):
        doc[f"extra{j}"] = _value(rng, depth + 1)
    if rng.random() < 0.2:
        return doc["records"]  # an array at the top
    return doc


def _containers(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = []
    if isinstance(value, (dict, list)):
        out.append((path, value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            out.extend(_containers(v, (*path, k)))
    return out


def _edit(rng: random.Random, doc: Any) -> Any:
    """One random edit of a copy of ``doc``."""
    doc = json.loads(json.dumps(doc))
    places = _containers(doc)
    path, node = rng.choice(places)
    kind = rng.choice(["leaf", "leaf", "insert", "remove", "rename", "duplicate", "masked", "inner", "swap"])
    if kind == "inner":
        for _, n in places:
            if isinstance(n, dict) and isinstance(n.get("inner"), str):
                n["inner"] = json.dumps(_edit(rng, json.loads(n["inner"])))
                return doc
        kind = "leaf"
    if kind in ("rename", "duplicate", "masked"):
        records = [n for _, n in places if isinstance(n, dict) and isinstance(n.get("name"), str)]
        if records:
            rec = rng.choice(records)
            if kind == "rename":
                rec["name"] = rec["name"] + "-new"
            elif kind == "duplicate":
                rec["name"] = "item-0"
            else:
                rec.setdefault("owner", {})["when"] = "2026-11-30T11:22:33Z"
                rec["owner"]["nextCursor"] = "changed"
            return doc
        kind = "leaf"
    if isinstance(node, list):
        if kind == "insert" or not node:
            node.insert(rng.randint(0, len(node)), _record(rng, rng.randint(0, 40), 3))
        elif kind == "remove":
            node.pop(rng.randrange(len(node)))
        elif kind == "swap" and len(node) > 1:
            i = rng.randrange(len(node) - 1)
            node[i], node[i + 1] = node[i + 1], node[i]
        else:
            node[rng.randrange(len(node))] = _leaf(rng)
    else:
        if kind == "insert" or not node:
            node[f"new{rng.randint(0, 3)}"] = _leaf(rng)
        elif kind == "remove":
            del node[rng.choice(list(node))]
        else:
            node[rng.choice(list(node))] = _leaf(rng)
    return doc


def _text(rng: random.Random, doc: Any) -> str:
    style = rng.random()
    if style < 0.6:
        return json.dumps(doc, separators=(",", ":"))
    if style < 0.85:
        return json.dumps(doc)
    return json.dumps(doc, indent=1)


def _answer(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}


OPTIONS = [
    CompareOptions(),
    CompareOptions(allow_reorder=True),
    CompareOptions(ignore_keys=("score",)),
    CompareOptions(ignore_paths=("result.content[].text.records[].tags",)),
    CompareOptions(ignore_paths=("result.content[0].text{json}.records[name=item-3]",)),
    CompareOptions(ignore_paths=("result.content[].text.meta",), allow_reorder=True),
]


def _small_sizes(seed: int, runs: tuple[int, ...] = (60, 250, 700)) -> dict[str, Any]:
    """``Limits`` the narrowing reads with, small: runs of one to a few items (shared items read
    in runs, a run's end tried at many commas), and for an odd ``seed`` windows of a few
    characters (members cut mid-number, "1." of "1.5", and read again)."""
    windows = {"narrow_windows": (3, 7, 20)} if seed % 2 else {}
    return {"run_chars": runs[seed % len(runs)], **windows}


def _both_ways(before: Any, after: Any, options: CompareOptions, **limits: Any) -> tuple[Any, Any]:
    """Compared narrowed (with these other ``Limits``) and parsed whole."""
    narrowed = compare(before, after, _at(options, narrow_min_chars=0, **limits))
    full = compare(before, after, _at(options, narrow_min_chars=FULL))
    return narrowed, full


@pytest.mark.parametrize("seed", range(18))
def test_narrowed_compare_finds_exactly_what_the_full_compare_finds(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    rng = random.Random(seed)
    sizes = _small_sizes(seed)
    # Shared items of a list as one Stretch from one, two or four of them on, or never.
    stretch_min = (1, 2, 4, 1 << 30)[seed % 4]
    settled = 0
    calls = 0
    real = narrow.skeletons

    def counted(a: str, b: str, levels: int, *rest: Any) -> Any:
        nonlocal settled, calls
        calls += 1
        got = real(a, b, levels, *rest)
        settled += got is not None
        return got

    monkeypatch.setattr(pairing, "skeletons", counted)
    for case in range(60):
        doc = _document(rng)
        edited = doc
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            edited = _edit(rng, edited)
        before, after = _answer(_text(rng, doc)), _answer(_text(rng, edited))
        options = rng.choice(OPTIONS)
        narrowed, full = _both_ways(before, after, options, stretch_min=stretch_min, **sizes)
        assert narrowed == full, (seed, case, options)
    # The narrowing did the work in most cases (it gives up on a pair it cannot settle).
    assert calls > 50 and settled > calls // 2, (settled, calls)


def test_one_changed_leaf_in_a_long_list_is_read_from_the_skeletons() -> None:
    records = [{"id": i, "name": f"item-{i}", "score": i % 7} for i in range(2000)]
    a = json.dumps({"records": records}, separators=(",", ":"))
    records[1000]["score"] = -1
    b = json.dumps({"records": records}, separators=(",", ":"))
    skel_a, skel_b = skeletons(a, b, 100, Limits())  # type: ignore[misc]
    items_a, items_b = skel_a["records"], skel_b["records"]
    # The records before and after the changed one: one Stretch each, the same on both sides.
    assert len(items_a) == len(items_b) == 3
    assert items_a[0] is items_b[0] and items_a[2] is items_b[2]
    assert [items_a[0].count, items_a[2].count] == [1000, 999]
    assert items_a[1]["score"] == 6 and items_b[1]["score"] == -1
    assert items_a[0].items()[5].load() == {"id": 5, "name": "item-5", "score": 5}
    assert items_a[0].items() is items_b[0].items()  # read item by item once, for both sides
    # Compared, the two named lists are their changed record alone on each side.
    before, after = pairing.normalize_pair(_answer(a), _answer(b), _at())
    named_a = before["result"]["content"][0]["text"]["{json}"]["records"]
    named_b = after["result"]["content"][0]["text"]["{json}"]["records"]
    assert isinstance(named_a, normalize.Keyed) and list(named_a) == list(named_b) == ["item-1000"]
    assert compare(_answer(a), _answer(b), _at()) == (
        compare.__globals__["Finding"](
            "value-change",
            "breaking",
            "$.result.content[0].text{json}.records[name=item-1000].score",
            "value changed: 6 -> -1",
            before=6,
            after=-1,
            rule="value-changed",
        ),
    )


@pytest.mark.parametrize(
    ("name", "settled"),
    [
        ("item-1000-new", True),  # a name of its own: compared as the changed record alone
        ("item-5", False),  # the name of a record in the first stretch: no longer a named list
        ("item-1999", False),  # ... in the last stretch
        ("2026-11-30T10:00:00Z", True),  # a name the normaliser masks, once in the list
    ],
)
def test_a_renamed_record_between_stretches_is_compared_as_the_full_parse_compares_it(
    monkeypatch: pytest.MonkeyPatch, name: str, settled: bool
) -> None:
    records = [{"name": f"item-{i}", "score": i % 7} for i in range(2000)]
    a = json.dumps({"records": records}, separators=(",", ":"))
    records[1000]["name"] = name
    b = json.dumps({"records": records}, separators=(",", ":"))
    got: list[Any] = []
    real = pairing._Pairer.stretched

    def counted(self: Any, x: Any, y: Any, depth: int) -> Any:
        got.append(real(self, x, y, depth))
        return got[-1]

    monkeypatch.setattr(pairing._Pairer, "stretched", counted)
    for options in (CompareOptions(), CompareOptions(allow_reorder=True), CompareOptions(ignore_keys=("score",))):
        got.clear()
        narrowed, full = _both_ways(_answer(a), _answer(b), options)
        assert narrowed == full and narrowed, (name, options)
        assert [x is not None for x in got] == [settled], (name, options)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("[1.5,2]", "[1.25,2]"),  # a number's end needs a character of lookahead
        ("[12,3]", "[123]"),
        ('{"a":1,"a":2}', '{"a":1,"a":3}'),  # a repeated key: json keeps the last one
        ('{"a":1}', '{"a":1} '),  # not one JSON text on one side
        ('{"a":[1,2,]}', '{"a":[1,3,]}'),  # not JSON at all
        ("[" + "9" * 5000 + "]", "[" + "9" * 4999 + "8]"),  # a number too long for int()
        ('{"a":"x"}', '["a","x"]'),
    ],
)
def test_texts_the_narrowing_cannot_settle_compare_as_before(monkeypatch: pytest.MonkeyPatch, a: str, b: str) -> None:
    narrowed, full = _both_ways(_answer(a), _answer(b), CompareOptions())
    assert narrowed == full


def test_common_prefix_and_suffix() -> None:
    assert common_prefix("abcdef", "abcxef") == 3
    assert common_prefix("abc", "abcd") == 3
    assert common_suffix("abcdef", "abcxef", 3) == 2
    assert common_suffix("xyz", "xyz", 3) == 3
    assert common_suffix("ab" * 1000 + "Q" + "c" * 777, "ab" * 1000 + "R" + "c" * 777, 2000) == 777


def test_common_prefix_and_suffix_are_the_naive_ones_at_every_window_size() -> None:
    def naive_prefix(a: str, b: str) -> int:
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    def naive_suffix(a: str, b: str, limit: int) -> int:
        n = 0
        while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
            n += 1
        return n

    rng = random.Random(5)
    for window in (1, 2, 3, 7, 64, 1 << 18):
        for _ in range(300):
            base = "".join(rng.choice("ab") for _ in range(rng.randrange(0, 120)))
            other = list(base)
            for _ in range(rng.randrange(0, 3)):
                if other:
                    other[rng.randrange(len(other))] = rng.choice("abc")
            b = "".join(other) + "".join(rng.choice("ab") for _ in range(rng.randrange(0, 3)))
            p = common_prefix(base, b, window)
            assert p == naive_prefix(base, b), (window, base, b)
            limit = min(len(base), len(b)) - p
            assert common_suffix(base, b, limit, window) == naive_suffix(base, b, limit), (window, base, b)


def _shape(value: Any, seen: dict[int, int]) -> Any:
    """``value`` written out with each ``Same`` named by the order it was first met in: two
    normalised pairs with the same shape share the same subtrees at the same places."""
    if type(value) is normalize.Same:
        return ("same", seen.setdefault(id(value), len(seen)), normalize.canonical(value.value()))
    if isinstance(value, dict):
        return (type(value).__name__, [(k, _shape(v, seen)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_shape(v, seen) for v in value])
    return ("leaf", normalize.canonical(value))


@pytest.mark.parametrize("seed", range(6))
def test_shared_items_of_a_skeleton_list_are_taken_a_stretch_at_a_time_as_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Under no ignore rule the shared items of a list are made in one pass and taken a stretch
    at a time; an ignore rule that matches nothing sends the same pair through the walk one item
    at a time. Both make the same items, sharing the same subtrees, on random documents and edits
    (records, scalars and arrays in runs, lists of other lengths)."""
    rng = random.Random(100 + seed)
    # A Slice per shared item, as the walk takes them; runs of one to a few items.
    limits = {"narrow_min_chars": 0, "stretch_min": 1 << 30, "run_chars": (60, 250, 700)[seed % 3]}
    nothing = _at(CompareOptions(ignore_paths=("result.content[].text.nothing",)), **limits)
    for _ in range(40):
        doc = _document(rng)
        if rng.random() < 0.3:
            doc = [rng.choice([1, "x", [1, 2], None, {"a": 1}]) for _ in range(rng.randint(1, 40))]
        edited = _edit(rng, doc)
        before, after = _answer(_text(rng, doc)), _answer(_text(rng, edited))
        fast = pairing.normalize_pair(before, after, _at(**limits))
        slow = pairing.normalize_pair(before, after, nothing)
        seen_fast: dict[int, int] = {}
        seen_slow: dict[int, int] = {}
        assert [_shape(x, seen_fast) for x in fast] == [_shape(x, seen_slow) for x in slow]


def test_comparisons_in_several_threads_find_what_each_finds_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # The run of shared items kept parsed (``Slice.load``) belongs to one narrowing (its
    # ``_Source``): no two comparisons share it. Safe by construction; this checks the whole
    # results under a switch every microsecond (shared state would race in a window of a few
    # bytecodes, which such a run seldom hits: it is no proof of that).
    import sys
    import threading

    rng = random.Random(7)
    pairs = []
    for _ in range(16):
        # A long list of scalars: every shared one is read through the run it is in (a shared
        # record is not: it stays one ``Same``, and the list is lined up around it).
        doc = {"records": [_leaf(rng) for i in range(rng.randint(100, 300))]}
        edited = json.loads(json.dumps(doc))
        edited["records"][rng.randrange(len(doc["records"]))] = "changed"
        text = json.dumps(doc, separators=(",", ":"))
        # Many short runs: the kept run changes often.
        options = _at(rng.choice([OPTIONS[0], OPTIONS[1], OPTIONS[3]]), narrow_min_chars=0, run_chars=120)
        pairs.append((_answer(text), _answer(json.dumps(edited, separators=(",", ":"))), options))
    alone = [compare(before, after, options) for before, after, options in pairs]
    loads = 0
    real_load = narrow.Slice.load

    def counted(self: narrow.Slice) -> Any:
        nonlocal loads
        loads += self.index >= 0
        return real_load(self)

    monkeypatch.setattr(narrow.Slice, "load", counted)
    found: dict[tuple[int, int], Any] = {}
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        order = list(range(len(pairs)))
        random.Random(worker).shuffle(order)
        try:
            for _ in range(3):
                for i in order:
                    before, after, options = pairs[i]
                    got = compare(before, after, options)
                    if found.setdefault((worker, i), got) != got:
                        raise AssertionError(("not repeatable", worker, i))
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        sys.setswitchinterval(interval)
    assert not any(t.is_alive() for t in threads)
    assert not errors, errors
    assert loads > 100, loads  # shared items were read through the kept run, from every thread
    for (worker, i), got in found.items():
        assert got == alone[i], (worker, i)


def _loaded(value: Any) -> Any:
    """A skeleton with every ``Slice`` and ``Stretch`` read: the value it stands for."""
    if isinstance(value, narrow.Slice):
        return value.load()
    if isinstance(value, dict):
        return {k: _loaded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        out: list[Any] = []
        for v in value:
            if isinstance(v, narrow.Stretch):
                out.extend(item for values in v.values() for item in values)
            else:
                out.append(_loaded(v))
        return out
    return value


@pytest.mark.parametrize("seed", range(8))
def test_a_recorded_text_read_ahead_is_narrowed_as_one_read_then(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """The runs of a recorded text read ahead (all of them, or the first few steps: the answer
    came early) are the runs narrowing it against the live text would read with the same window:
    skeletons and findings are those of the narrowing alone, on random documents, edits and
    option sets, with runs of a few items and windows of a few characters; the difference ending
    mid-run is read past item by item, and the runs read ahead are taken again from the next."""
    rng = random.Random(300 + seed)
    limits = Limits(**_small_sizes(seed, (60, 250, 700, 3000)))
    fresh = 0  # runs a narrowing read itself
    real_run = narrow._run_values
    ahead: narrow.ReadAhead | None = None

    def counted(source: Any, at: int, limit: int) -> Any:
        nonlocal fresh
        # Not counted: the one run from the difference to the next run read ahead (read item by
        # item before, the same bytes either way).
        if ahead is None or limit - 1 not in ahead.runs:
            fresh += 1
        return real_run(source, at, limit)

    monkeypatch.setattr(narrow, "_run_values", counted)
    alone_runs = ahead_runs = 0
    for case in range(40):
        doc = _document(rng)
        if rng.random() < 0.5 and isinstance(doc, dict):
            doc["records"] = [_record(rng, i, 2) for i in range(rng.randint(50, 200))]
        edited = doc
        for _ in range(rng.choice([1, 1, 2, 3])):
            edited = _edit(rng, edited)
        text_a, text_b = _text(rng, doc), _text(rng, edited)
        before, after = _answer(text_a), _answer(text_b)
        options = replace(rng.choice(OPTIONS), limits=replace(limits, narrow_min_chars=0))
        fresh = 0
        ahead = None
        alone = compare(before, after, options), _loaded(skeletons(text_a, text_b, 100, limits))
        steps = rng.choice([0, 1, 5, 1 << 30])
        whole = steps == 1 << 30
        alone_runs += fresh if whole else 0
        ahead = narrow.ReadAhead(text_a, limits)
        for _ in range(steps):
            if not ahead.step():
                break
        try:
            fresh = 0
            read_ahead = (
                compare(before, after, options, _read_ahead(before, ahead)),
                _loaded(skeletons(text_a, text_b, 100, limits, ahead=ahead)),
            )
            ahead_runs += fresh if whole else 0
        finally:
            ahead.close()
        assert read_ahead[0] == alone[0], (seed, case, options, steps)
        assert json.dumps(read_ahead[1]) == json.dumps(alone[1]), (seed, case, options, steps)  # True is not 1
    # Read ahead whole, a text leaves its narrowing few runs to read: those near the difference.
    assert ahead_runs < alone_runs // 2, (ahead_runs, alone_runs)


def test_a_read_ahead_is_taken_for_its_text_only_and_stops_when_closed() -> None:
    text = json.dumps({"records": [{"name": f"item-{i}", "v": i} for i in range(3000)]})
    copy = "".join(text)  # an equal text, another object
    assert copy == text and copy is not text
    ahead = narrow.ReadAhead(text, Limits())
    while ahead.step():
        pass
    assert len(ahead.runs) > 1 and list(ahead.starts) == sorted(ahead.runs)
    edited = text.replace("item-7", "item-8")
    assert narrow._Narrower(text, edited, 10, Limits(stretch_min=3), None, ahead).ahead is ahead
    assert narrow._Narrower(copy, edited, 10, Limits(), None, ahead).ahead is None
    # Read with other sizes, it would find other runs: not taken either.
    assert narrow._Narrower(text, edited, 10, Limits(run_chars=700), None, ahead).ahead is None
    assert narrow._Narrower(text, edited, 10, Limits(narrow_windows=(3, 7)), None, ahead).ahead is None
    prepared = _read_ahead({}, ahead)
    assert prepared.ahead_of(text) is ahead and prepared.ahead_of(copy) is None
    prepared.close()
    assert prepared.ahead_of(text) is None
    assert not ahead.step()  # closed: nothing more is read
    # What is worth reading ahead: the longest text that opens as JSON, in a few hundred values.
    least = Limits().read_ahead_chars
    long = "[" + "1," * least + "1]"
    assert narrow.long_json_text({"result": {"content": [{"type": "text", "text": long}]}}, least) is long
    assert narrow.long_json_text({"a": long[:-2], "b": ["x" * (2 * least), long]}, least) is long
    assert narrow.long_json_text({"a": "[" + "1," * 10 + "1]", "b": " " + long}, least) is None
    assert narrow.long_json_text([[[[list(range(1000))]]], long], least) is long


# Names a named list's records may have: plain ones, ones the normaliser masks (a timestamp, a
# UUID, a date, hex, a path, a token, a long one), ones that hold or look like JSON, a NUL before
# a JSON opener, non-ASCII, and names that are no string at all.
NAMES = [
    "item-3",
    "",
    "ok",
    "t3",
    "Ünïcode-é",
    "x{y}",
    "a,b]",
    "2026-11-30T10:00:00Z",
    "2026-11-30",
    "550e8400-e29b-41d4-a716-446655440000",
    "Mon 3 Jan",
    "3 Jan 2026",
    "0xdeadbeef",
    "a/b",
    "Ab3dE9fG2hJ7kL",
    "a name that is longer than twenty",
    '{"a": 1}',
    "[1, 2]",
    " [1]",
    "\t{}",
    "{not json",
    "a\x00{b",
    1,
    1.0,
    True,
    None,
    {"first": "x"},
]


def _masked_name(rng: random.Random) -> str:
    """A name the normaliser masks: distinct ones mask alike (two records are no longer told
    apart by name), where taken as they are they name each its own record."""
    return rng.choice(
        [
            lambda: f"2026-11-{rng.randint(1, 28):02d}T10:{rng.randint(0, 59):02d}:00Z",
            lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            lambda: f"{rng.randint(1, 28)} Jan 2026",
            lambda: f"0x{rng.getrandbits(48):012x}",
        ]
    )()


def _named_list(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """Records named mostly ``item-<i>``, some by a name of ``NAMES`` or a masked one (under
    "name" or "uri"), in some lists a few by none or twice."""
    out: list[dict[str, Any]] = []
    odd = rng.choice([0.0, 0.02, 0.2])  # how often a name is an odd one
    masked = rng.random() < 0.5  # the odd names are all masked ones
    flawed = 0.01 if rng.random() < 0.3 else 0.0  # how often a name is missing, or twice
    for i in range(count):
        rec: dict[str, Any] = {"name": f"item-{i}", "v": _leaf(rng)}
        roll = rng.random()
        if roll < odd:
            rec["name"] = _masked_name(rng) if masked else rng.choice(NAMES)
        elif roll < odd + flawed:
            del rec["name"]
        elif roll < odd + 2 * flawed:
            rec["name"] = f"item-{max(0, i - 1)}"  # a duplicate
        if rng.random() < 0.05:
            rec["uri"] = rng.choice(NAMES[:16])
        out.append(rec)
    return out


@pytest.mark.parametrize("seed", range(8))
def test_named_lists_with_stretches_compare_as_read_item_by_item(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """A long named list with shared stretches is compared without an object per shared record
    (``pairing._Pairer.stretched``): on named lists with every kind of name (masked ones that
    name two records alike, JSON ones, missing and repeated ones, under "name" or "uri"), moved,
    renamed, inserted and removed records, 1-3 edits, every option set, runs of a few items,
    stretches from one item on, with a read-ahead of the recorded text (whole, a few steps, or
    none), the findings are exactly those of the full parse; and the stretched path settles most
    of them (a list it cannot settle so is read item by item)."""
    rng = random.Random(900 + seed)
    run_chars = (60, 250, 700, 3000)[seed % 4]
    stretch_min = (1, 3, 16)[seed % 3]
    limits = Limits(narrow_min_chars=0, stretch_min=stretch_min, run_chars=run_chars)
    settled = tried = 0
    real = pairing._Pairer.stretched

    def counted(self: Any, a: Any, b: Any, depth: int) -> Any:
        nonlocal settled, tried
        got = real(self, a, b, depth)
        tried += 1
        settled += got is not None
        return got

    monkeypatch.setattr(pairing._Pairer, "stretched", counted)
    for case in range(30):
        clean = case % 3 == 0  # every record named once, plainly, and a value changed or two
        if clean:
            records = [{"name": f"item-{i}", "v": _leaf(rng)} for i in range(rng.randint(40, 300))]
        else:
            records = _named_list(rng, rng.randint(40, 300))
        if rng.random() < 0.1:
            records[rng.randrange(len(records))]["name"] = '{"a": 1}'  # a name that holds JSON
        doc: Any = {"records": records, "meta": {"count": len(records)}} if rng.random() < 0.8 else records
        edited = json.loads(json.dumps(doc))
        for _ in range(1 if clean else rng.choice([1, 1, 2, 3])):
            if clean:
                changed = edited["records"] if isinstance(edited, dict) else edited
                changed[rng.randrange(len(changed))]["v"] = rng.choice([-7, "changed", [1], None])
            else:
                edited = _edit(rng, edited)
        if clean:  # written alike, as a server writes its answers
            style = rng.random()
            text_a, text_b = _text(random.Random(style), doc), _text(random.Random(style), edited)
        else:
            text_a, text_b = _text(rng, doc), _text(rng, edited)
        before, after = _answer(text_a), _answer(text_b)
        options = rng.choice(OPTIONS[:3] if clean else OPTIONS)  # the first three: no ignore path
        full = compare(before, after, _at(options, narrow_min_chars=FULL))
        # Read ahead as the replay reads it (its runs' names kept), or only where runs end, or not.
        mark = normalize.run_names if rng.random() < 0.7 else None
        ahead = narrow.ReadAhead(text_a, limits, mark) if rng.random() < 0.6 else None
        for _ in range(rng.choice([1, 5, 1 << 30]) if ahead else 0):
            if not ahead.step():  # type: ignore[union-attr]
                break
        try:
            narrowed = compare(before, after, replace(options, limits=limits), _read_ahead(before, ahead))
        finally:
            if ahead is not None:
                ahead.close()
        assert narrowed == full, (seed, case, options)
    assert settled >= 6, (settled, tried)


def test_names_read_ahead_are_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text read ahead whole with its runs named (``normalize.run_names``) is compared without
    reading those names again: only the items outside runs are named in the comparison; a name
    that is not its own normal form (a date) leaves its run to be named there, as it is."""
    options = _at(narrow_min_chars=0, run_chars=700)
    named: list[int] = []
    real = normalize.Normalizer.raw_identities

    def counted(self: Any, values: list[Any], field: str, depth: int) -> Any:
        named.append(len(values))
        return real(self, values, field, depth)

    monkeypatch.setattr(normalize.Normalizer, "raw_identities", counted)
    sums: list[int] = []
    for dated in (False, True):
        records = [{"name": f"item-{i}", "score": i % 7} for i in range(3000)]
        if dated:
            records[100]["name"] = "2026-11-30T10:00:00Z"
        text_a = json.dumps({"records": records}, separators=(",", ":"))
        records[1500]["score"] = -1
        text_b = json.dumps({"records": records}, separators=(",", ":"))
        full = compare(_answer(text_a), _answer(text_b), options)
        ahead = narrow.ReadAhead(text_a, options.limits, normalize.run_names)
        while ahead.step():
            pass
        named.clear()
        try:
            assert compare(_answer(text_a), _answer(text_b), options, _read_ahead(_answer(text_a), ahead)) == full
        finally:
            ahead.close()
        runs = sum(1 for marks in ahead.marks.values() if "name" in marks)
        assert runs > 50, runs
        sums.append(sum(named))
    # Of 3,000 records, the few near the difference (read with other windows than ahead), and
    # with a date for a name, its run too.
    assert sums[0] < 150 and sums[0] < sums[1] < sums[0] + 100, sums


def test_a_text_read_ahead_is_narrowed_without_windows_over_what_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Narrowing a text read ahead whole tries no window over a container the read-ahead read to
    its end past the difference (it is entered at once), and reads the items from the difference
    to the next run read ahead as one run, not item by item: a handful of windows in all, where
    the same narrowing without the read-ahead tries hundreds; the skeletons are the same."""
    limits = Limits(run_chars=4096)
    records = [{"name": f"item-{i}", "score": i % 7, "tags": ["a", "b"]} for i in range(3000)]
    doc = {"head": {"n": 1}, "records": records, "meta": {"count": 3000}}
    text_a = json.dumps(doc, separators=(",", ":"))
    outer = text_a.index("[")  # the records, which hold the difference
    windows: list[int] = []
    real_fit = narrow._fit

    def fit(text: str, at: int, limit: int, sizes: Any) -> Any:
        windows.append(at)
        return real_fit(text, at, limit, sizes)

    for changed in (1, 1234, 2999):
        edited = json.loads(text_a)
        edited["records"][changed]["score"] = -1
        text_b = json.dumps(edited, separators=(",", ":"))
        alone = _loaded(skeletons(text_a, text_b, 100, limits))
        ahead = narrow.ReadAhead(text_a, limits)
        while ahead.step():
            pass
        assert ahead.ends[outer] == text_a.rindex("]") + 1
        monkeypatch.setattr(narrow, "_fit", fit)
        windows.clear()
        try:
            read = _loaded(skeletons(text_a, text_b, 100, limits, ahead=ahead))
        finally:
            monkeypatch.setattr(narrow, "_fit", real_fit)
            ahead.close()
        assert json.dumps(read) == json.dumps(alone), changed
        assert outer not in windows, changed
        assert len(windows) < 40, (changed, len(windows))


def test_a_named_list_held_as_its_changed_records_renders_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``PartKeyed`` (a named list held as the records outside its shared stretches) reads
    those back in wherever it is needed whole: materialised, and rendered."""
    from mcp_replay_action.compare.render import render as _render

    records = [{"name": f"item-{i}", "score": i % 7} for i in range(600)]
    a = json.dumps({"records": records}, separators=(",", ":"))
    records[300]["score"] = -1
    b = json.dumps({"records": records}, separators=(",", ":"))
    before, after = pairing.normalize_pair(_answer(a), _answer(b), _at(narrow_min_chars=0))
    part = before["result"]["content"][0]["text"]["{json}"]["records"]
    assert type(part) is normalize.PartKeyed and list(part) == ["item-300"]
    whole = normalize.normalize(_answer(a))["result"]["content"][0]["text"]["{json}"]["records"]
    assert normalize.materialize(part) == whole and list(normalize.materialize(part)) == list(whole)
    assert _render(part, 10**6) == _render(whole, 10**6)
