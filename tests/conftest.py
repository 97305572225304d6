"""Shared test settings."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from fakegithub import FakeGitHub, running_fake

# In CI the property tests explore the same examples on every run, so a pass or a failure can be
# reproduced; locally they keep searching new ground each time.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    """The stateful fake GitHub API on 127.0.0.1 with the usual tokens (see ``running_fake``)."""
    fake = running_fake()
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture(scope="module")
def demo_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The cassette ``mcp-replay demo`` records against the bundled calc server (its replays
    against the healthy and the regressed build are checked on the way)."""
    keep = tmp_path_factory.mktemp("demo")
    done = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "demo", "--keep", str(keep)],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "GRADE A" in done.stdout and "value-change" in done.stdout and "structure-change" in done.stdout
    return keep / "demo.jsonl"
