"""``replay --jobs N``: several cassettes at once, each with its own server, and a report and
output identical to a serial run's (order included)."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e_helpers import PYTHON, REPO, command, run_cli, steady, untimed

pytestmark = pytest.mark.integration

CASSETTES = str(REPO / "cassettes/calc/*.jsonl")


@pytest.mark.parametrize("sample", ["calc_server", "calc_server_regressed"])
def test_parallel_replay_reports_exactly_what_a_serial_one_does(tmp_path: Path, sample: str) -> None:
    server = command(PYTHON, "-m", f"mcp_replay_action.samples.{sample}")
    args = ("replay", "--server", server, "--cassette", CASSETTES)
    serial = run_cli(*args, "--jobs", "1", report=tmp_path / "1.json")
    parallel = run_cli(*args, "--jobs", "3", report=tmp_path / "3.json")
    assert serial.report is not None and parallel.report is not None, parallel.describe()
    assert len(parallel.report["cassettes"]) == 3
    assert steady(parallel.report) == steady(serial.report)
    assert parallel.code == serial.code
    assert untimed(parallel.stdout) == untimed(serial.stdout)


@pytest.mark.parametrize("value", ["0", "-2", "many", "257"])
def test_a_bad_job_count_is_a_usage_error(value: str) -> None:
    done = run_cli("replay", "--server", "true", "--cassette", CASSETTES, "--jobs", value)
    assert done.code == 2
    assert "expected a number from 1 to 256 or 'auto'" in done.stderr, done.describe()


def test_the_action_input_jobs(tmp_path: Path) -> None:
    from mcp_replay_action.errors import ConfigError
    from mcp_replay_action.github.settings import Settings

    def jobs(value: str) -> int:
        return Settings.from_env({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_SERVER": "x", "INPUT_JOBS": value}).jobs

    assert jobs("") == 1 and jobs("4") == 4 and jobs("auto") >= 1
    with pytest.raises(ConfigError, match="input jobs: expected a number from 1 to 256 or 'auto', got 'two'"):
        jobs("two")
