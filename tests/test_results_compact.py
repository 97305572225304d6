"""A replay's results held compactly (``ResultList``) and the console report printed in blocks:
memory that does not grow by an object (or a line of text) per interaction, with every result
and every printed byte unchanged."""

from __future__ import annotations

import collections
import dataclasses
import json
import pickle
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from mcp_replay_action.cassette import with_lines
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.model.results import (
    CassetteResult,
    Finding,
    InteractionResult,
    ResultList,
    Substitution,
    status_counts,
)
from mcp_replay_action.replay.engine import replay_cassette
from mcp_replay_action.report import console
from mcp_replay_action.report import json_report as report_json
from mcp_replay_action.report.sinks import write_files
from mcp_replay_action.transport.stdio import StdioTransport
from report_fixtures import healthy_cassette, regressed_cassette, report, score

pytestmark = pytest.mark.integration

CALC = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]
FINDING = Finding("value-change", "breaking", "$.result.x", "value changed: 1 -> 2", before=1, after=2)

VARIETY = (
    InteractionResult(0, 2, "initialize", None, "pass", latency_ms=12.345, recorded_latency_ms=10.0),
    InteractionResult(2, 4, "tools/call", "add", "pass", latency_ms=0.1),
    InteractionResult(3, 5, "tools/call", "add", "fail", (FINDING,), latency_ms=1.5, live_error=False),
    InteractionResult(4, 6, "tools/call", "boom", "pass", recorded_error=True, live_error=True),
    InteractionResult(5, 7, "tools/call", "slow", "missing", (FINDING,), live_error=None),
    InteractionResult(6, 8, "tools/list", None, "skipped", live_error=None),
    InteractionResult(7, 9, "tools/call", "job", "pass", substitutions=(Substitution("old", "new"),)),
    InteractionResult(8, 10, "tools/call", "add", "pass", noise=(FINDING,), live_error=False),
    InteractionResult(2**40, 2**33, "ping", None, "pass", latency_ms=-0.0, live_error=False),
    InteractionResult(9, 11, "tools/call", "dump", "pass", recorded_bytes=1024, live_bytes=5 * 2**30),
)


def test_every_result_reads_back_as_it_was_appended() -> None:
    held = ResultList(VARIETY)
    assert len(held) == len(VARIETY)
    assert list(held) == list(VARIETY)
    assert held == VARIETY and held == list(VARIETY) and held == ResultList(VARIETY)
    assert held[-1] == VARIETY[-1] and held[1:3] == list(VARIETY[1:3])
    assert pickle.loads(pickle.dumps(held)) == VARIETY  # --jobs hands results between processes
    # Sizes are 4 bytes each until one passes 2 GiB (the 5 GiB answer above).
    assert ResultList(VARIETY[:-1])._sizes.itemsize == 4 and held._sizes.itemsize == 8
    # Latencies are whole microseconds in 4 bytes until one is not (the -0.0 above; a cassette's
    # own 0.1234), then doubles, and every one reads back the very float appended.
    assert ResultList(VARIETY[:8])._latency.itemsize == 4 and held._latency.itemsize == 8
    odd = [*VARIETY[:3], InteractionResult(1, 3, "ping", None, "pass", latency_ms=0.2, recorded_latency_ms=0.1234)]
    assert list(ResultList(odd)) == odd and ResultList(odd)._latency.itemsize == 8
    assert [repr(r.latency_ms) for r in ResultList(odd)] == [repr(r.latency_ms) for r in odd]
    big = [InteractionResult(1, 3, "ping", None, "pass", latency_ms=3_000_000.5)]  # 50 minutes: past 2^31 microseconds
    assert list(ResultList(big)) == big and ResultList(big)._latency.itemsize == 8
    # Only the results that carry more than numbers are kept as objects.
    assert sorted(held._whole) == [2, 4, 6, 7]
    # A packed result is rebuilt field by field without __init__: every field, nothing else.
    fields = [f.name for f in dataclasses.fields(InteractionResult)]
    assert all(list(vars(held[i])) == fields for i in range(len(held)) if i not in held._whole)
    assert [hash(r) for r in held] == [hash(r) for r in VARIETY] and repr(list(held)) == repr(list(VARIETY))
    # Statuses are counted from the packed codes, the same as over the results themselves.
    assert status_counts(held) == status_counts(VARIETY) == collections.Counter(r.status for r in VARIETY)


def test_a_passing_replay_keeps_no_object_per_interaction() -> None:
    handshake = [
        Interaction(0, "request", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}),
        Interaction(1, "notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
    calls = [
        Interaction(
            i + 2,
            "request",
            {
                "jsonrpc": "2.0",
                "id": i + 1,
                "method": "tools/call",
                "params": {"name": "add", "arguments": {"a": i, "b": 1}},
            },
            {"jsonrpc": "2.0", "id": i + 1, "result": {"content": [{"type": "text", "text": str(i + 1)}]}},
        )
        for i in range(200)
    ]
    # Record the real handshake answer first, so the replay passes throughout.
    probe = replay_cassette(with_lines(Cassette({}, (*handshake, *calls))), StdioTransport(CALC))
    assert [r.status for r in probe.results[1:]] == ["pass"] * 200
    assert isinstance(probe.results, ResultList)
    assert set(probe.results._whole) <= {0}  # at most the handshake, whose answer differs here


def test_console_stream_is_the_report_in_blocks_of_whole_lines() -> None:
    many = replace(
        healthy_cassette(),
        results=tuple(InteractionResult(i, i + 2, "tools/call", f"t{i}", "pass") for i in range(2500)),
    )
    hostile = replace(regressed_cassette(), path="::error::x", results=(*regressed_cassette().results, VARIETY[2]))
    whole = report(many, hostile, overall=score(50.0, "F"))
    blocks = list(console.stream(whole))
    assert len(blocks) == 3 and all(b.endswith("\n") for b in blocks)
    assert "".join(blocks) == console.render(whole)
    assert "\n::" not in "".join(blocks) and not "".join(blocks).startswith("::")


def test_cassette_result_built_from_a_tuple_still_compares_equal() -> None:
    held = CassetteResult("c.jsonl", ResultList(VARIETY), score(100.0, "A"))
    assert held == CassetteResult("c.jsonl", VARIETY, score(100.0, "A"))


def test_json_report_file_is_written_in_pieces_and_reads_as_dumps(tmp_path: Path) -> None:
    many = replace(
        healthy_cassette(),
        results=ResultList(
            (
                *VARIETY,
                *(InteractionResult(i, i + 2, "tools/call", "é\u2028", "pass", latency_ms=i / 3) for i in range(300)),
            )
        ),
    )
    whole = report(many, regressed_cassette(), replace(healthy_cassette(), results=()), overall=score(50.0, "F"))
    pieces = list(report_json.stream(whole))
    assert len(pieces) > 300 and "".join(pieces) == report_json.dumps(whole)
    target = tmp_path / "out" / "report.json"
    write_files(whole, json_file=target)
    assert target.read_text("utf-8") == report_json.dumps(whole)
    assert json.loads(target.read_text("utf-8"))["cassettes"][0]["total"] == len(VARIETY) + 300


def test_with_whole_changes_only_the_results_held_as_objects() -> None:
    held = ResultList(VARIETY)
    changed = held.with_whole(lambda r: replace(r, name="X"))
    assert [r.name for r in changed] == ["X" if i in (2, 4, 6, 7) else r.name for i, r in enumerate(VARIETY)]
    assert list(held) == list(VARIETY)  # the original is left as it was


def _mixed(n: int) -> list[InteractionResult]:
    """``n`` results cycling through VARIETY's shapes, numbered afresh."""
    return [replace(VARIETY[i % len(VARIETY)], seq=i, line=i + 2) for i in range(n)]


def test_counting_packed_results_gives_what_counting_every_result_gives() -> None:
    from mcp_replay_action.grade.assemble import build_report
    from mcp_replay_action.grade.gate import evaluate_gate
    from mcp_replay_action.grade.score import score as grade_score
    from mcp_replay_action.model.gate import GatePolicy

    for results in ([], VARIETY[:2], VARIETY, _mixed(500), [r for r in _mixed(300) if r.status != "pass"]):
        held = ResultList(results)
        pairs = list(held.weighted())
        assert sum(n for _, n in pairs) == len(results)
        assert len(pairs) <= len(held._whole) + 12  # packed ones grouped, never one per result
        assert grade_score(held) == grade_score(list(results)) == grade_score(iter(results))
        for policy in (GatePolicy(), GatePolicy(fail_on="any", min_grade="B"), GatePolicy(fail_on="none")):
            packed = [
                CassetteResult("a", held, grade_score(held)),
                CassetteResult("b", ResultList(VARIETY), score(100.0, "A")),
            ]
            plain = [
                CassetteResult("a", tuple(results), grade_score(results)),
                CassetteResult("b", VARIETY, score(100.0, "A")),
            ]
            assert evaluate_gate(packed, packed[0].score, policy) == evaluate_gate(plain, plain[0].score, policy)
            assert build_report(packed, policy=policy) == build_report(plain, policy=policy)


def test_a_clean_verdict_packed_straight_in_equals_the_judged_result() -> None:
    from mcp_replay_action.grade.verdict import judge, pass_into

    request = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "add", "arguments": {}}}
    cases = [
        (Interaction(2, "request", request, {"jsonrpc": "2.0", "id": 3, "result": {}}, line=4), {"result": {}}),
        (Interaction(3, "request", request, {"jsonrpc": "2.0", "id": 3, "error": {"code": 1}}), {"error": {}}),
        (Interaction(4, "request", request, {"result": {"isError": True}}, latency_ms=2.5), {"result": {}}),
        (Interaction(5, "request", {"jsonrpc": "2.0", "id": 9, "method": "ping"}, None), {"result": {}}),
    ]
    for inter, live in cases:
        for sent in (None, dict(request, params={"uri": "file:///x"}), {"method": "ping"}):
            for latency in (None, 1.25):
                held = ResultList()
                pass_into(held, inter, live, latency_ms=latency, sent=sent)
                judged = judge(inter, (), live, latency_ms=latency, sent=sent)
                assert judged.status == "pass" and list(held) == [judged]
                assert vars(held[0]) == vars(judged)


def test_a_result_list_is_listed_as_its_results_are_listed_one_by_one() -> None:
    """The console reads a ResultList's packed results as rows without building them: the text,
    coloured or not, verbose or not, is what rendering the same results one by one gives, for
    every status, whole and packed results mixed, repeated labels and labels a terminal or a
    runner would act on."""
    import random

    from report_fixtures import HOSTILE

    rng = random.Random(4)
    names = [None, "add", "add", "x\ny", "::error::x", "\x1b[31mred", "é" * 400, HOSTILE]
    for _ in range(60):
        results = []
        for seq in range(rng.randrange(0, 40)):
            extra: dict[str, object] = rng.choice(
                [
                    {},
                    {},
                    {},
                    {"findings": (FINDING,)},
                    {"noise": (FINDING,)},
                    {"substitutions": (Substitution("a", "b"),)},
                ]
            )
            status = rng.choice(["pass", "pass", "fail", "missing", "skipped"])
            method = rng.choice(["tools/call", "initialize", "prompts/get"])
            results.append(InteractionResult(seq, seq + 2, method, rng.choice(names), status, **extra))  # type: ignore[arg-type]
        one_by_one = replace(healthy_cassette(), results=tuple(results))
        held = replace(one_by_one, results=ResultList(results))
        for color in (False, True):
            for verbose in (False, True):
                expected = console.render(report(one_by_one), color=color, verbose=verbose)
                assert console.render(report(held), color=color, verbose=verbose) == expected


def test_the_differing_results_are_the_answered_ones_with_a_finding_failing_or_cosmetic() -> None:
    cosmetic = replace(FINDING, cls="cosmetic")
    missing = Finding("missing-response", "breaking", "$", "no response within 1 s")
    results = ResultList(
        (
            InteractionResult(0, 2, "initialize", None, "pass"),
            InteractionResult(1, 3, "tools/call", "a", "fail", findings=(FINDING,)),
            InteractionResult(2, 4, "tools/list", None, "pass", findings=(cosmetic,)),
            InteractionResult(3, 5, "tools/call", "b", "missing", findings=(missing,)),
            InteractionResult(4, 6, "tools/call", "c", "pass", noise=(FINDING,)),
        )
    )
    assert results.differing() == {1, 2}
