"""Noise learned from two live runs: the confirmation pass, text-aware patterns, calibrated rules.

The end-to-end cases run a real MCP server (``tests/servers/noisy_server.py``, official SDK) whose
answers carry a PID and a duration inside prose, a duration under a key and a random sample:
recorded with the SDK client, replayed with no options, it gives no gating finding, while a real
change in the same sentence still fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, python_server, record_through_proxy, replay, run_cli
from mcp_replay_action.compare.engine import compare
from mcp_replay_action.compare.noise import NoiseRule, learn, split

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits"), pytest.mark.timeout(240)]

NOISY = python_server(SERVERS / "noisy_server.py")


def answer(text: str, duration: float = 1.0) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}], "took": duration}}


def test_prose_learns_the_varying_tokens_and_still_compares_the_rest() -> None:
    live_a = answer("worker pid 4242 ready after 12.5 ms; 3 jobs queued", 12.5)
    live_b = answer("worker pid 977 ready after 8 ms; 3 jobs queued", 8)
    rules = learn([live_a, live_b])
    text_rule = next(r for r in rules if r.path == "$.result.content[0].text")
    assert text_rule.pattern is not None and {"4242", "977", "12.5", "8"} <= set(text_rule.evidence)

    same = answer("worker pid 31 ready after 40 ms; 3 jobs queued", 40)
    kept, noise = split(compare(same, live_a), rules, same)
    assert kept == () and {f.path for f in noise} == {"$.result.content[0].text", "$.result.took"}

    changed = answer("worker pid 31 ready after 40 ms; 4 jobs queued", 40)
    kept, noise = split(compare(changed, live_a), rules, changed)
    assert [f.path for f in kept] == ["$.result.content[0].text"]
    assert [f.path for f in noise] == ["$.result.took"]


def test_structure_and_error_changes_are_never_noise() -> None:
    live_a = {"jsonrpc": "2.0", "id": 1, "result": {"a": 1}}
    live_b = {"jsonrpc": "2.0", "id": 1, "result": {"b": 1}}
    recorded = {"jsonrpc": "2.0", "id": 1, "result": {"c": 1}}
    kept, noise = split(compare(recorded, live_a), learn([live_a, live_b]), recorded)
    assert noise == () and kept


def test_rule_round_trips_through_the_header_form() -> None:
    rule = NoiseRule("$.result.content[0].text", r"pid \d+", ("1", "2"), seq=4)
    assert NoiseRule.from_json(rule.to_json()) == rule
    assert NoiseRule.from_json({"pattern": "x"}) is None


async def noisy_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    for _ in range(2):
        assert not (await client.call_tool("status", {})).is_error
    assert not (await client.call_tool("echo", {"text": "stable"})).is_error
    return {}


@pytest.fixture(scope="module")
def noisy_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("noise") / "noisy.jsonl"
    record_through_proxy(NOISY, cassette, noisy_session)
    return cassette


def test_confirmation_pass_leaves_no_gating_finding_with_no_configuration(noisy_cassette: Path) -> None:
    report = noisy_cassette.with_name("confirm.json")
    run = replay(NOISY, noisy_cassette, report=report, gate=False)
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()
    noise = [n for i in run.interactions() for n in i["noise"]]
    paths = {n["path"] for n in noise}
    assert any(p.endswith(".summary") for p in paths), run.describe()
    assert any(p.endswith(".duration_ms") for p in paths), run.describe()
    assert "noise" in run.stdout, run.describe()
    gated = replay(NOISY, noisy_cassette, "--fail-on-regression", report=report, gate=False)
    assert gated.code == 0, gated.describe()


def test_a_real_change_next_to_the_noise_is_still_caught(noisy_cassette: Path) -> None:
    report = noisy_cassette.with_name("drifted.json")
    run = replay(
        NOISY, noisy_cassette, "--env", "NOISY_SERVER_VARIANT=jobs", "--fail-on-regression", report=report, gate=False
    )
    assert run.code == 1, run.describe()
    paths = {f["path"] for f in run.findings()}
    assert any(p.endswith(".summary") for p in paths), run.describe()  # "4 jobs" is not "3 jobs"
    assert any(p.endswith(".jobs") for p in paths), run.describe()
    assert not any(p.endswith(".duration_ms") or p.endswith(".sample") for p in paths), run.describe()


def test_calibrate_stores_rules_that_inspect_shows_and_replay_applies(noisy_cassette: Path) -> None:
    cassette = noisy_cassette.with_name("calibrated.jsonl")
    cassette.write_bytes(noisy_cassette.read_bytes())
    done = run_cli("calibrate", "--server", NOISY, "--cassette", cassette, "--runs", "3")
    assert done.code == 0, done.describe()
    header = json.loads(cassette.read_text("utf-8").splitlines()[0])
    rules = header["meta"]["noise"]
    assert any(r["path"].endswith(".summary") and "pattern" in r and r["evidence"] for r in rules), rules
    assert any(r["path"].endswith(".duration_ms") for r in rules), rules
    shown = run_cli("inspect", cassette)
    assert "Noise (calibrated" in shown.stdout and ".summary" in shown.stdout, shown.describe()

    # Without the confirmation pass, the stored rules alone keep the replay clean...
    clean = replay(NOISY, cassette, "--no-confirm", report=cassette.with_suffix(".json"), gate=False)
    assert clean.code == 0 and clean.findings() == [], clean.describe()
    assert any(i["noise"] for i in clean.interactions()), clean.describe()
    # ... and a real change in the same sentence still fails.
    drifted = replay(
        NOISY,
        cassette,
        "--no-confirm",
        "--env",
        "NOISY_SERVER_VARIANT=jobs",
        report=cassette.with_suffix(".json"),
        gate=False,
    )
    assert drifted.code == 1 and any(f["path"].endswith(".summary") for f in drifted.findings()), drifted.describe()

    removed = run_cli("calibrate", "--cassette", cassette, "--clear")
    assert removed.code == 0 and "noise" not in json.loads(cassette.read_text("utf-8").splitlines()[0])["meta"]
    noisy = replay(NOISY, cassette, "--no-confirm", report=cassette.with_suffix(".json"), gate=False)
    assert noisy.code == 1 and noisy.findings(), noisy.describe()


def test_noise_survives_the_json_report_round_trip() -> None:
    from mcp_replay_action.model.results import CassetteResult, InteractionResult, Report, Score
    from mcp_replay_action.report import json_report as report_json

    noise = learn([answer("pid 1 up"), answer("pid 2 up")])
    [found] = split(compare(answer("pid 3 up"), answer("pid 1 up")), noise, answer("pid 3 up"))[1]
    result = InteractionResult(seq=1, line=2, method="tools/call", name="x", status="pass", noise=(found,))
    score = Score(100.0, "A", 1.0, 1.0, 1.0, 1.0)
    report = Report(cassettes=(CassetteResult(path="c.jsonl", results=(result,), score=score),), score=score)
    again = report_json.from_dict(json.loads(report_json.dumps(report)))
    assert again.cassettes[0].results[0].noise == (found,)


def test_the_action_calibrate_mode_stores_the_rules(noisy_cassette: Path, tmp_path: Path) -> None:
    from github_action_run import make_workspace, run_action
    from github_events import workflow_dispatch

    ws = make_workspace(tmp_path, {"cassettes/noisy.jsonl": noisy_cassette})
    run = run_action(
        ws,
        event_name="workflow_dispatch",
        event=workflow_dispatch(),
        inputs={"server": NOISY, "mode": "calibrate", "github-token": "t"},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    header = json.loads((ws / "cassettes/noisy.jsonl").read_text("utf-8").splitlines()[0])
    assert any(r["path"].endswith(".summary") for r in header["meta"]["noise"]), header
    assert "noise rule(s) from 3 runs" in run.stdout


def test_noise_is_its_own_section_and_count_in_the_markdown_report(noisy_cassette: Path) -> None:
    markdown = noisy_cassette.with_name("noise.md")
    run = replay(NOISY, noisy_cassette, "--markdown", markdown, report=noisy_cassette.with_name("md.json"), gate=False)
    assert run.code == 0 and run.findings() == [], run.describe()
    text = markdown.read_text("utf-8")
    n = sum(len(i["noise"]) for i in run.interactions())
    assert n >= 2 and f"{n} differences learned as noise (not gating)" in text, text
    assert "<details><summary>🔇" in text and ".summary | 'worker pid" in text and "duration&#95;ms" in text, text
    # Never a regression: every row passes, no failure details, the gate passed.
    assert "❌" not in text and "## ✅ mcp-replay passed" in text and "✅ fail-on: breaking" in text, text
    # The rows of a passing cassette are folded after the noise section.
    status = ("| ✅", "| ❌", "| ⚠️")
    rows = [
        line
        for line in text.splitlines()
        if line.startswith("| ") and "tools/call status" in line and any(mark in line for mark in status)
    ]
    assert len(rows) == 2 and all("✅ pass |  |  |" in row for row in rows), rows


def test_noise_shows_in_the_job_summary_and_pr_comment(noisy_cassette: Path, tmp_path: Path, fake: Any) -> None:
    from github_action_run import make_workspace, run_action
    from github_events import pull_request

    ws = make_workspace(tmp_path, {"cassettes/noisy.jsonl": noisy_cassette})
    event = pull_request(7, "abc1234" + "0" * 33)
    inputs = {"server": NOISY, "github-token": "app-token", "comment": "always"}
    run = run_action(ws, event_name="pull_request", event=event, inputs=inputs, api_url=fake.url)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "learned as noise (not gating)" in run.summary and "<details><summary>🔇" in run.summary, run.summary
    [comment] = fake.comments[("octo/demo", 7)]
    assert "learned as noise (not gating)" in comment["body"] and "❌" not in comment["body"], comment["body"]
    assert not run.annotations("error") and not run.annotations("warning"), run.stdout


class _Logged:
    """A real stdio transport that also remembers every message sent through it."""

    def __init__(self, command: str) -> None:
        import shlex

        from mcp_replay_action.transport.stdio import StdioTransport

        self.inner = StdioTransport(shlex.split(command))
        self.sent: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.inner.send(message)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def test_the_confirming_run_stops_after_the_last_answer_it_needs(noisy_cassette: Path) -> None:
    """The second live run only has to reach the last interaction that failed: the stable echo
    after the two noisy calls is sent once, by the first run."""
    from mcp_replay_action.cassette import load
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import replay_cassette

    first, second = _Logged(NOISY), _Logged(NOISY)
    result = replay_cassette(
        load(noisy_cassette),
        first,
        Plan(timeout=30.0),
        confirm=lambda: second,  # type: ignore[arg-type]
    )
    assert [r.status for r in result.results if r.method == "tools/call"] == ["pass", "pass", "pass"]
    assert sum(1 for r in result.results for _ in r.noise) >= 2, result.results

    def calls(t: _Logged) -> list[str]:
        return [m["params"]["name"] for m in t.sent if m.get("method") == "tools/call"]

    assert calls(first) == ["status", "status", "echo"]
    assert calls(second) == ["status", "status"]


_SECRET_SERVER = r"""
import json, os, secrets, sys
token = "ghp_" + secrets.token_hex(18)  # a fresh secret in every process
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "secret", "version": "1"}}
    else:
        text = f"worker pid {os.getpid()} ready; token={token}"
        result = {"content": [{"type": "text", "text": text}, {"type": "text", "text": "stable"}],
                  "structuredContent": {"auth": {"Authorization": "Bearer " + token}, "pid": os.getpid()}}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


def test_the_confirming_run_redacts_a_fresh_secret_beside_the_first_runs_answer(tmp_path: Path) -> None:
    """The confirming run redacts each answer beside the first run's redacted one (not the
    recording): a secret the server mints anew in each process is still never seen, and the PID
    that differs in all three is noise."""
    from mcp_replay_action.cassette import load, save, with_lines
    from mcp_replay_action.model.cassette import Cassette, Interaction
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.redact import Redactor
    from mcp_replay_action.replay.engine import replay_cassette

    server = tmp_path / "secret_server.py"
    server.write_text(_SECRET_SERVER)
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "status", "arguments": {}}}
    recorded = Redactor().apply(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "content": [
                    {"type": "text", "text": "worker pid 1 ready; token=ghp_" + "ab" * 18},
                    {"type": "text", "text": "stable"},
                ],
                "structuredContent": {"auth": {"Authorization": "Bearer ghp_" + "cd" * 18}, "pid": 1},
            },
        }
    )
    init_answer = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "secret", "version": "1"},
        },
    }
    inters = (
        Interaction(seq=0, kind="request", message=init, response=init_answer),
        Interaction(seq=1, kind="notification", message={"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Interaction(seq=2, kind="request", message=call, response=recorded),
    )
    path = tmp_path / "secret.jsonl"
    save(with_lines(Cassette(meta={}, interactions=inters)), path)
    first, second = _Logged(python_server(server)), _Logged(python_server(server))
    result = replay_cassette(load(path), first, Plan(timeout=30.0), confirm=lambda: second)  # type: ignore[arg-type]
    call_result = next(r for r in result.results if r.method == "tools/call")
    assert call_result.status == "pass", call_result
    assert {f.path for f in call_result.noise} == {
        "$.result.content[0].text",
        "$.result.structuredContent.pid",
    }, call_result.noise
    assert "ghp_" not in repr(result), result
    assert [m["method"] for m in second.sent if "id" in m] == ["initialize", "tools/call"]


def test_a_streamed_cassette_confirms_with_the_interactions_the_first_run_failed_on(
    noisy_cassette: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cassette too big to hold is read from disk again by the confirming run; the lines the
    first run failed on are not decoded again (it still holds their interactions), and the
    replay confirms exactly as it does from a cassette held in memory."""
    import shlex

    from mcp_replay_action.cassette import jsonl, load
    from mcp_replay_action.cassette.schema import interaction_from_json
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import replay_cassette
    from mcp_replay_action.transport.stdio import StdioTransport

    def replayed(cassette: Any) -> Any:
        result = replay_cassette(
            cassette,
            StdioTransport(shlex.split(NOISY)),
            Plan(timeout=30.0),
            confirm=lambda: StdioTransport(shlex.split(NOISY)),
        )
        return [
            (r.seq, r.line, r.status, [f.path for f in r.findings], sorted(f.path for f in r.noise))
            for r in result.results
        ]

    held = replayed(load(noisy_cassette))
    decoded: list[int] = []

    def counted(doc: Any, *, path: str, line: int) -> Any:
        decoded.append(line)
        return interaction_from_json(doc, path=path, line=line)

    monkeypatch.setattr(jsonl, "STREAM_ABOVE_BYTES", 0)
    monkeypatch.setattr(jsonl, "interaction_from_json", counted)
    streamed = load(noisy_cassette, stream=True)
    assert isinstance(streamed.interactions, jsonl.StreamedInteractions)
    decoded.clear()
    assert replayed(streamed) == held
    reusing = list(decoded)
    decoded.clear()
    monkeypatch.setattr(jsonl.StreamedInteractions, "reusing", lambda self, known: self)
    assert replayed(streamed) == held
    noisy_lines = {line for _, line, _, _, noise in held if noise}
    assert noisy_lines
    for line in set(decoded):
        assert reusing.count(line) == decoded.count(line) - (line in noisy_lines), (line, reusing, decoded)


def test_update_keeps_the_bytes_of_an_answer_whose_only_difference_is_noise(noisy_cassette: Path) -> None:
    """``--update`` runs the confirmation pass as any replay does: against an unchanged build,
    the noisy answers (a PID, a duration, a sample) differ from the recording only by noise, so
    nothing is rewritten; against a build that really changed, the changed answers are."""
    cassette = noisy_cassette.with_name("update.jsonl")
    cassette.write_bytes(noisy_cassette.read_bytes())
    before = cassette.read_bytes()
    run = replay(NOISY, cassette, "--update", report=cassette.with_suffix(".json"), gate=False)
    assert run.code == 0, run.describe()
    assert cassette.read_bytes() == before, run.describe()

    drifted = replay(
        NOISY,
        cassette,
        "--update",
        "--env",
        "NOISY_SERVER_VARIANT=jobs",
        report=cassette.with_suffix(".json"),
        gate=False,
    )
    assert drifted.code == 0, drifted.describe()
    old, new = before.decode().splitlines(), cassette.read_text("utf-8").splitlines()
    changed = [json.loads(b)["message"]["params"]["name"] for a, b in zip(old[1:], new[1:], strict=True) if a != b]
    assert changed == ["status", "status"], drifted.describe()
