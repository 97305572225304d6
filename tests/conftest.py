"""Shared test settings: the tiers (``tiers.py``), Hypothesis's profiles (``profiles.py``), the
fast and plain paths, and the recordings more than one module replays."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import profiles
import tiers
from fakegithub import FakeGitHub, running_fake
from mcp_replay_action.values.limits import FAST_ENV, Limits

profiles.load()


# Before ``-m`` selects (a module with no tier is selected as the default one) and before
# pytest-xdist reads the groups. Under ``--dist loadgroup`` (tests/run.sh) a test of a group runs
# on the worker that runs the rest of its group: the container tier is one group (one image, built
# once, and a build takes both cores); each other module of processes is one (its module-scoped
# recordings are made once, not once per worker), and the bigger groups are handed out first; the
# unit tier's tests go one by one to whichever worker is free, which evens out the end of the run.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(mark.name in tiers.TIERS for mark in item.iter_markers()):
            item.add_marker(tiers.DEFAULT_TIER)
        tier = tiers.tier_of(item)
        if tier == "container":
            item.add_marker(pytest.mark.xdist_group("container"))
        elif tier != "unit" and not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(item.path.name))


GUARD = tiers.GUARD
sys.addaudithook(GUARD.audit)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    GUARD.test = item.nodeid if tiers.tier_of(item) == "unit" else None
    GUARD.broken.clear()
    try:
        return (yield)
    finally:
        GUARD.test = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    report: pytest.TestReport = yield
    if GUARD.broken:
        if report.passed:  # the code under test swallowed the TierError
            report.outcome = "failed"
            report.longrepr = GUARD.broken[-1]
        GUARD.broken.clear()  # reported, once
    return report


@pytest.fixture(scope="module", params=[True, False], ids=["fast", "plain"])
def limits(request: pytest.FixtureRequest) -> Iterator[Limits]:
    """The fast paths on, then all off (the plain path, the reference each fast path is tested
    against): a module that uses this fixture (``pytest.mark.usefixtures("limits")``) runs every
    test over both, as ijson runs every test over every backend. ``MCP_REPLAY_FAST`` is set to
    match, so ``Limits.from_env`` in this process and every CLI a test starts take the same path."""
    fast: bool = request.param
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(FAST_ENV, "1" if fast else "0")
        yield Limits(fast=fast)


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    """The stateful fake GitHub API on 127.0.0.1 with the usual tokens (see ``running_fake``)."""
    fake = running_fake()
    try:
        yield fake
    finally:
        fake.stop()


# Recordings that more than one module replays, made once per session (once per xdist worker)
# in a directory of their own. Each is only read: a test that changes one copies it first.


@pytest.fixture(scope="session")
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


@pytest.fixture(scope="session")
def calc_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's scripted session against the calc server, recorded through ``mcp-replay record``
    once per session (per xdist worker): every test shares the file, so a test copies it before
    anything may write to it (``github_action_run.make_workspace`` does)."""
    from mcp_replay_action.demo import record_demo_session

    path = tmp_path_factory.mktemp("calc") / "calc.jsonl"
    record_demo_session(path)
    return path


@pytest.fixture(scope="session")
def hostile_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session with the benign twin of the hostile server (``github_action_run``)."""
    from github_action_run import record_hostile_twin

    path = tmp_path_factory.mktemp("hostile") / "hostile.jsonl"
    record_hostile_twin(path)
    return path


@pytest.fixture(scope="session")
def typed_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An official-SDK client's session with the typed FastMCP server (the 1.x SDK's), recorded
    through the proxy: tools with output schemas (``test_output_schema.session``)."""
    from e2e_helpers import SERVERS, command, record_through_proxy
    from test_output_schema import session

    python = SERVERS / ".venv-sdk1" / "bin" / "python"
    if not python.exists():
        pytest.skip("tests/run.sh builds tests/servers/.venv-sdk1 (the 1.x SDK)")
    path = tmp_path_factory.mktemp("typed") / "typed.jsonl"
    record_through_proxy(command(python, SERVERS / "typed_server.py"), path, session)
    return path


@pytest.fixture(scope="session")
def shop_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An official-SDK client's session with the shop ``MCPServer`` (progress and a log message
    around ``place_order``: ``test_notifications.shop_session``), recorded through the proxy with
    the client opted in to logs, as a user who wants them is (2026-07-28 sends none otherwise)."""
    from e2e_helpers import SERVERS, python_server, record_through_proxy
    from test_notifications import shop_session

    cassette = tmp_path_factory.mktemp("shop") / "shop.jsonl"
    record_through_proxy(python_server(SERVERS / "shop_server.py"), cassette, shop_session, log_level="debug")
    text = cassette.read_text("utf-8")
    assert '"notifications/progress"' in text and '"placing order"' in text
    return cassette


@pytest.fixture
def reachable_tmp() -> Iterator[Path]:
    """A directory the code under test can reach when it runs as another user (pytest's own
    ``tmp_path`` is root's, mode 0700): for the tests that drop privileges as the image does."""
    made = Path(tempfile.mkdtemp(prefix="mcp-replay-reachable-", dir="/tmp"))
    os.chmod(made, 0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)
