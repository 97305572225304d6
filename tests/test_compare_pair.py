"""Both answers normalised at once (``normalize_pair``): what the two share is left out as one
``Same`` object, and comparing the pair must find exactly what comparing the two full normal
forms finds, path for path and word for word."""

from __future__ import annotations

import copy
import inspect
import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_replay_action.compare import noise
from mcp_replay_action.compare.engine import (
    CompareOptions,
    compare,
    compare_normal,
)
from mcp_replay_action.compare.normalize import Same, canonical, materialize, normalize
from mcp_replay_action.compare.pairing import normalize_pair, strictly_equal
from mcp_replay_action.model.results import Finding
from profiles import examples

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]


def assert_pair_is_exact(a: Any, b: Any, options: CompareOptions | None = None) -> tuple[Finding, ...]:
    """The pair walk against the full walk: same normal forms, same findings."""
    options = options or CompareOptions()
    na, nb = normalize_pair(copy.deepcopy(a), copy.deepcopy(b), options)
    full_a, full_b = normalize(a, options), normalize(b, options)
    assert canonical(materialize(na)) == canonical(full_a)
    assert canonical(materialize(nb)) == canonical(full_b)
    paired = compare_normal(na, nb, options)
    assert paired == compare_normal(full_a, full_b, options)
    return paired


def records(n: int, **change: Any) -> list[dict[str, Any]]:
    out = [
        {"id": i, "name": f"item-{i}", "score": i % 7, "tags": ["a", "b"], "owner": {"team": f"t{i % 3}"}}
        for i in range(n)
    ]
    for index, fields in change.items():
        out[int(index.lstrip("_"))].update(fields)
    return out


def answer(doc: Any) -> dict[str, Any]:
    """A tool answer holding ``doc`` as JSON text, as a big answer arrives."""
    return {"result": {"content": [{"type": "text", "text": json.dumps(doc, separators=(",", ":"))}]}}


def test_changed_leaf_deep_in_a_named_list_leaves_every_equal_record_out() -> None:
    before, after = answer({"records": records(300)}), answer({"records": records(300, _150={"score": -1})})
    na, nb = normalize_pair(before, after)
    keyed_a = na["result"]["content"][0]["text"]["{json}"]["records"]
    keyed_b = nb["result"]["content"][0]["text"]["{json}"]["records"]
    shared = [k for k in keyed_a if type(keyed_a[k]) is Same and keyed_a[k] is keyed_b[k]]
    assert len(shared) == 299  # all but the changed record, never normalised
    (finding,) = assert_pair_is_exact(before, after)
    assert finding.path == "$.result.content[0].text{json}.records[name=item-150].score"
    assert finding.message == "value changed: 3 -> -1"
    assert compare(before, after) == (finding,)


def test_key_order_float_spelling_and_unicode_escapes_are_no_difference() -> None:
    doc = {"records": records(50), "ratio": 1.0, "word": "café"}
    same = json.loads(json.dumps(doc))
    same["records"][10] = dict(reversed(list(same["records"][10].items())))  # keys in another order
    text = json.dumps(same, ensure_ascii=True)  # é as \\u00e9
    before = answer(doc)
    after = {"result": {"content": [{"type": "text", "text": text.replace("1.0", "1")}]}}
    assert "\\u00e9" in after["result"]["content"][0]["text"]
    assert assert_pair_is_exact(before, after) == ()
    assert compare(before, after) == ()


def test_boolean_for_number_inside_an_equal_looking_record_is_found() -> None:
    # True == 1 to Python, so ``==`` alone would take these records as shared: the walk must
    # take only records equal beyond it (``strictly_equal``) as one ``Same``.
    before = answer({"records": records(20, _5={"score": 1})})
    after = answer({"records": records(20, _5={"score": True})})
    (finding,) = assert_pair_is_exact(before, after)
    assert finding.path.endswith("records[name=item-5].score") and "type changed" in finding.message


def test_only_subtrees_equal_beyond_equality_are_shared() -> None:
    assert strictly_equal({"a": [1, "x"], "b": None}, {"a": [1, "x"], "b": None})
    assert not strictly_equal({"a": [1]}, {"a": [True]})  # == forgives it, the normal forms do not
    assert not strictly_equal({"a": 1}, {"a": 1.0})
    assert not strictly_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})  # walked into, not shared whole
    before = answer({"records": records(20, _5={"score": 1})})
    after = answer({"records": records(20, _5={"score": True})})
    na, nb = normalize_pair(before, after, CompareOptions())
    items_a = na["result"]["content"][0]["text"]["{json}"]["records"]
    items_b = nb["result"]["content"][0]["text"]["{json}"]["records"]
    assert items_a["item-4"] is items_b["item-4"] and type(items_a["item-4"]) is Same
    assert items_a["item-5"] is not items_b["item-5"]


def test_int_against_float_under_a_minted_key_keeps_its_meaning() -> None:
    # An integer under a minted key is masked, a float is not: 1 == 1.0 must not share them.
    before = {"result": {"items": [{"name": "a", "taskId": 1000000000}, {"name": "b", "x": 1}]}}
    after = {"result": {"items": [{"name": "a", "taskId": 1000000000.0}, {"name": "b", "x": 1}]}}
    assert_pair_is_exact(before, after)


def test_ignored_path_inside_a_big_answer() -> None:
    options = CompareOptions(ignore_paths=("result.content[].text.records[].score",))
    before = answer({"records": records(200)})
    after = answer({"records": records(200, _7={"score": 99}, _150={"owner": {"team": "other"}})})
    (finding,) = assert_pair_is_exact(before, after, options)
    assert finding.path == "$.result.content[0].text{json}.records[name=item-150].owner.team"
    only_ignored = answer({"records": records(200, _7={"score": 99})})
    assert assert_pair_is_exact(before, only_ignored, options) == ()
    assert compare(before, only_ignored, options) == ()


def test_ignored_index_and_identity_paths_inside_a_named_list() -> None:
    for path in ("result.content[0].text.records[3]", "result.content[].text.records[name=item-3]"):
        options = CompareOptions(ignore_paths=(path,))
        before = answer({"records": records(30)})
        after = answer({"records": records(30, _3={"score": 50})})
        assert assert_pair_is_exact(before, after, options) == ()


def test_items_renamed_in_place_are_compared_with_their_namesakes() -> None:
    # Index 1 and 2 swap names: walked as pairs by place, lined up by name. Their shared parts
    # must not meet strangers as "the same".
    before = answer({"records": records(6)})
    swapped = records(6)
    swapped[1], swapped[2] = swapped[2], swapped[1]
    after = answer({"records": swapped})
    findings = assert_pair_is_exact(before, after)
    assert [f.kind for f in findings] == ["ordering-change"]
    renamed = records(6, _2={"name": "item-new", "owner": {"team": "t1"}})
    findings = assert_pair_is_exact(before, answer({"records": renamed}))
    assert {f.message for f in findings} == {"item 'item-2' removed", "item 'item-new' added"}


def test_plain_lists_line_up_by_content_as_before() -> None:
    a_item, b_item = {"k": [1, 2], "v": "x"}, {"k": [3], "v": "y"}
    before = {"result": {"rows": [a_item, b_item]}}
    after = {"result": {"rows": [b_item, b_item]}}  # not the same as "row 0 changed"
    assert_pair_is_exact(before, after)
    before = {"result": {"rows": [{"id": i, "v": [i, i]} for i in range(40)]}}
    after = {"result": {"rows": [{"id": i, "v": [i, i]} for i in range(40) if i != 5]}}
    findings = assert_pair_is_exact(before, after)
    assert [f.message for f in findings] == ["list item removed"]


def test_required_stays_whole_when_a_required_argument_is_added() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]}
    tool = {"name": "t", "inputSchema": schema}
    grown = copy.deepcopy(tool)
    grown["inputSchema"]["properties"]["b"] = {"type": "string"}
    findings = assert_pair_is_exact({"result": {"tools": [tool]}}, {"result": {"tools": [grown]}})
    assert [f.message for f in findings] == ["required argument 'b' added"]


def test_tool_error_flip_renders_shared_content() -> None:
    content = [{"type": "text", "text": json.dumps({"records": records(10)})}]
    before = {"result": {"content": content}}
    after = {"result": {"content": content, "isError": True}}
    (finding,) = assert_pair_is_exact(before, after)
    assert finding.kind == "error-status-change" and "item-0" in str(finding.before)


def test_masked_values_in_shared_and_changed_records() -> None:
    before = answer({"records": [{"name": f"r{i}", "at": "2026-11-30T10:00:00Z"} for i in range(30)]})
    after = answer(
        {
            "records": [
                {"name": f"r{i}", "at": "2026-11-30T11:00:00Z" if i == 4 else "2026-11-30T10:00:00Z"} for i in range(30)
            ]
        }
    )
    assert assert_pair_is_exact(before, after) == ()


def test_noise_rules_still_explain_a_change_in_a_big_answer() -> None:
    before = answer({"records": records(100, _40={"owner": {"team": "run 1"}})})
    live_a = answer({"records": records(100, _40={"owner": {"team": "run 2"}})})
    live_b = answer({"records": records(100, _40={"owner": {"team": "run 3"}})})
    findings = compare(before, live_a)
    rules = noise.learn([live_a, live_b])
    kept, ignored = noise.split(findings, rules, before)
    assert kept == () and [f.path for f in ignored] == [
        "$.result.content[0].text{json}.records[name=item-40].owner.team"
    ]


_LEAVES = st.one_of(
    st.sampled_from([0, 1, 1.0, True, False, None, "", "a", "item-1", "2026-11-30T10:00:00Z", '{"x": 1}', "[1, 2]"]),
    st.integers(-3, 3),
)
_KEYS = st.sampled_from(["name", "uri", "id", "x", "y", "required", "taskId", "content", "text"])
_TREES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=25,
)


def _mutate(value: Any, data: st.DataObject) -> Any:
    """``value`` with a few random changes deep inside (most of it left as it was)."""
    if data.draw(st.integers(0, 9)) == 0:
        return data.draw(_TREES)
    if isinstance(value, dict):
        out = {k: _mutate(v, data) for k, v in value.items()}
        if out and data.draw(st.integers(0, 6)) == 0:
            out.pop(data.draw(st.sampled_from(sorted(out))))
        return out
    if isinstance(value, list):
        out_list = [_mutate(v, data) for v in value]
        if len(out_list) > 1 and data.draw(st.integers(0, 5)) == 0:
            out_list.reverse()
        return out_list
    return value


@settings(max_examples=examples(300), deadline=None)
@given(st.data(), _TREES, st.booleans())
def test_pair_walk_finds_what_the_full_walk_finds(data: st.DataObject, tree: Any, reorder: bool) -> None:
    other = _mutate(tree, data)
    wrapped = data.draw(st.booleans())
    a, b = ({"result": tree}, {"result": other}) if not wrapped else (answer(tree), answer(other))
    options = CompareOptions(allow_reorder=reorder)
    assert_pair_is_exact(a, b, options)
    named = {"result": {"tools": [{"name": f"t{i}", "v": tree} for i in range(3)]}}
    renamed = {"result": {"tools": [{"name": f"t{i}", "v": other if i == 1 else tree} for i in range(3)]}}
    assert_pair_is_exact(named, renamed, options)


def test_items_renamed_in_place_keep_their_own_contents_under_allow_reorder() -> None:
    # Walked by place, lined up by name: record 0's and record 1's shared tags must not stand
    # in for each other, or the two sides would read as equal once sorted by name.
    before = {"result": {"items": [{"name": "n1", "tags": [1], "v": 1}, {"name": "n2", "tags": [2], "v": 2}]}}
    after = {"result": {"items": [{"name": "n2", "tags": [1], "v": 2}, {"name": "n1", "tags": [2], "v": 1}]}}
    findings = assert_pair_is_exact(before, after, CompareOptions(allow_reorder=True))
    assert {f.path for f in findings} == {"$.result.items[name=n1].tags[0]", "$.result.items[name=n2].tags[0]"}


_SHORT_TEXT = st.text(
    alphabet=st.sampled_from("0123456789abcdefxyzADFJMNOSTU -_:/.,+()T"),
    max_size=19,
) | st.sampled_from(
    [
        "Monday",
        "sunday",
        "Nov 30",
        "12:30",
        "1.2.2026",
        "2026-11-30",
        "0x1f2e3d",
        "/tmp/x1",
        "a1b2c3d4",
        "datetime.date(2026, 1, 1)",
    ]
)


@settings(max_examples=examples(3000), deadline=None)
@given(_SHORT_TEXT)
def test_short_text_settled_by_one_search_is_what_masking_makes_of_it(text: str) -> None:
    from mcp_replay_action.compare.masks import masked_string, plain_string
    from mcp_replay_action.compare.normalize import reference_days

    days = reference_days()
    assert plain_string(text, days) == masked_string.__wrapped__(text, days)
    assert plain_string(text) == masked_string.__wrapped__(text)


def test_names_that_mask_alike_are_no_identity_in_a_long_shared_list() -> None:
    """A long list of records shared by both sides takes its names by a shortcut; names that
    normalise alike (dated runs), hold JSON, or sit under an ignore rule still decide exactly as
    the full walk does."""
    dated = [{"name": f"run at 2026-11-{day:02d}T10:00:00Z", "n": day} for day in range(1, 29)]
    changed = copy.deepcopy(dated)
    changed[5]["n"] = -1
    assert assert_pair_is_exact({"result": dated}, {"result": changed})
    plain = [{"name": f"item-{i}", "n": i} for i in range(300)] + [{"name": '{"x": 1}', "n": 0}]
    moved = copy.deepcopy(plain)
    moved[150]["n"] = -1
    moved.append(moved.pop(10))
    for options in (CompareOptions(), CompareOptions(allow_reorder=True), CompareOptions(ignore_keys=["n"])):
        assert_pair_is_exact(answer(plain), answer(moved), options)


# -- one changed leaf, found without DeepDiff ---------------------------------------------------

_LEAF_KEYS = st.sampled_from(["name", "id", "x", "__typename", "required", "text", "content"])
_LEAF_TREES = st.recursive(
    _LEAVES | st.sampled_from([float("nan"), 2.5, "x" * 70, "line\nline"]),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_LEAF_KEYS, inner, max_size=4)),
    max_leaves=25,
)


def _one_leaf_changed(value: Any, data: st.DataObject) -> Any:
    """``value`` with one leaf replaced (or, now and then, a random subtree)."""
    if isinstance(value, dict) and value:
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: _one_leaf_changed(value[key], data)}
    if isinstance(value, list) and value:
        i = data.draw(st.integers(0, len(value) - 1))
        return [*value[:i], _one_leaf_changed(value[i], data), *value[i + 1 :]]
    return data.draw(_LEAF_TREES if data.draw(st.integers(0, 5)) == 0 else _LEAVES)


def _with_and_without_one_leaf(a: Any, b: Any, options: CompareOptions) -> tuple[Any, Any]:
    from dataclasses import replace

    from mcp_replay_action.values.limits import Limits

    fast = compare(a, b, replace(options, limits=Limits()))
    slow = compare(a, b, replace(options, limits=Limits(fast=False)))  # DeepDiff decides
    return fast, slow


@settings(max_examples=examples(400), deadline=None)
@given(st.data(), _LEAF_TREES, st.booleans(), st.booleans())
def test_one_changed_leaf_is_reported_as_deepdiff_reports_it(
    data: st.DataObject, tree: Any, reorder: bool, wrapped: bool
) -> None:
    other = _one_leaf_changed(tree, data) if data.draw(st.booleans()) else _mutate(tree, data)
    a, b = (answer(tree), answer(other)) if wrapped else ({"result": tree}, {"result": other})
    fast, slow = _with_and_without_one_leaf(a, b, CompareOptions(allow_reorder=reorder))
    assert fast == slow


def test_one_changed_leaf_in_random_documents_is_reported_as_deepdiff_reports_it() -> None:
    import random

    from mcp_replay_action.compare import engine as compare_module
    from test_narrow import OPTIONS, _answer, _document, _edit, _text

    rng = random.Random(11)
    used = 0
    real = compare_module.one_leaf

    def counted(a: Any, b: Any) -> Any:
        nonlocal used
        got = real(a, b)
        used += got is not None
        return got

    compare_module.one_leaf = counted  # type: ignore[assignment]
    try:
        for _ in range(300):
            doc = _document(rng)
            before, after = _answer(_text(rng, doc)), _answer(_text(rng, _edit(rng, doc)))
            fast, slow = _with_and_without_one_leaf(before, after, rng.choice(OPTIONS))
            assert fast == slow
    finally:
        compare_module.one_leaf = real
    assert used > 30  # the shortcut did the work in many cases


def test_same_canonical_is_canonical_equality() -> None:
    # compare's equality checks use same_canonical, which walks instead of writing both sides
    # out: it must say exactly what comparing the written forms says.
    import math
    import random

    from mcp_replay_action.compare.flips import body_of as _body
    from mcp_replay_action.compare.normalize import Keyed, canonical, normalize, same_canonical
    from test_narrow import OPTIONS, _answer, _document, _edit, _text

    def agree(a: Any, b: Any) -> None:
        assert same_canonical(a, b) == (canonical(a) == canonical(b)), (a, b)

    rng = random.Random(17)
    for _ in range(300):
        doc = _document(rng)
        before, after = _answer(_text(rng, doc)), _answer(_text(rng, _edit(rng, doc)))
        options = rng.choice(OPTIONS)
        agree(*normalize_pair(_body(before), _body(after), options))
        agree(normalize(_body(before), options), normalize(_body(after), options))
        agree(*normalize_pair(_body(before), _body(before), options))
    same = normalize_pair({"a": [{"x": 1}] * 3}, {"a": [{"x": 1}] * 3})
    for a, b in [
        (True, 1),
        (1, 1.0),
        (math.nan, math.nan),
        (0.0, -0.0),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        ({"a": 1}, {"b": 1}),
        ({"a": [1]}, {"a": [1], "b": None}),
        ({1: "x"}, {"1": "x"}),
        (Keyed("name", [("a", 1)]), {"a": 1}),
        ([1, [2, {"k": None}]], [1, [2, {"k": None}]]),
        ([1, 2], [1, 2, 3]),
        (same[0], "<same>"),
        (same[0], same[1]),
        ("x", ["x"]),
    ]:
        agree(a, b)
        agree(b, a)
    deep: Any = 1
    # Deeper than the walk goes, not deeper than json.dumps goes: both count against the recursion
    # limit from where they start, and a pytest-xdist worker starts a test deeper in its stack.
    room = sys.getrecursionlimit() - len(inspect.stack(0))
    for _ in range(room - 30):
        deep = [deep]
    agree(deep, [deep])
    agree(deep, json.loads(json.dumps(deep)))


# -- long named lists: the shortcuts over what both sides share ----------------------------------

_NAME_TEXT = st.text(
    alphabet=st.sampled_from("0123456789abcdefxyzADFJMNOSTU -_:/.,+()T\x00\u0663\u00e9"),
    max_size=22,
) | st.sampled_from(["item-1", "Monday", "0x1f2e3d", "/tmp/x1", "a1b2c3d4", "1-2", "\u0661-\u0662", "x" * 19])


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_NAME_TEXT, max_size=300), st.lists(st.tuples(st.integers(0, 10_000), _NAME_TEXT), max_size=5))
def test_many_names_at_once_are_each_what_plain_string_makes_of_it(
    names: list[str], planted: list[tuple[int, str]]
) -> None:
    """Joined, scanned as bytes and halved: exactly ``plain_string`` of each (a name that may be
    masked anywhere in a long stretch of plain ones, non-ASCII digits, NUL, 19 and 20 characters)."""
    from mcp_replay_action.compare.masks import plain_string, plain_strings
    from mcp_replay_action.compare.normalize import reference_days

    assert [
        plain_string(v) for v in ("12:30:45", "Monday", "/tmp/x1", "a1b2c3d4e5f6a7b8", "aB3kQ9z_mP2vL7_wR4tY_k")
    ] == [
        "<timestamp>",
        "<timestamp>",
        "/tmp/<tmp>",
        "<hex>",
        "<opaque>",  # 20 characters or more: looks_minted decides, not the pre-check
    ]
    values = [f"item-{i}" for i in range(500)] + names
    # One value each that only one of the scans finds, and that masking does change.
    plants = [
        (7, "12:30:45"),
        (70, "Monday"),
        (170, "/tmp/x1"),
        (270, "a1b2c3d4e5f6a7b8"),
        (370, "aB3kQ9z_mP2vL7_wR4tY_k"),
    ]
    for at, name in [*planted, *plants]:
        values.insert(at % (len(values) + 1), name)
    for days in ((), reference_days()):
        assert plain_strings(values, days) == [plain_string(v, days) for v in values]
        assert plain_strings(names, days) == [plain_string(v, days) for v in names]


def _named(n: int, field: str = "name") -> list[dict[str, Any]]:
    return [{field: f"item-{i}", "n": i, "tags": ["a", i % 3]} for i in range(n)]


def test_long_named_list_with_changed_records_is_keyed_as_the_full_walk_keys_it() -> None:
    """The live side's named list is the recorded one's copied with its changed records swapped
    in, whenever that is what keying it afresh makes of it; every way out of that shortcut (a
    renamed record, a duplicate name, a name that is no string or holds JSON, a record that is no
    object, an earlier identity field, one more or one less record) is keyed afresh."""
    base = _named(64)
    edits: list[Any] = [
        lambda r: r[10].update(n=-1),
        lambda r: (r[10].update(n=-1), r[40].update(tags=["b"])),
        lambda r: r[10].update(n=True),  # 10 == True to ==, not to the normal form
        lambda r: r[1].update(n=1.0),
        lambda r: r[10].update(name="item-new"),
        lambda r: r[10].update(name="item-11"),  # a duplicate: no named list any more
        lambda r: r[10].update(name=7),
        lambda r: r[10].update(name='{"x": 1}'),
        lambda r: r[10].update(name="2026-11-30T10:00:00Z"),
        lambda r: r.__setitem__(10, ["not", "an", "object"]),
        lambda r: r[10].update(uri="file:///x"),
        lambda r: [x.update(uri=f"u{i}") for i, x in enumerate(r)],
        lambda r: r.append({"name": "item-64", "n": 64}),
        lambda r: r.pop(),
        lambda r: (r[10].update(name="item-11"), r[11].update(name="item-10")),
        lambda r: r[0].update(n=-1),
        lambda r: [x.update(n=-1) for x in r[:20]],
    ]
    with_uri = [{**r, "uri": f"u{i % 2}"} for i, r in enumerate(base)]  # uri names none: keyed by name
    for records_a in (base, with_uri):
        for edit in edits:
            records_b = copy.deepcopy(records_a)
            edit(records_b)
            for options in (
                CompareOptions(),
                CompareOptions(allow_reorder=True),
                CompareOptions(ignore_keys=["tags"]),
                CompareOptions(ignore_paths=("result.content[].text.records[name=item-3]",)),
            ):
                assert_pair_is_exact(answer({"records": records_a}), answer({"records": records_b}), options)
                assert_pair_is_exact({"result": records_a}, {"result": records_b}, options)


def test_named_lists_with_the_same_names_in_order_line_up_as_before() -> None:
    """``align_keyed``'s shortcut for the same names in the same order leaves out only items that
    are one object on both sides; what it keeps, drops and finds is what lining up every name
    finds (``==`` forgives True == 1 and NaN is unequal to itself: both still decide)."""
    from mcp_replay_action.compare.engine import _Differ
    from mcp_replay_action.compare.normalize import Keyed

    nan = float("nan")
    shared = {"x": [1, 2]}
    values: list[Any] = [shared, {"x": 1}, {"x": True}, {"x": 1.0}, {"x": nan}, {"x": [nan]}, {"x": "a"}]
    for i, left in enumerate(values):
        for right in values[i:]:
            for inner in ({"v": left}, left):
                a = Keyed("name", {"p": shared, "q": inner, "r": {"x": 0}})
                b = Keyed("name", {"p": shared, "q": right if inner is left else {"v": right}, "r": {"x": 0}})
                fast, slow = _Differ(CompareOptions()), _Differ(CompareOptions())
                got = fast.align_keyed(a, b, "$")
                want = _align_every_name(slow, a, b, "$")
                assert canonical(got) == canonical(want)
                assert fast.findings == slow.findings
                assert fast.forgiven == slow.forgiven
                assert _Differ(CompareOptions()).run(a, b) == _run_every_name(a, b)


def _align_every_name(differ: Any, a: Any, b: Any, path: str) -> Any:
    """``_Differ.align_keyed`` as it was before its shortcut, for names in one order."""
    from mcp_replay_action.compare.normalize import Keyed
    from mcp_replay_action.values.paths import ident_segment

    na, nb = Keyed(a.key), Keyed(b.key)
    for k, value in a.items():
        if differ.same(value, b[k]):
            continue
        na[k], nb[k] = differ.align(value, b[k], path + ident_segment(a.key, k), None)
    return na, nb


def _run_every_name(a: Any, b: Any) -> Any:
    from mcp_replay_action.compare.engine import _Differ

    differ = _Differ(CompareOptions())
    differ.align_keyed = lambda x, y, path: _align_every_name(differ, x, y, path)  # type: ignore[method-assign]
    return differ.run(a, b)
