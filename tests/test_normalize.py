"""Normalisation: masks, JSON in text, base64 text, named lists, numbers, ignore rules."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest

from mcp_replay_action.compare.engine import CompareOptions
from mcp_replay_action.compare.masks import HEX, OPAQUE, TIMESTAMP, UUID, mask_text
from mcp_replay_action.compare.normalize import (
    Base64Text,
    JsonText,
    Keyed,
    canonical,
    normalize,
    parse_path,
    reference_days,
)
from mcp_replay_action.errors import ConfigError

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]

# -- timestamps -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "2026-11-29T20:41:14Z",
        "2026-11-29T20:41:14.123456Z",
        "2026-11-29T15:41:14-05:00",
        "2026-11-29T20:41:14+0530",
        "2026-11-29 20:41:14",
        "2026-11-29",
        "20261129T204114Z",
        "Sun Nov 29 20:41:14 UTC 2026",
        "Sun Nov 29 20:41:14 2026",
        "Mon Jan  5 09:03:01 PST 2026",
        "11/29/2026, 8:41:14 PM",
        "11/29/2026",
        "29.11.2026 20:41",
        "2026/11/29",
        "Sun, 29 Nov 2026 20:41:14 +0000",
        "Wed, 02 Oct 2002 13:00:00 GMT",
        "29 November 2026",
        "Sunday, November 29, 2026",
        "Nov 29, 2026 at 8:41 PM EST",
        "November 29th, 2026",
        "20:41:14",
        "8:41 PM",
        "8:41:14 a.m.",
        "Sunday",
        "SUNDAY, NOVEMBER 29, 2026",
    ],
)
def test_whole_timestamps_are_masked(text: str) -> None:
    assert mask_text(text) == TIMESTAMP


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Today is Sunday, November 29, 2026", "Today is <timestamp>"),
        ("at 2026-11-29T20:41:14.123+05:30 ok", "at <timestamp> ok"),
        ("time 20:41:14 next", "time <timestamp> next"),
        ("Generated Sun Nov 29 20:41:14 UTC 2026 by cron", "Generated <timestamp> by cron"),
        ("file:///logs/app_2026-11-29.log", "file:///logs/app_<timestamp>.log"),
        ("from 2026-11-29 to 2026-12-01", "from <timestamp> to <timestamp>"),
        ("at 12:00:00.5 UTC.", "at <timestamp>."),
    ],
)
def test_timestamps_inside_text_are_masked(text: str, masked: str) -> None:
    assert mask_text(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "5",
        "Result: 5",
        "version 1.2.3",
        "10.15.7",
        "ratio 3:4",
        "call 555-1234",
        "It is sunny",
        "The sum of 2 and 3 is 5",
        "1234567890123456789",  # a big number, not an id
        "abcdefabcdefabcdef",  # a word made of hex letters
        "Mondays are hard",
        # A weekday is the clock only as a whole value (mcp-server-time's day_of_week) or in a date.
        "Today is Monday",
        "Open Monday to Friday, 9 to 5",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask_text(text) == text


# -- uuids, hex, opaque -----------------------------------------------------------------------


def test_uuid_and_hex_are_masked() -> None:
    assert mask_text("3f2b8c1e-9a7d-4e2b-8f1c-0a9b8c7d6e5f") == UUID
    assert mask_text("job 3F2B8C1E-9A7D-4E2B-8F1C-0A9B8C7D6E5F started") == f"job {UUID} started"
    assert mask_text("commit deadbeef0123456789abcdef00 landed") == f"commit {HEX} landed"
    assert mask_text("0123456789abcdef") == HEX  # exactly 16
    assert mask_text("0123456789abcde") == "0123456789abcde"  # 15: too short to be an id


def test_opaque_keys_are_masked_whatever_the_value() -> None:
    body = {
        "result": {
            "nextCursor": "page-2",
            "cursor": "c1",
            "taskId": "task-7",
            "session_id": "s",
            "progressToken": 42,
            "requestState": "eyJ",
            "id": "keep-me",
        }
    }
    out = normalize(body)["result"]
    assert out["nextCursor"] == out["cursor"] == out["taskId"] == OPAQUE
    assert out["session_id"] == out["progressToken"] == out["requestState"] == OPAQUE
    assert out["id"] == "keep-me"  # never masked just because it is called id


def test_random_looking_whole_values_are_opaque_but_identifiers_are_not() -> None:
    assert normalize({"token": "sk_live_4eC39HqLyjWDarjtT1zdp7dc"}) == {"token": OPAQUE}
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    assert normalize({"t": jwt}) == {"t": OPAQUE}
    for plain in ("src/components/Button2Test.tsx", "getUserById2024Version", "hello world 12345 abc XYZ"):
        assert normalize({"t": plain}) == {"t": plain}


# -- numbers, keys, booleans ------------------------------------------------------------------


def test_numbers_compare_by_value_and_booleans_stay_booleans() -> None:
    assert normalize({"a": 1.0, "b": 2.5, "c": True, "d": 0}) == {"a": 1, "b": 2.5, "c": True, "d": 0}
    assert type(normalize(1.0)) is int
    assert canonical(normalize({"x": True})) != canonical(normalize({"x": 1}))
    assert canonical(normalize({"x": 1})) == canonical(normalize({"x": 1.0}))


def test_key_order_never_matters() -> None:
    a = normalize({"b": 1, "a": {"d": 2, "c": 3}})
    b = normalize({"a": {"c": 3, "d": 2}, "b": 1})
    assert canonical(a) == canonical(b)


def test_normalize_does_not_modify_its_input() -> None:
    body = {"result": {"content": [{"type": "text", "text": '{"at": "2026-11-29"}'}], "isError": False}}
    before = json.dumps(body, sort_keys=True)
    normalize(body, CompareOptions(ignore_keys=("type",)))
    assert json.dumps(body, sort_keys=True) == before


# -- JSON in text -----------------------------------------------------------------------------


def test_json_in_text_is_parsed_and_masked_inside() -> None:
    text = json.dumps({"when": "2026-11-29T20:41:14Z", "id": "3f2b8c1e-9a7d-4e2b-8f1c-0a9b8c7d6e5f", "n": 1.0})
    out = normalize({"text": text})["text"]
    assert isinstance(out, JsonText)
    assert out == {"{json}": {"id": UUID, "n": 1, "when": TIMESTAMP}}


def test_json_in_text_nested_twice_and_arrays() -> None:
    inner = json.dumps({"at": "2026-11-29"})
    text = json.dumps([{"payload": inner}])
    out = normalize({"text": text})["text"]
    assert out == {"{json}": [{"payload": {"{json}": {"at": TIMESTAMP}}}]}


@pytest.mark.parametrize("text", ["5", '"quoted"', "null", "{not json}", "[1, 2", "{} trailing"])
def test_strings_that_are_not_json_containers_stay_strings(text: str) -> None:
    assert normalize({"text": text}) == {"text": text}


# -- base64 -----------------------------------------------------------------------------------


def test_base64_text_blob_is_decoded_and_masked() -> None:
    blob = base64.b64encode(b"hello\nbuilt 2026-11-29T20:41:14Z\n").decode()
    out = normalize({"blob": blob})["blob"]
    assert isinstance(out, Base64Text)
    assert out == {"{base64}": f"hello\nbuilt {TIMESTAMP}\n"}


def test_base64_json_blob_is_compared_structurally() -> None:
    blob = base64.b64encode(json.dumps({"b": 1, "a": 2}).encode()).decode()
    assert normalize({"blob": blob}) == {"blob": {"{base64}": {"{json}": {"a": 2, "b": 1}}}}


def test_binary_base64_data_stays_as_is() -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))).decode()
    assert normalize({"data": png}) == {"data": png}
    # Only blob/data keys are decoded: "dGVzdA==" elsewhere is just a string.
    assert normalize({"text": "dGVzdA=="}) == {"text": "dGVzdA=="}
    assert normalize({"data": "dGVzdA=="}) == {"data": {"{base64}": "test"}}


# -- named lists ------------------------------------------------------------------------------


def test_named_lists_are_keyed_by_identity() -> None:
    tools = [{"name": "add"}, {"name": "sub"}]
    out = normalize({"tools": tools})["tools"]
    assert isinstance(out, Keyed) and out.key == "name"
    assert list(out) == ["add", "sub"]
    resources = [{"uri": "file:///a", "name": "same"}, {"uri": "file:///b", "name": "same"}]
    out = normalize({"resources": resources})["resources"]
    assert isinstance(out, Keyed) and out.key == "uri"
    templates = [{"uriTemplate": "file:///{x}", "name": "t"}]
    assert normalize({"t": templates})["t"].key == "uriTemplate"


def test_lists_without_a_unique_identity_stay_lists() -> None:
    assert type(normalize([{"name": "a"}, {"name": "a"}])) is list
    assert type(normalize([{"name": "a"}, {"title": "b"}])) is list
    assert type(normalize([{"type": "text", "text": "x"}])) is list
    assert type(normalize([{"name": 1}])) is list


def test_allow_reorder_sorts_named_lists() -> None:
    out = normalize([{"name": "b"}, {"name": "a"}], CompareOptions(allow_reorder=True))
    assert list(out) == ["a", "b"]


# -- ignore rules -----------------------------------------------------------------------------


BODY = {
    "result": {
        "content": [
            {"type": "text", "text": json.dumps({"requestId": "r-1", "value": 5})},
            {"type": "text", "text": "plain"},
        ],
        "tools": [{"name": "add", "description": "d"}, {"name": "sub", "description": "e"}],
        "meta": {"id": 1, "nested": {"id": 2}},
    }
}


@pytest.mark.parametrize(
    ("pattern", "expected_content"),
    [
        ("result.content[].text", [{"type": "text"}, {"type": "text"}]),
        ("$.result.content[*].text", [{"type": "text"}, {"type": "text"}]),
        ("$.result.content[0].text", [{"type": "text"}, {"type": "text", "text": "plain"}]),
        ("result.content[1]", [{"type": "text", "text": {"{json}": {"requestId": "r-1", "value": 5}}}]),
        (
            "result.content[].text.requestId",
            [{"type": "text", "text": {"{json}": {"value": 5}}}, {"type": "text", "text": "plain"}],
        ),
        (
            "$.result.content[0].text{json}.requestId",
            [{"type": "text", "text": {"{json}": {"value": 5}}}, {"type": "text", "text": "plain"}],
        ),
        ("result.content[0].text{json}", [{"type": "text"}, {"type": "text", "text": "plain"}]),
    ],
)
def test_ignore_paths(pattern: str, expected_content: list[object]) -> None:
    out = normalize(BODY, CompareOptions(ignore_paths=(pattern,)))
    assert out["result"]["content"] == expected_content


def test_ignore_path_by_identity_and_any_key() -> None:
    out = normalize(BODY, CompareOptions(ignore_paths=("result.tools[name=add].description",)))
    assert out["result"]["tools"] == {"add": {"name": "add"}, "sub": {"name": "sub", "description": "e"}}
    out = normalize(BODY, CompareOptions(ignore_paths=("result.tools[].description",)))
    assert out["result"]["tools"] == {"add": {"name": "add"}, "sub": {"name": "sub"}}
    out = normalize(BODY, CompareOptions(ignore_paths=("result.meta.*",)))
    assert out["result"]["meta"] == {}


def test_ignore_keys_at_any_depth_including_json_text() -> None:
    out = normalize(BODY, CompareOptions(ignore_keys=("requestId", "id")))
    assert out["result"]["content"][0]["text"] == {"{json}": {"value": 5}}
    assert out["result"]["meta"] == {"nested": {}}


def test_ignore_path_quoted_keys() -> None:
    body = {"result": {"_meta": {"io.example/trace": "t", "keep": 1}}}
    out = normalize(body, CompareOptions(ignore_paths=("result._meta['io.example/trace']",)))
    assert out == {"result": {"_meta": {"keep": 1}}}


@pytest.mark.parametrize("pattern", ["", "$", "result..x", "result[abc", "result.{yaml}"])
def test_bad_ignore_paths_are_config_errors(pattern: str) -> None:
    with pytest.raises(ConfigError, match="invalid ignore path"):
        CompareOptions(ignore_paths=(pattern,))


def test_parse_path_forms() -> None:
    assert parse_path("result.content[].text") == parse_path("$.result.content[*].text")
    assert parse_path("a[0]['b.c'][name=x y]") == (
        ("key", "a"),
        ("index", 0),
        ("key", "b.c"),
        ("ident", "name", "x y"),
    )


# -- hostile input ----------------------------------------------------------------------------


def test_deep_nesting_does_not_blow_the_stack() -> None:
    deep: object = "leaf"
    for _ in range(600):
        deep = [deep]
    out = normalize({"x": deep})
    assert json.dumps(out)  # still plain JSON
    other: object = "leaf2"
    for _ in range(600):
        other = [other]
    assert canonical(normalize({"x": other})) != canonical(out)


def test_deeply_nested_json_text_stays_text() -> None:
    text = "[" * 100_000 + "]" * 100_000
    assert normalize({"t": text}) == {"t": text}


def test_huge_strings_are_handled() -> None:
    big = "x" * 2_000_000 + " 2026-11-29T20:41:14Z"
    assert normalize(big).endswith(" " + TIMESTAMP)


# -- volatile shapes real servers print, and dates that are data ---------------------------------

NOW = dt.datetime.now(dt.UTC)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"at {NOW:%Y-%m-%d %H:%M:%S}: done", "at <timestamp>: done"),
        (f"finished {NOW:%Y-%m-%d %H:%M:%S}.", "finished <timestamp>."),
        (f"datetime.datetime({NOW.year}, {NOW.month}, {NOW.day}, 16, 44, 37, 346050)", "<timestamp>"),
        (
            f"[(datetime.datetime({NOW.year}, {NOW.month}, {NOW.day}, 18, 49, 35, 379955,"
            " tzinfo=zoneinfo.ZoneInfo(key='Etc/UTC')), 7)]",
            "[(<timestamp>, 7)]",
        ),
        (f"{NOW:%a %b %d %Y} 16:44:37 GMT+0000 (Coordinated Universal Time)", "<timestamp>"),
        (f"{NOW:%Y-%m-%d} 16:44:37.1234 +0000 UTC m=+0.010452", "<timestamp>"),
        (
            f"[{{'now': 'x', 'epoch': {int(NOW.timestamp())}, 'answer': 42}}]",
            "[{'now': 'x', 'epoch': <timestamp>, 'answer': 42}]",
        ),
        ("<app.Foo object at 0x7f02a1b2c3d0>", "<app.Foo object at <address>>"),
        ("wrote /tmp/tmpab3k9x_q/out.txt", "wrote /tmp/<tmp>/out.txt"),
    ],
    # Named, not shown: a name with today's time in it differs between two pytest-xdist workers.
    ids=["iso", "iso-sentence", "datetime", "datetime-tz", "js-date", "go-time", "epoch", "address", "tmp"],
)
def test_volatile_shapes_are_masked(text: str, masked: str) -> None:
    assert mask_text(text, reference_days()) == masked


@pytest.mark.parametrize(
    "text",
    ["due 2024-03-01", "released March 1, 2019", "datetime.date(2020, 3, 1)", "'count': 1796064763"],
)
def test_a_time_far_from_recording_and_replay_is_data(text: str) -> None:
    # Recorded a month ago; the fixed dates are years before that and before today.
    days = reference_days([(NOW - dt.timedelta(days=30)).timestamp()])
    assert mask_text(text, days) == text


def test_a_date_near_the_recording_moment_is_masked_even_years_later() -> None:
    recorded = dt.datetime(2019, 3, 1, tzinfo=dt.UTC)
    days = reference_days([recorded.timestamp()])
    assert mask_text("generated 2019-03-02 10:00:00", days) == "generated <timestamp>"
    assert mask_text("shipped 2016-03-02", days) == "shipped 2016-03-02"


def test_epochs_under_time_named_keys_only() -> None:
    now_s, now_ms = int(NOW.timestamp()), int(NOW.timestamp() * 1000)
    old = int(dt.datetime(2015, 1, 1, tzinfo=dt.UTC).timestamp())
    out = normalize({"createdAt": now_ms, "updated_at": now_s, "timestamp_ms": now_ms, "count": now_ms, "ts": old})
    assert out == {
        "createdAt": TIMESTAMP,
        "updated_at": TIMESTAMP,
        "timestamp_ms": TIMESTAMP,
        "count": now_ms,
        "ts": old,
    }


def test_a_changed_historical_date_is_a_finding_and_now_never_is() -> None:
    recorded = {"result": {"content": [{"type": "text", "text": f"row 2024-03-01, read {NOW:%Y-%m-%d %H:%M:%S}"}]}}
    later = NOW + dt.timedelta(seconds=5)
    live_same = {"result": {"content": [{"type": "text", "text": f"row 2024-03-01, read {later:%Y-%m-%d %H:%M:%S}"}]}}
    live_changed = {
        "result": {"content": [{"type": "text", "text": f"row 2024-03-02, read {later:%Y-%m-%d %H:%M:%S}"}]}
    }
    assert normalize(recorded) == normalize(live_same)
    assert normalize(recorded) != normalize(live_changed)


def test_the_named_date_pattern_finds_what_its_forms_alone_find() -> None:
    """``_NAMED_DATE_RE`` looks ahead before trying its forms at a place (a digit and a space, or
    a day or month name): a filter only, so it finds exactly the matches of the forms tried at
    every place, on the forms themselves, digits packed around them, and every kind of space."""
    import random
    import re

    from mcp_replay_action.compare.masks import _AFTER, _BEFORE, _NAMED_DATE_RE, _NAMED_FORMS

    unfiltered = re.compile(_BEFORE + "(?:" + "|".join(_NAMED_FORMS) + ")" + _AFTER)
    rng = random.Random(9)
    forms = [
        "Mon Nov 30 2026 16:44:37 GMT+0000 (Coordinated Universal Time)",
        "Sun Nov 29 20:41:14 UTC 2026",
        "Sun, 29 Nov 2026 20:41:14 +0000",
        "29 November 2026",
        "Sunday, November 29, 2026 at 8:41 PM",
        "Sept. 3, 2026",
        "3 May 2026",
        "2026-11-29T20:41:14Z",
        "123 Nov 2026",
    ]
    spaces = [" ", "\t", "\u00a0", "\u2003", "\n", ""]
    found = 0
    for _ in range(6000):
        chars = list(rng.choice(forms))
        for _ in range(rng.randint(0, 3)):
            chars[rng.randrange(len(chars))] = rng.choice([*spaces, "1", "9", "x", "N", "\u017f", ",", ":", "."])
        text = rng.choice(["", "7", "a", "at "]) + "".join(chars) + rng.choice(["", "1", " z", "."])
        spans = [m.span() for m in _NAMED_DATE_RE.finditer(text)]
        assert spans == [m.span() for m in unfiltered.finditer(text)], text
        found += bool(spans)
    assert found > 1000
