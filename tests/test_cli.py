"""The command line as a user meets it: exit codes, one-line errors, report files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_helpers import run_in_process

pytestmark = pytest.mark.integration

CALC = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
REGRESSED = f"{sys.executable} -m mcp_replay_action.samples.calc_server_regressed"


def cli(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_replay_healthy_passes_and_writes_every_report(demo_cassette: Path, tmp_path: Path) -> None:
    files = {k: tmp_path / f"r.{k}" for k in ("json", "md", "xml", "badge")}
    done = cli(
        "replay",
        "--server",
        CALC,
        "--cassette",
        str(demo_cassette),
        "--min-grade",
        "A",
        "--fail-on-regression",
        "--report",
        str(files["json"]),
        "--markdown",
        str(files["md"]),
        "--junit",
        str(files["xml"]),
        "--badge",
        str(files["badge"]),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GRADE A" in done.stdout
    report = json.loads(files["json"].read_text())
    assert report["schema"] == "mcp-replay/report@1" and report["grade"] == "A" and report["failed"] == 0
    assert json.loads(files["badge"].read_text())["message"].startswith("A")
    assert "<testsuite" in files["xml"].read_text()
    assert "mcp-replay" in files["md"].read_text()


def test_replay_regressed_fails_the_gate_with_exit_1(demo_cassette: Path) -> None:
    done = cli("replay", "--server", REGRESSED, "--cassette", str(demo_cassette), "--fail-on-regression", "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    kinds = {i["kind"] for c in report["cassettes"] for i in c["interactions"] if i["kind"]}
    assert kinds == {"value-change", "structure-change"}
    lines = {i["line"] for c in report["cassettes"] for i in c["interactions"] if i["status"] == "fail"}
    assert lines == {5, 6}  # header is line 1; add and echo are the 4th and 5th interactions
    # With no gate flag, the breaking change (a key removed) fails the run, as mcp-recorder verify
    # and pytest do; --fail-on none only reports; --min-grade applies on top of either.
    default = cli("replay", "--server", REGRESSED, "--cassette", str(demo_cassette))
    assert default.returncode == 1 and "gate FAILED (fail on breaking)" in default.stdout
    assert "1 additive change reported, not gating (accept with a refresh)" in default.stdout
    only_report = ("replay", "--server", REGRESSED, "--cassette", str(demo_cassette), "--fail-on", "none")
    assert cli(*only_report).returncode == 0
    # One breaking change in nine answers scores 93.9, but an A means nothing breaking: the letter
    # is capped at B, so --min-grade A fails and B passes.
    capped = cli(*only_report, "--min-grade", "A")
    assert capped.returncode == 1 and "grade B is below the minimum A" in capped.stdout, capped.stdout
    assert "GRADE B  (93.9/100)  capped at B: a breaking change" in capped.stdout, capped.stdout
    assert cli(*only_report, "--min-grade", "B").returncode == 0
    clash = cli(*only_report, "--fail-on-regression")
    assert clash.returncode == 2 and "contradicts --fail-on none" in clash.stderr


def test_ignore_path_silences_a_known_change(demo_cassette: Path) -> None:
    done = cli(
        "replay",
        "--server",
        REGRESSED,
        "--cassette",
        str(demo_cassette),
        "--fail-on-regression",
        "--ignore-path",
        "result.content[].text",
        "--ignore-key",
        "echoed",
    )
    assert done.returncode == 0, done.stdout
    assert "matched nothing" not in done.stderr, done.stderr


def test_ignore_rules_that_match_nothing_are_warned_by_name(demo_cassette: Path) -> None:
    done = cli(
        "replay",
        "--server",
        REGRESSED,
        "--cassette",
        str(demo_cassette),
        "--ignore-path",
        "result.contnet[].text",
        "--ignore-key",
        "echoed",
        "--ignore-key",
        "ehcoed",
    )
    assert "--ignore-path 'result.contnet[].text' matched nothing" in done.stderr, done.stderr
    assert "--ignore-key 'ehcoed' matched nothing" in done.stderr, done.stderr
    assert "'echoed'" not in done.stderr, done.stderr


def test_missing_binary_exits_3_with_one_line(demo_cassette: Path) -> None:
    done = cli("replay", "--server", "no-such-mcp-server --flag", "--cassette", str(demo_cassette))
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and "not found" in done.stderr and "Traceback" not in done.stderr


def test_malformed_cassette_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "mcp-replay/cassette@1", "meta": {}}\n{"seq": 0, "kind": "request"\n')
    done = run_in_process("replay", "--server", CALC, "--cassette", str(bad))
    assert done.returncode == 2
    assert f"{bad}:2: invalid JSON" in done.stderr and done.stderr.count("\n") == 1
    assert run_in_process("inspect", str(bad)).returncode == 2


def test_usage_errors_exit_2(demo_cassette: Path) -> None:
    # In process (click's runner): refused before anything runs. The tests above and below run
    # the real entry point.
    assert run_in_process("replay", "--cassette", str(demo_cassette)).returncode == 2  # neither --server nor --url
    assert run_in_process("replay", "--server", CALC, "--cassette", "nothing/**/*.jsonl").returncode == 2
    assert run_in_process("replay", "--server", CALC, "--cassette", demo_cassette, "--env", "NOEQUALS").returncode == 2


def test_inspect_diff_and_convert(demo_cassette: Path, tmp_path: Path) -> None:
    shown = cli("inspect", str(demo_cassette))
    assert shown.returncode == 0 and "tools/call" in shown.stdout and "handshake" in shown.stdout
    same = cli("diff", str(demo_cassette), str(demo_cassette), "--fail-on-regression")
    assert same.returncode == 0, same.stdout
    foreign = tmp_path / "c.json"
    assert cli("convert", str(demo_cassette), str(foreign)).returncode == 0
    assert json.loads(foreign.read_text())["version"] == "1.0"
    back = cli("replay", "--server", CALC, "--cassette", str(foreign), "--fail-on-regression")
    assert back.returncode == 0, back.stdout + back.stderr


def test_record_against_a_server_that_dies_at_start_exits_3(tmp_path: Path) -> None:
    crash = Path(__file__).parent / "fakes" / "crash_server.py"
    target = tmp_path / "c.jsonl"
    done = cli("record", "--server", f"{sys.executable} {crash} --at-start", "--cassette", str(target))
    assert done.returncode == 3, done.stderr
    assert "before anything was recorded" in done.stderr and "settings.toml" in done.stderr
    assert not target.exists()


def test_verbose_lists_each_threaded_value_recorded_to_live(demo_cassette: Path) -> None:
    # The demo's job_status quotes the id start_job minted; the live server mints another, and -v
    # says which recorded value was sent as which live one (issue 9 section 1).
    entries = [json.loads(line) for line in demo_cassette.read_text("utf-8").splitlines()[1:]]
    recorded = next(
        e["response"]["result"]["structuredContent"]["jobId"]
        for e in entries
        if (e["message"].get("params") or {}).get("name") == "start_job"
    )
    done = cli("replay", "--server", CALC, "--cassette", str(demo_cassette), "-v", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # Both where it was minted (start_job: expected to differ, issue 27) and where it was quoted.
    threaded = {
        i["seq"]: (s["recorded"], s["live"]) for c in report["cassettes"] for i in c["interactions"] for s in i["substitutions"]
    }
    [(was, now)] = set(threaded.values())
    assert was == recorded and now != recorded and len(threaded) == 2, threaded
    console = cli("replay", "--server", CALC, "--cassette", str(demo_cassette), "-v")
    lines = console.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "#7 tools/call job_status" in line)
    assert lines[at + 1].strip().startswith(f"threaded {recorded!r} -> '"), console.stdout
