"""``replay --max-growth X``: an answer more than X times its recorded size in bytes (and over
1 KiB) is a ``size`` finding, beside ``latency``; on a real FastMCP server through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from e2e_helpers import SERVERS, command, record_through_proxy, replay
from mcp_replay_action.replay.engine import SIZE_FLOOR_BYTES, answer_bytes, growth
from test_output_schema import session

pytestmark = pytest.mark.timeout(300)

SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"
TYPED = SERVERS / "typed_server.py"


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not SDK1_PYTHON.exists():
        pytest.skip("tests/run.sh builds tests/servers/.venv-sdk1 (the 1.x SDK)")
    path = tmp_path_factory.mktemp("size") / "typed.jsonl"
    record_through_proxy(command(SDK1_PYTHON, TYPED), path, session)
    return path


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
    assert growth(small, grown, 2.0) is None  # 20x, but under 1 KiB
    big = {"result": {"content": [{"type": "text", "text": "é" * 1000}]}}
    assert answer_bytes(big) == answer_bytes(small) - 1 + 2000  # UTF-8 bytes, not characters
    found = growth(small, big, 2.0)
    assert found is not None and (found.kind, found.before, found.after) == (
        "size",
        answer_bytes(small),
        answer_bytes(big),
    )
    assert growth(None, big, 2.0) is None and growth(small, big, None) is None
