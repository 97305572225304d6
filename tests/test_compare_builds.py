"""``mcp-replay compare-builds``: the bundled sample server and its regressed twin as base and
head, real processes, no cassette committed anywhere; and two builds already running over
Streamable HTTP on 127.0.0.1 (the SDK task tracker, one with a tool removed), compared by URL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from e2e_helpers import cassette_lines, python_server, run_cli
from http_helpers import fast_http_command, free_port, running
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK
from sarif_check import valid_sarif

pytestmark = pytest.mark.integration

SAMPLE = python_server("-m", "mcp_replay_action.samples.calc_server")
REGRESSED = python_server("-m", "mcp_replay_action.samples.calc_server_regressed")
CALLS = ("--call", "add", "--call", "echo", "--call", "now")


def test_the_regressed_head_is_a_breaking_change_and_fails_the_gate(tmp_path: Path) -> None:
    kept = tmp_path / "base.jsonl"
    run = run_cli(
        "compare-builds", "--base", SAMPLE, "--head", REGRESSED, *CALLS, "--cassette", kept, "--sarif", "out.sarif",
        report=tmp_path / "r.json", cwd=tmp_path,
    )  # fmt: skip
    assert run.code == 1, run.describe()
    by_name = {f["name"]: f for f in run.findings()}
    assert by_name["add"]["class"] == "breaking", run.describe()
    assert by_name["echo"]["class"] == "additive", run.describe()
    assert "now" not in by_name  # a timestamp and a uuid: noise, not a change of the head
    assert run.report is not None and not run.report["gate"]["passed"]
    assert "base: 9 interactions explored (handshake era), 3 tools called, 4 skipped" in run.stderr
    # The exploration is kept where asked, an ordinary cassette that says it was explored.
    meta = cassette_lines(kept)[0]["meta"]
    assert meta["explored"]["options"]["calls"] == ["add", "echo", "now"]
    # SARIF points at the kept exploration's lines, a file that exists (relative to the working
    # directory), and names the tool.
    log = valid_sarif((tmp_path / "out.sarif").read_text("utf-8"))
    adds = [r for r in log["runs"][0]["results"] if r["locations"][0]["logicalLocations"][0]["name"] == "add"]
    assert adds and {r["level"] for r in adds} == {"error"}, log
    for add in adds:
        physical = add["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "base.jsonl"
        line = kept.read_text("utf-8").splitlines()[physical["region"]["startLine"] - 1]
        assert '"tools/call"' in line and '"add"' in line, line


def test_base_and_head_the_same_build_is_clean_three_times(tmp_path: Path) -> None:
    for attempt in range(3):
        run = run_cli(
            "compare-builds", "--base", SAMPLE, "--head", SAMPLE, *CALLS, report=tmp_path / f"r{attempt}.json"
        )
        assert run.code == 0, run.describe()
        assert run.findings() == [], run.describe()


def test_a_base_that_cannot_start_is_exit_3_naming_the_base(tmp_path: Path) -> None:
    missing = python_server(tmp_path / "gone.py")
    run = run_cli("compare-builds", "--base", missing, "--head", SAMPLE)
    assert run.code == 3, run.describe()
    (line,) = run.stderr.strip().splitlines()[-1:]
    assert line.startswith("mcp-replay: error: the base build (") and "could not be explored" in line
    assert "Traceback" not in run.stderr


def test_both_builds_are_needed(tmp_path: Path) -> None:
    run = run_cli("compare-builds", "--base", SAMPLE)
    assert run.code == 2, run.describe()
    assert "--head CMD" in run.stderr


def fast_http_build(variant: str = "") -> AbstractContextManager[str]:
    """The task tracker (tests/servers/fast_server.py) over Streamable HTTP on 127.0.0.1, as the
    build ``FAST_SERVER_VARIANT`` names (empty: the healthy one); stopped on the way out."""
    port = free_port()
    return running(fast_http_command(port), f"http://127.0.0.1:{port}/mcp", env={"FAST_SERVER_VARIANT": variant})


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with fast_http_build() as url:
        yield url


def test_a_head_running_at_a_url_with_a_tool_removed_fails_the_gate(base_url: str, tmp_path: Path) -> None:
    with fast_http_build("remove-tool") as head_url:
        run = run_cli("compare-builds", "--base-url", base_url, "--head-url", head_url, report=tmp_path / "r.json")
    assert run.code == EXIT_GATE, run.describe()
    breaking = {(f["method"], f["rule"], f["path"]) for f in run.findings() if f["class"] == "breaking"}
    assert breaking == {("tools/list", "tool-removed", "$.result.tools[name=legacy_sum]")}, run.describe()
    assert run.report is not None and not run.report["gate"]["passed"]
    assert "base: " in run.stderr and "interactions explored" in run.stderr


def test_a_second_server_of_the_same_build_at_another_url_is_clean(base_url: str, tmp_path: Path) -> None:
    with fast_http_build() as head_url:
        run = run_cli("compare-builds", "--base-url", base_url, "--head-url", head_url, report=tmp_path / "r.json")
    assert run.code == EXIT_OK, run.describe()
    assert run.findings() == [], run.describe()
    assert run.report is not None and run.report["gate"]["passed"]


def test_sarif_needs_the_exploration_kept(tmp_path: Path) -> None:
    """Without --cassette the exploration is a temporary file: SARIF would point at lines of a
    file that is gone. One line, exit 2, before any server starts."""
    run = run_cli("compare-builds", "--base", SAMPLE, "--head", SAMPLE, "--sarif", tmp_path / "out.sarif")
    assert run.code == 2, run.describe()
    assert run.stderr.strip().splitlines()[-1] == (
        "mcp-replay: error: --sarif needs --cassette FILE: the findings point at the lines of the kept exploration"
    )
    assert not (tmp_path / "out.sarif").exists()
