"""The floors the benchmarks measure against run as they say (``benchmarks/``; how fast is the
benchmarks' business, not a test's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
RAW_LOOP = ROOT / "benchmarks/_raw_loop.py"
CALC = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from _common import calc_calls, record
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    path = tmp_path_factory.mktemp("bench") / "calls.jsonl"
    record(path, CALC, calc_calls(30))
    return path


@pytest.mark.parametrize("extra", [[], ["--poll"]], ids=["sleeping", "polling"])
def test_the_raw_loop_answers_every_request_of_the_cassette(calls: Path, extra: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, str(RAW_LOOP), *extra, str(calls), *CALC],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""


def test_the_raw_loop_fails_on_a_server_that_leaves_without_answering(calls: Path, tmp_path: Path) -> None:
    # Both ways of waiting end at the closed pipe (poll reports the hang-up) and fail on its
    # empty line: a wait that took no answer for one would pass here.
    mute = tmp_path / "mute.py"
    mute.write_text("import sys\nsys.stdin.readline()\n")
    for extra in ([], ["--poll"]):
        done = subprocess.run(
            [sys.executable, str(RAW_LOOP), *extra, str(calls), sys.executable, str(mute)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode != 0, extra
        assert "JSONDecodeError" in done.stderr, done.stderr
