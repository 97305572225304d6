"""``replay --max-growth X``: an answer more than X times its recorded size in bytes (and over
1 KiB) is a ``size`` finding, beside ``latency``; on a real FastMCP server through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from e2e_helpers import SERVERS, command, replay
from mcp_replay_action.model.results import InteractionResult
from mcp_replay_action.replay.measures import growth
from mcp_replay_action.report._format import size_change
from mcp_replay_action.values.size import SIZE_FLOOR_BYTES, answer_bytes, over_floor, plain_bytes
from profiles import examples

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
TYPED = SERVERS / "typed_server.py"


@pytest.fixture
def cassette(typed_cassette: Path) -> Path:
    return typed_cassette


def test_an_answer_far_larger_than_recorded_is_a_size_finding(cassette: Path, tmp_path: Path) -> None:
    server = command(SDK1_PYTHON, TYPED, "--bloat")
    run = replay(server, cassette, "--max-growth", "3", report=tmp_path / "r.json", gate=False)
    sizes = [f for f in run.findings() if f["kind"] == "size"]
    assert [(f["name"], f["class"], f["rule"]) for f in sizes] == [("echo", "breaking", "size")], run.describe()
    (size,) = sizes
    # "hi" 2000 times: 4000 bytes of text, in the content block (FastMCP 1.x also wraps the str in
    # structuredContent {"result": ...}: twice).
    assert size["after"] > 8000 and size["before"] < 300, size
    assert f"live {size['after']:,} bytes (~{-(-size['after'] // 4):,} tokens)" in size["message"], size
    assert "(limit 3x)" in size["message"] and "x larger than recorded" in size["message"]
    assert run.code == 1  # breaking: it fails the default gate


def test_without_the_option_or_under_the_limit_no_size_finding(cassette: Path, tmp_path: Path) -> None:
    server = command(SDK1_PYTHON, TYPED, "--bloat")
    unasked = replay(server, cassette, report=tmp_path / "a.json", gate=False)
    assert not [f for f in unasked.findings() if f["kind"] == "size"], unasked.describe()
    roomy = replay(server, cassette, "--max-growth", "1000", report=tmp_path / "b.json", gate=False)
    assert not [f for f in roomy.findings() if f["kind"] == "size"], roomy.describe()


def test_the_floor_and_the_measure() -> None:
    small = {"result": {"content": [{"type": "text", "text": "a"}]}}
    grown = {"result": {"content": [{"type": "text", "text": "a" * 500}]}}
    assert answer_bytes(grown) < SIZE_FLOOR_BYTES
    assert growth(answer_bytes(small), answer_bytes(grown), 2.0) is None  # 20x, but under 1 KiB
    big = {"result": {"content": [{"type": "text", "text": "é" * 1000}]}}
    assert answer_bytes(big) == answer_bytes(small) - 1 + 2000  # UTF-8 bytes, not characters
    found = growth(answer_bytes(small), answer_bytes(big), 2.0)
    assert found is not None and (found.kind, found.before, found.after) == (
        "size",
        answer_bytes(small),
        answer_bytes(big),
    )
    assert growth(None, answer_bytes(big), 2.0) is None and growth(answer_bytes(small), answer_bytes(big), None) is None


def test_the_finding_and_the_report_share_one_floor() -> None:
    # Exactly at the floor is not news, one byte over is: for the size finding and for the
    # report's "answer grew" alike.
    assert not over_floor(SIZE_FLOOR_BYTES) and over_floor(SIZE_FLOOR_BYTES + 1)
    for live, shown in ((SIZE_FLOOR_BYTES, False), (SIZE_FLOOR_BYTES + 1, True)):
        result = InteractionResult(1, 3, "tools/call", "echo", "pass", recorded_bytes=10, live_bytes=live)
        assert bool(size_change(result)) is shown and (growth(10, live, 2.0) is not None) is shown, live
    shrunk = InteractionResult(1, 3, "tools/call", "echo", "pass", recorded_bytes=5000, live_bytes=2000)
    assert size_change(shrunk) == "" and growth(5000, 2000, 1.1) is None


def recorded_answers(cassette: Path) -> dict[int, dict[str, Any]]:
    """The recorded answers by seq, read from the cassette file itself."""
    lines = cassette.read_text("utf-8").splitlines()[1:]
    return {i["seq"]: i["response"] for i in map(json.loads, lines) if i.get("response") is not None}


def test_every_interaction_carries_its_recorded_and_live_size(cassette: Path, tmp_path: Path) -> None:
    run = replay(command(SDK1_PYTHON, TYPED), cassette, report=tmp_path / "r.json", gate=False)
    assert run.code == 0, run.describe()
    recorded = recorded_answers(cassette)
    answered = [i for i in run.interactions() if i["seq"] in recorded]
    assert len(answered) >= 5, run.describe()
    for i in answered:
        size = answer_bytes(recorded[i["seq"]])
        assert (i["recorded_bytes"], i["recorded_tokens"]) == (size, -(-size // 4)), i  # also for a probe not sent
        if i["status"] == "pass":  # an unchanged build gives the same answer
            assert (i["live_bytes"], i["live_tokens"]) == (size, -(-size // 4)), i
        else:
            assert i["status"] == "skipped" and i["live_bytes"] is None, i
    assert "answer grew" not in run.stdout


def test_an_answer_that_grew_says_so_beside_its_row(cassette: Path, tmp_path: Path) -> None:
    md = tmp_path / "r.md"
    run = replay(
        command(SDK1_PYTHON, TYPED, "--bloat"), cassette, "--markdown", str(md), report=tmp_path / "r.json", gate=False
    )
    (echo,) = [i for i in run.interactions() if i["name"] == "echo"]
    assert echo["live_bytes"] > 8000 > echo["recorded_bytes"], echo
    assert echo["live_tokens"] == -(-echo["live_bytes"] // 4)
    grew = f"answer grew {echo['recorded_bytes']:,} -> {echo['live_bytes']:,} bytes"
    (row,) = [line for line in run.stdout.splitlines() if f"#{echo['seq']} tools/call echo" in line]
    assert grew in row and f"~{echo['live_tokens']:,} tokens" in row, run.stdout
    assert grew in md.read_text("utf-8")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=30,
)


@given(JSON_VALUES)
@settings(max_examples=examples(500), deadline=None)
def test_the_fast_measure_is_the_plain_one(value: Any) -> None:
    # Non-ASCII, lone surrogates, NaN and big integers included: the C encoder built once
    # measures exactly what json.dumps would.
    from mcp_replay_action.values.size import _pieces

    wrapped = {"t": value, "lone": "\ud800é"}
    assert answer_bytes(value) == plain_bytes(value)
    assert answer_bytes(wrapped) == plain_bytes(wrapped)  # small: encoded whole
    assert _pieces(value) == plain_bytes(value) and _pieces(wrapped) == plain_bytes(wrapped)  # as a big one is


LONG_VALUES = st.lists(
    st.none()
    | st.integers()
    | st.text(max_size=20)
    | st.dictionaries(st.text(max_size=4), st.text(max_size=6), max_size=3),
    min_size=60,
    max_size=300,
)


@given(LONG_VALUES, st.text(min_size=1, max_size=3))
@settings(max_examples=examples(60), deadline=None)
def test_a_long_list_and_a_long_string_are_measured_in_pieces_exactly(items: list[Any], piece: str) -> None:
    # Over SLICE items and over CHUNK characters: the pieces add up to the plain measure.
    from mcp_replay_action.values.size import CHUNK

    long_text = (piece + '"\n\u2028é\ud800') * (CHUNK // 3)
    for value in (items, {"result": {"items": items, "text": long_text}}, [items, long_text]):
        assert answer_bytes(value) == plain_bytes(value)


def test_a_long_answer_is_never_encoded_whole() -> None:
    # The measure of a 16 MiB answer holds a slice or a chunk at a time, not a second copy of it
    # (tracemalloc counts what is allocated, so this is about memory, not time).
    import tracemalloc

    records = [{"id": f"r{i:07d}", "note": "é" * 40, "n": i} for i in range(160_000)]
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"records": records, "text": "x" * (4 << 20)}}
    size = answer_bytes(answer)
    assert size > 16 << 20
    tracemalloc.start()
    try:
        assert answer_bytes(answer) == size
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < size // 16, (peak, size)
