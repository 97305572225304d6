"""The replay engine against real processes: the bundled calc server (both protocol eras) and the
fault-injection fakes in tests/fakes/. Cassettes are written out by hand so every case is exact."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import with_lines
from mcp_replay_action.errors import ServerStartError
from mcp_replay_action.grade.assemble import build_report
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.model.gate import GatePolicy
from mcp_replay_action.plan import Plan
from mcp_replay_action.replay.engine import replay_cassette
from mcp_replay_action.transport import Target
from mcp_replay_action.transport.stdio import StdioTransport
from mcp_replay_action.values.limits import Limits

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits")]

FAKES = Path(__file__).parent / "fakes"
CALC = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]
STATELESS = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}


def fake(name: str, *args: str) -> list[str]:
    return [sys.executable, str(FAKES / f"{name}.py"), *args]


def req(seq: int, rid: Any, method: str, params: dict | None, response: dict, kind: str = "request") -> Interaction:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return Interaction(seq=seq, kind=kind, message=message, response={"jsonrpc": "2.0", "id": rid, **response})  # type: ignore[arg-type]


def note(seq: int, method: str) -> Interaction:
    return Interaction(seq=seq, kind="notification", message={"jsonrpc": "2.0", "method": method})


def handshake(version: str = "2025-11-25", server: str = "mcp-replay-sample-calc") -> list[Interaction]:
    init = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    result = {
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": False}, "resources": {}},
        "serverInfo": {"name": server, "version": "1.4.0"},
    }
    return [req(0, 0, "initialize", init, {"result": result}), note(1, "notifications/initialized")]


def text(value: str, **extra: Any) -> dict[str, Any]:
    return {"result": {"content": [{"type": "text", "text": value}], "isError": False, **extra}}


def cassette(*interactions: Interaction) -> Cassette:
    return with_lines(Cassette(meta={}, interactions=tuple(interactions), path="t.jsonl"))


def run(c: Cassette, command: list[str], **options: Any) -> Any:
    target = Target(startup_timeout=options.pop("startup_timeout", 30.0))
    return replay_cassette(c, StdioTransport(command), Plan(target=target, **{"timeout": 10.0, **options}))


def statuses(result: Any) -> list[str]:
    return [r.status for r in result.results]


def test_minted_job_id_is_threaded_into_the_next_call() -> None:
    old = "93b4f6f5-414f-4b2c-854d-4dbf783fb39d"
    c = cassette(
        *handshake(),
        req(
            2,
            1,
            "tools/call",
            {"name": "start_job", "arguments": {"size": 3}},
            {"result": {"content": [{"type": "text", "text": f"started {old}"}], "structuredContent": {"jobId": old}}},
        ),
        req(
            3,
            2,
            "tools/call",
            {"name": "job_status", "arguments": {"jobId": old}},
            {
                "result": {
                    "content": [{"type": "text", "text": "done"}],
                    "structuredContent": {"jobId": old, "items": 3},
                }
            },
        ),
    )
    result = run(c, CALC)
    assert statuses(result) == ["pass", "pass", "pass"], result.results
    assert result.score.grade == "A"


@pytest.mark.parametrize("overlap", [True, False])
def test_answers_nothing_can_be_learned_from_are_redacted_and_compared_after_the_next_send(
    overlap: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once carry has read the recording's data flow, an answer that differs from its recording
    but held nothing a later message quotes is neither walked for minted values nor redacted
    before the next request goes out. Still, the job id minted in between is threaded, and an
    echoed secret the recording holds redacted is redacted before it is compared (it passes);
    with latency judged (no overlap), each answer is settled before the next send instead."""
    import uuid

    from mcp_replay_action.compare.carry import Carry
    from mcp_replay_action.redact import Redactor

    old_job = "93b4f6f5-414f-4b2c-854d-4dbf783fb39d"
    secret = "token ghp_" + "a1B2c3D4e5" * 4

    def now(seq: int) -> Interaction:
        stamp = json.dumps({"time": "2026-01-01T00:00:00+00:00", "zone": "UTC", "requestId": str(uuid.UUID(int=seq))})
        return req(seq, seq, "tools/call", {"name": "now", "arguments": {}}, text(stamp))

    started = {"content": [{"type": "text", "text": f"started {old_job}"}], "structuredContent": {"jobId": old_job}}
    status = {"content": [{"type": "text", "text": "done"}], "structuredContent": {"jobId": old_job, "items": 3}}
    echo = {"name": "echo", "arguments": {"message": secret}}
    c = cassette(
        *handshake(),
        now(2),
        req(3, 3, "tools/call", {"name": "start_job", "arguments": {"size": 3}}, {"result": started}),
        now(4),
        req(5, 5, "tools/call", echo, text(str(Redactor().apply(secret)))),
        now(6),
        req(7, 7, "tools/call", {"name": "job_status", "arguments": {"jobId": old_job}}, {"result": status}),
        now(8),
    )
    learned: list[int] = []
    original = Carry.learn

    def spy(self: Carry, recorded: Any, live: Any, seq: int) -> None:
        learned.append(recorded["id"])
        original(self, recorded, live, seq)

    monkeypatch.setattr(Carry, "learn", spy)
    result = run(c, CALC, max_slowdown=None if overlap else 1000.0)
    assert statuses(result) == ["pass"] * 8, [r.findings for r in result.results]
    [threaded] = [r for r in result.results if r.seq == 7]
    assert [s.recorded for s in threaded.substitutions] == [old_job]
    # Learned from: only the answer that minted the job id before a request quoted it (the
    # recording's data flow); never the echo, a timestamp, or the later answer that echoes it.
    assert learned == [3], learned


def test_stateless_era_multi_round_trip_threads_request_state() -> None:
    discover = {
        "supportedVersions": [STATELESS, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "capabilities": {"tools": {"listChanged": False}, "resources": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp-replay-sample-calc", "version": "1.4.0"}},
        "resultType": "complete",
        "ttlMs": 0,
        "cacheScope": "private",
    }
    recorded_state = "q7dXcZ0mRk2c9yVfW1o2aB3xY4zT5uV6"
    ask = {
        "resultType": "input_required",
        "inputRequests": {
            "ok": {
                "method": "elicitation/create",
                "params": {"message": "Really deploy?", "requestedSchema": {"type": "object", "properties": {}}},
            }
        },
        "requestState": recorded_state,
    }
    args = {"name": "confirm", "arguments": {"action": "deploy"}, "_meta": META}
    retry = {**args, "inputResponses": {"ok": {"action": "accept"}}, "requestState": recorded_state}
    c = cassette(
        req(0, 1, "server/discover", {"_meta": META}, {"result": discover}),
        req(1, 2, "tools/call", args, {"result": ask}),
        req(2, 3, "tools/call", retry, text("deploy: accept", resultType="complete")),
    )
    result = run(c, CALC)
    assert result.era == "stateless" and result.protocol_version == STATELESS
    assert statuses(result) == ["pass", "pass", "pass"], [r.findings for r in result.results]


def test_server_request_with_a_colliding_id_is_answered_from_the_cassette() -> None:
    roots = {"roots": [{"uri": "file:///work", "name": "work"}]}
    c = cassette(
        *handshake("2025-06-18", "roots"),
        req(2, 5, "tools/call", {"name": "echo", "arguments": {}}, text('["file:///work"]')),
        Interaction(
            seq=3,
            kind="server-request",
            message={"jsonrpc": "2.0", "id": 5, "method": "roots/list", "params": {}},
            response={"jsonrpc": "2.0", "id": 5, "result": roots},
        ),
    )
    c = Cassette(
        meta={},
        interactions=tuple(
            i
            if i.kind != "request" or i.method != "initialize"
            else Interaction(
                seq=i.seq,
                kind="request",
                message=i.message,
                line=i.line,
                response={
                    "jsonrpc": "2.0",
                    "id": 0,
                    "result": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "roots", "version": "1.0.0"},
                    },
                },
            )
            for i in c.interactions
        ),
        path="t.jsonl",
    )
    result = run(c, fake("roots_server"))
    assert statuses(result) == ["pass", "pass"], [r.findings for r in result.results]


def _fake_handshake(name: str) -> list[Interaction]:
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    result = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1.0.0"},
    }
    return [req(0, 0, "initialize", init, {"result": result}), note(1, "notifications/initialized")]


def test_notifications_before_the_response_are_not_taken_for_it() -> None:
    def told(seq: int, token: Any = "none") -> list[Interaction]:
        # What the server sends before each answer, recorded after the request it came with.
        log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}}
        progress = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": token, "progress": 1},
        }
        return [Interaction(seq=seq + i, kind="server-notification", message=m) for i, m in enumerate((log, progress))]

    call = req(2, 1, "tools/call", {"name": "x", "arguments": {}}, text("done"))
    c = cassette(*_fake_handshake("notify"), call, *told(3))
    clean = run(c, fake("notify_server"))
    assert statuses(clean) == ["pass", "pass"], [r.findings for r in clean.results]
    # A recording that never heard them: what the server now says is reported, not taken for its answer.
    bare = run(cassette(*_fake_handshake("notify"), call), fake("notify_server"))
    assert {(f.rule, f.cls) for r in bare.results for f in r.findings} == {
        ("progress-added", "additive"),
        ("log-changed", "additive"),
    }


def test_crash_mid_session_is_missing_with_stderr_and_caps_the_grade() -> None:
    calls = [req(2 + i, 1 + i, "tools/call", {"name": "x", "arguments": {}}, text("ok")) for i in range(3)]
    result = run(cassette(*_fake_handshake("crash"), *calls), fake("crash_server"))
    # The request the crash answered is missing; the two never sent after it are skipped, with
    # the same account, and count once in the gate.
    assert statuses(result) == ["pass", "missing", "skipped", "skipped"]
    assert result.results[3].findings == result.results[1].findings
    assert result.error.startswith("the server exited with status 3")
    first = result.results[1].findings[0]
    assert first.kind == "missing-response"
    assert "exited with status 3" in first.message and "RuntimeError: boom" in first.message
    assert result.score.grade in ("D", "F") and result.score.capped
    assert "boom" in result.stderr_tail


def test_hanging_server_ends_within_the_timeout() -> None:
    calls = [req(2 + i, 1 + i, "tools/call", {"name": "x", "arguments": {}}, text("ok")) for i in range(5)]
    started = time.monotonic()
    result = run(cassette(*_fake_handshake("hang"), *calls), fake("hang_server"), timeout=1.0)
    elapsed = time.monotonic() - started
    assert statuses(result) == ["pass", "missing", "missing", "skipped", "skipped", "skipped"]
    assert "skipped: the server stopped answering" in result.results[-1].findings[0].message
    # Two timeouts, then the rest is skipped, then a bounded shutdown of a server ignoring SIGTERM.
    assert elapsed < 60


def test_wrong_id_answers_are_reported() -> None:
    c = cassette(*_fake_handshake("wrong-id"), req(2, 1, "tools/call", {"name": "x", "arguments": {}}, text("ok")))
    result = run(c, fake("wrong_id_server"), timeout=1.0)
    assert statuses(result) == ["pass", "missing"]
    assert "answered other ids: 1001" in result.results[1].findings[0].message


def test_server_that_never_answers_its_first_request_is_an_infrastructure_error() -> None:
    c = cassette(req(0, 1, "tools/list", None, {"result": {"tools": []}}))
    with pytest.raises(ServerStartError, match="never answered tools/list"):
        run(c, [sys.executable, "-c", "import time; time.sleep(30)"], startup_timeout=1.0)
    with pytest.raises(ServerStartError):
        run(c, fake("crash_server", "--at-start"))


def test_missing_binary_is_a_start_error() -> None:
    with pytest.raises(ServerStartError, match="not found"):
        run(cassette(*handshake()), ["definitely-not-a-real-mcp-server-binary"])


def test_regressed_twin_is_caught_and_report_gates() -> None:
    c = cassette(
        *handshake(),
        req(2, 1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}}, text("5")),
        req(3, 2, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}, text("hi")),
    )
    result = run(c, [*CALC, "--regressed"])
    kinds = [r.kind for r in result.results]
    assert kinds == [None, "value-change", "structure-change"]
    report = build_report([result], policy=GatePolicy(fail_on="any", min_grade="A"))
    assert report.gate.passed is False and len(report.gate.reasons) == 2
    # The default gate fails on the breaking change only; the value change is not gating.
    default = build_report([result]).gate
    assert default.passed is False and default.policy == GatePolicy() and default.accepted == 1


def test_header_redaction_rules_apply_to_live_responses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_SERVICE_SECRET", "s3cr3t-value-123")
    args = {"session_label": "blue-team", "note": "s3cr3t-value-123"}
    redacted = {"session_label": "[REDACTED]", "note": "[REDACTED]"}
    c = cassette(
        *_fake_handshake("echo"),
        req(
            2,
            1,
            "tools/call",
            {"name": "echo", "arguments": args},
            {"result": {"content": [{"type": "text", "text": json.dumps(redacted)}], "structuredContent": redacted}},
        ),
    )
    plain = run(c, fake("echo_server"))
    assert statuses(plain) == ["pass", "fail"]
    c = Cassette(
        meta={"redaction": {"keys": ["session_label"], "patterns": ["[REDACTED]"], "env": ["MY_SERVICE_SECRET"]}},
        interactions=c.interactions,
        path=c.path,
    )
    assert statuses(run(c, fake("echo_server"))) == ["pass", "pass"]


def _counted_read_ahead_steps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``[n]``: how many steps every read-ahead (``narrow.ReadAhead``) has taken since; set
    ``[0]`` to start counting again."""
    from mcp_replay_action.values import narrow

    counted = [0]
    real_step = narrow.ReadAhead.step

    def step(self: narrow.ReadAhead) -> bool:
        counted[0] += 1
        return real_step(self)

    monkeypatch.setattr(narrow.ReadAhead, "step", step)
    return counted


def _read_ahead_cases() -> list[tuple[str, Any]]:
    """(what, live document): one long named list, edited as a server might (the last: as it was)."""
    records = [
        {"name": f"item-{i}", "score": i % 7, "tags": ["a", "b"], "when": "2026-11-30T10:00:00Z", "note": 'é "q" \\'}
        for i in range(400)
    ]

    def edited(change: Any) -> Any:
        doc = {"records": json.loads(json.dumps(records)), "total": len(records)}
        change(doc["records"])
        return doc

    def at(i: int, key: str, value: Any) -> Any:
        return lambda rs: rs[i].__setitem__(key, value)

    return [
        ("first leaf", edited(at(0, "score", -1))),
        ("middle leaf", edited(at(200, "score", -1))),
        ("last leaf", edited(at(399, "score", True))),
        ("1 for 1.0", edited(at(123, "score", 4.0))),
        ("renamed", edited(at(250, "name", "item-x"))),
        ("duplicate name", edited(at(251, "name", "item-3"))),
        ("reordered", edited(lambda rs: rs.insert(300, rs.pop(100)))),
        ("masked timestamp", edited(at(77, "when", "2026-12-01T09:00:00Z"))),
        ("non-ASCII", edited(at(310, "note", "ü\u2028\ud7ff"))),
        ("removed", edited(lambda rs: rs.pop(150))),
        ("a secret", edited(at(180, "note", "password=hunter2hunter2 ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5"))),
        ("unchanged", edited(lambda rs: None)),
    ]


def test_a_long_recorded_text_read_ahead_replays_to_the_same_results(monkeypatch: pytest.MonkeyPatch) -> None:
    """While a slow server works, the long JSON text of the answer it owes is read ahead
    (``narrow.ReadAhead``); the replay finds exactly what it finds without (one CPU), for a named
    list changed at its first, middle and last record, a name changed or repeated, records moved
    or removed, a masked value, non-ASCII and escapes, 1 against 1.0 and true, nothing changed,
    with and without an ignore rule and reordering allowed."""
    from mcp_replay_action import redact
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.replay import engine as replay

    # Read ahead from 2,000 characters on, in runs of a few records, and learned for redaction
    # from 1,000.
    limits = Limits(read_ahead_chars=2000, run_chars=700, learn_min_chars=1000)
    quiet = 0
    looked = redact.Redactor._quiet_beside

    def counted_look(self: redact.Redactor, text: str, twin: str, held: Any) -> bool:
        nonlocal quiet
        settled = looked(self, text, twin, held)
        quiet += settled
        return settled

    monkeypatch.setattr(redact.Redactor, "_quiet_beside", counted_look)
    steps = _counted_read_ahead_steps(monkeypatch)
    cases = _read_ahead_cases()
    recorded_doc = cases[-1][1]  # the unchanged one
    for what, live_doc in cases:
        for compare in (
            CompareOptions(limits=limits),
            CompareOptions(ignore_keys=("tags",), allow_reorder=True, limits=limits),
        ):
            c = cassette(
                *handshake(),
                req(
                    2,
                    1,
                    "tools/call",
                    {"name": "echo", "arguments": live_doc},
                    {
                        "result": {
                            "content": [{"type": "text", "text": json.dumps(recorded_doc)}],
                            "structuredContent": recorded_doc,
                        }
                    },
                ),
            )
            found = []
            for cpus in (1, 2):
                monkeypatch.setattr(replay, "usable_cpus", lambda cpus=cpus: cpus)
                steps[0] = 0
                result = run(c, fake("echo_server", "--delay", "0.1"), compare=compare)
                found.append([(r.status, r.findings, r.noise) for r in result.results])
                assert steps[0] == 0 if cpus == 1 else steps[0] > 3, (what, cpus, steps[0])
            assert found[0] == found[1], what
            assert "hunter2" not in repr(found[1]) and "ghp_" not in repr(found[1])
            # A named list is lined up by name: records moved are no failure, with or without reordering.
            passes = what in ("unchanged", "masked timestamp", "1 for 1.0", "reordered")
            assert (found[1][-1][0] == "pass") == passes, (what, found[1])
    assert quiet > 10, quiet  # live texts redacted by looking where they differ from the learned one


def test_an_answer_that_is_its_recording_exactly_passes_as_the_full_settle_would_judge_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An answer strictly equal to its recording passes without being redacted and compared; one
    that is only ``==`` to it (0 for false, keys in another order) goes the whole way, and every
    result is what settling each answer in full gives (as a replay judging latency does)."""
    from mcp_replay_action.compare.matchers import same_json
    from mcp_replay_action.replay import engine as replay

    def add(seq: int, a: int, response: dict[str, Any]) -> Interaction:
        return req(seq, seq, "tools/call", {"name": "add", "arguments": {"a": a, "b": 7}}, response)

    exact = {"result": {"content": [{"type": "text", "text": "8"}], "isError": False}}
    c = cassette(
        *handshake(),
        add(2, 1, exact),
        add(3, 1, {"result": {"content": [{"type": "text", "text": "8"}], "isError": 0}}),
        add(4, 1, {"result": {"isError": False, "content": [{"type": "text", "text": "8"}]}}),
        add(5, 1, {"result": {"content": [{"type": "text", "text": "8.0"}], "isError": False}}),
        add(6, 1, exact),
    )
    taken: list[bool] = []

    def spy(a: Any, b: Any) -> bool:
        taken.append(same_json(a, b))
        return taken[-1]

    monkeypatch.setattr(replay, "same_json", spy)
    fast = run(c, CALC)
    full = run(c, CALC, max_slowdown=1e9)  # latency judged (never flagged here): every answer settled in full

    def seen(result: Any) -> list[tuple[Any, ...]]:
        return [(r.seq, r.status, r.findings, r.live_error, r.recorded_error, r.name) for r in result.results]

    assert seen(fast) == seen(full)
    assert taken == [True, True, False, False, False, True]  # initialize, then seqs 2..6
    assert [r.status for r in fast.results][1:] == ["pass", "fail", "pass", "fail", "pass"]


def test_an_answer_that_is_its_recording_exactly_closes_what_was_read_ahead_of_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A slow server's answer whose long recording was read ahead meanwhile (``narrow.ReadAhead``)
    passes when it is that recording exactly, and leaves no read-ahead open."""
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.replay import engine as replay
    from mcp_replay_action.values import narrow

    limits = Limits(read_ahead_chars=2000, run_chars=700, learn_min_chars=1000)
    monkeypatch.setattr(replay, "usable_cpus", lambda: 2)
    steps = _counted_read_ahead_steps(monkeypatch)
    opened: list[narrow.ReadAhead] = []
    closed: list[narrow.ReadAhead] = []
    real_init, real_close = narrow.ReadAhead.__init__, narrow.ReadAhead.close

    def init(self: narrow.ReadAhead, text: str, limits: Limits, mark: Any = None) -> None:
        opened.append(self)
        real_init(self, text, limits, mark)

    def close(self: narrow.ReadAhead) -> None:
        closed.append(self)
        real_close(self)

    monkeypatch.setattr(narrow.ReadAhead, "__init__", init)
    monkeypatch.setattr(narrow.ReadAhead, "close", close)
    doc = {"records": [{"name": f"item-{i}", "score": i % 7} for i in range(200)]}
    server = fake("echo_server", "--delay", "0.1")
    ask = {"name": "echo", "arguments": doc}
    first = cassette(*handshake(), req(2, 1, "tools/call", ask, {"result": {}}))
    heard: dict[int, Any] = {}
    replay_cassette(
        first,
        StdioTransport(server),
        Plan(timeout=10.0, confirm=False),
        on_live=lambda inter, live: heard.__setitem__(inter.seq, live),
    )
    exact = cassette(*(replace(inter, response=heard.get(inter.seq, inter.response)) for inter in first.interactions))
    opened.clear()
    closed.clear()
    result = run(exact, server, compare=CompareOptions(limits=limits))
    assert statuses(result) == ["pass", "pass"]
    assert steps[0] > 3 and opened  # the recording was read ahead while the server slept
    assert {id(a) for a in closed} == {id(a) for a in opened}  # and closed once compared


def test_a_long_live_answer_is_decoded_beside_its_recording(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stdio transport decodes a long answer beside the long text of its recording as it
    arrives (``beside.Reader``), and a confirming run beside the first run's live text: the
    recording's own text object where the answer is its recording, the first run's where the
    server repeats itself; the results are those of the usual decode."""
    from mcp_replay_action.compare.options import CompareOptions
    from mcp_replay_action.values import beside

    calls: list[tuple[str, Any]] = []
    real = beside.Reader.finish

    def spy(self: beside.Reader) -> Any:
        value = real(self)
        calls.append((self.known, value))
        return value

    monkeypatch.setattr(beside.Reader, "finish", spy)
    cases = dict(_read_ahead_cases())
    recorded_doc = cases["unchanged"]
    for what in ("unchanged", "middle leaf", "non-ASCII"):
        recorded_text = json.dumps(recorded_doc)
        response = {"result": {"content": [{"type": "text", "text": recorded_text}], "structuredContent": recorded_doc}}
        c = cassette(*handshake(), req(2, 1, "tools/call", {"name": "echo", "arguments": cases[what]}, response))
        found = []
        for beside_from in (1 << 40, 4000):  # never, then for this answer
            compare = CompareOptions(limits=Limits(read_ahead_chars=2000, beside_from=beside_from))
            calls.clear()
            result = replay_cassette(
                c,
                StdioTransport(fake("echo_server")),
                Plan(timeout=10.0, compare=compare),
                confirm=lambda: StdioTransport(fake("echo_server")),
            )
            found.append([(r.status, r.findings, r.noise) for r in result.results])
        assert found[0] == found[1], what
        live_text = json.dumps(cases[what])
        if what == "unchanged":
            assert [known is recorded_text for known, _ in calls] == [True]
            assert calls[0][1]["result"]["content"][0]["text"] is recorded_text
            continue
        # The first run beside the recording, the confirming run beside the first run's answer.
        assert len(calls) == 2, what
        (first_known, first), (second_known, second) = calls
        assert first_known is recorded_text and first["result"]["content"][0]["text"] == live_text
        assert second_known is first["result"]["content"][0]["text"]
        assert second["result"]["content"][0]["text"] is second_known
