"""A duration the server measured while it answered (compare/durations.py): masked when its key
names a duration and it fits in the call it came with, so an unchanged replay of a server that
times its own work starts the server once; a length that is data is still compared.

Found on PyPI's ``jcodemunch-mcp`` (its ``index_folder`` answers ``"duration_seconds": 0.47``):
every unchanged replay paid a confirmation pass, a second start, to learn that number as noise.
End to end here with ``tests/servers/timed_server.py``, which has that shape (progress per file,
a log line, the duration in the answer's JSON text and ``structuredContent``), recorded through
``mcp-replay record`` with the official SDK client.

The same server reports progress as time allows (every 100 ms): a build that stops short of its
total lands on another step, and sends another count, on each start, so the confirmation pass
learned the count and the last value as noise and the change passed unseen (found by dropping
jcodemunch's last progress step). That no start reaches the total any more is one finding,
``progress-unfinished``, the same on every start (compare/notifications.py)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import PYTHON, cassette_lines, ignore_progress, record_through_proxy, replay
from mcp_replay_action.compare.durations import ms_per_unit, own_timing
from mcp_replay_action.model.results import Finding

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

TIMED = Path(__file__).parent / "servers" / "timed_server.py"
REPLAYS = 3


@pytest.mark.parametrize(
    ("key", "per_unit"),
    [
        ("duration_seconds", 1000.0),
        ("durationMs", 1.0),
        ("elapsed", 1000.0),
        ("took", 1000.0),
        ("latency_us", 0.001),
        ("queryTime", 1000.0),
        ("processing_time_ms", 1.0),
        ("time_ms", 1.0),
        ("start_time", None),  # a moment
        ("createdTime", None),
        ("time", None),  # a moment or data: no unit, no other word
        ("seconds", None),
        ("title", None),
        ("count", None),
    ],
)
def test_which_keys_name_a_duration(key: str, per_unit: float | None) -> None:
    assert ms_per_unit(key) == per_unit


def changed(path: str, before: Any, after: Any) -> Finding:
    return Finding("value-change", "breaking", path, "value changed", before, after, rule="value-changed")


def test_a_duration_that_fits_in_its_call_is_the_server_timing_itself() -> None:
    timed = changed("$.result.content[0].text{json}.duration_seconds", 0.47, 0.39)
    assert own_timing((timed,), 547.3, 433.3) == ()
    # Rounded up past the call by less than half its last digit (0.0035 s measured, 0.004 said).
    assert own_timing((changed("$.result.took", 0.004, 0.003),), 3.6, 3.1) == ()
    in_ms = changed("$.result.structuredContent.elapsedMs", 12, 30)
    assert own_timing((in_ms,), 20.0, 31.0) == ()


def test_a_duration_longer_than_its_call_or_not_a_number_is_compared() -> None:
    longer = changed("$.result.duration_seconds", 0.47, 0.39)
    assert own_timing((longer,), 547.3, 300.0) == (longer,)  # live: 390 ms in a 300 ms call
    track = changed("$.result.structuredContent.duration_seconds", 215, 214)
    assert own_timing((track,), 9.0, 8.0) == (track,)
    assert own_timing((longer,), None, 900.0) == (longer,)  # no recorded time: nothing to bound it
    flag = changed("$.result.duration", True, False)
    word = changed("$.result.duration", "fast", "slow")
    other = changed("$.result.jobs", 0, 0.001)
    assert own_timing((flag, word, other), 50.0, 50.0) == (flag, word, other)


# -- real processes ----------------------------------------------------------------------------------


async def _session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    files = ["a.py", "b.py", "c.py", "d.py"]
    indexed = await client.call_tool("index", {"files": files}, progress_callback=ignore_progress)
    assert not indexed.is_error, indexed
    await client.call_tool("track", {"title": "Blue in Green"})
    return {}


@pytest.fixture(scope="module")
def timed_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("timed") / "timed.jsonl"
    record_through_proxy(f"{shlex.quote(PYTHON)} {shlex.quote(str(TIMED))}", cassette, _session, log_level="debug")
    text = cassette.read_text("utf-8")
    assert '"notifications/progress"' in text and "indexing 4 files" in text and "duration_seconds" in text
    return cassette


def _counted(starts: Path, variant: str = "") -> str:
    """The server's command, appending a line to ``starts`` each time it is started."""
    run = (
        f"env TIMED_SERVER_VARIANT={variant} TIMED_SERVER_STARTS={shlex.quote(str(starts))} "
        f"{shlex.quote(PYTHON)} {shlex.quote(str(TIMED))}"
    )
    return "sh -c " + shlex.quote(f"echo start >> {starts}; exec {run}")


def _replays_clean_with_one_start(cassette: Path, tmp_path: Path) -> None:
    """``REPLAYS`` unchanged replays: no finding, no noise, and the server started once each."""
    starts = tmp_path / "starts"
    for n in range(REPLAYS):
        starts.unlink(missing_ok=True)
        run = replay(_counted(starts), cassette, report=tmp_path / "r.json", gate=False)
        assert run.code == 0 and run.findings() == [], run.describe()
        assert not any(i["noise"] for i in run.interactions()), run.describe()
        assert len(starts.read_text().splitlines()) == 1, (n, run.describe())


def test_a_server_timing_its_own_work_replays_clean_with_one_start(timed_cassette: Path, tmp_path: Path) -> None:
    _replays_clean_with_one_start(timed_cassette, tmp_path)


def test_a_change_next_to_the_duration_and_a_length_that_is_data_are_caught(
    timed_cassette: Path, tmp_path: Path
) -> None:
    fewer = replay(_counted(tmp_path / "s1", "fewer"), timed_cassette, report=tmp_path / "f.json", gate=False)
    assert fewer.code == 1, fewer.describe()
    paths = {f["path"] for f in fewer.findings()}
    assert "$.result.structuredContent.indexed" in paths, fewer.describe()
    assert not any("duration" in p for p in paths), fewer.describe()
    noise = {n["path"] for i in fewer.interactions() for n in i["noise"]}
    assert not any("duration" in p for p in noise), fewer.describe()

    recut = replay(_counted(tmp_path / "s2", "recut"), timed_cassette, report=tmp_path / "t.json", gate=False)
    assert recut.code == 1, recut.describe()
    [found] = recut.findings()
    assert (found["path"], found["before"], found["after"]) == ("$.result.structuredContent.duration_seconds", 215, 214)


def test_progress_that_stops_short_at_another_step_on_each_start_is_still_caught(
    timed_cassette: Path, tmp_path: Path
) -> None:
    starts = tmp_path / "starts"
    run = replay(_counted(starts, "unfinished"), timed_cassette, report=tmp_path / "u.json", gate=False)
    assert len(starts.read_text().splitlines()) == 2, run.describe()  # the confirmation pass ran
    [found] = run.findings()
    assert (found["rule"], found["path"], found["class"]) == (
        "progress-unfinished",
        "$.notifications.progress.finished",
        "additive",
    ), run.describe()
    # What differed between the two starts (the count, the last step and its words) is noise.
    noise = {n["path"] for i in run.interactions() for n in i["noise"]}
    steps = {"$.notifications.progress", "$.notifications.progress.progress", "$.notifications.progress.message"}
    assert noise <= steps, run.describe()
    assert noise, run.describe()


async def _long_session(client: Client) -> dict[str, Any]:
    # 3 files, 0.8 s each: open longer than the 2 s a recording holds later lines back for.
    args = {"files": ["a.py", "b.py", "c.py"], "pause": 0.8}
    assert not (await client.call_tool("index", args, progress_callback=ignore_progress)).is_error
    return {}


def test_the_progress_of_a_call_written_before_it_is_its_own(tmp_path: Path) -> None:
    """A request open longer than 2 s is written where its answer arrives, after its progress
    (jcodemunch-mcp indexing 278 files): the progress is still the request's, by its token."""
    cassette = tmp_path / "long.jsonl"
    record_through_proxy(f"{shlex.quote(PYTHON)} {shlex.quote(str(TIMED))}", cassette, _long_session)
    kinds = [(line["kind"], line["message"].get("method")) for line in cassette_lines(cassette)[1:]]
    progress = ("server-notification", "notifications/progress")
    assert kinds[: kinds.index(("request", "tools/call"))].count(progress) >= 2, kinds  # written before it

    starts = tmp_path / "starts"
    same = replay(_counted(starts), cassette, report=tmp_path / "r.json", gate=False)
    assert same.code == 0 and same.findings() == [], same.describe()
    assert not any(i["noise"] for i in same.interactions()), same.describe()
    assert len(starts.read_text().splitlines()) == 1, same.describe()

    quiet = replay(_counted(tmp_path / "q", "quiet"), cassette, report=tmp_path / "q.json", gate=False)
    assert quiet.code == 1, quiet.describe()
    assert [(f["rule"], f["path"]) for f in quiet.findings()] == [("progress-dropped", "$.notifications.progress")], (
        quiet.describe()
    )


async def _sampled_session(client: Client) -> dict[str, Any]:
    files = [f"m{n}.py" for n in range(24)]
    args = {"files": files, "every": 0.03}  # progress at most every 30 ms: how many is timing
    assert not (await client.call_tool("index", args, progress_callback=ignore_progress)).is_error
    return {}


def test_progress_sent_as_time_allows_replays_clean_with_one_start(tmp_path: Path) -> None:
    """How many progress notifications a server sends as time allows differs on every run
    (jcodemunch-mcp: 45 recorded, 37 to 56 live): not compared, so no second start to learn it."""
    cassette = tmp_path / "sampled.jsonl"
    record_through_proxy(f"{shlex.quote(PYTHON)} {shlex.quote(str(TIMED))}", cassette, _sampled_session)
    values = [
        line["message"]["params"]["progress"]
        for line in cassette_lines(cassette)[1:]
        if line["message"].get("method") == "notifications/progress"
    ]
    assert (
        values[:1] == [1] and values[-1] == 24 and len({b - a for a, b in zip(values, values[1:], strict=False)}) > 1
    ), values
    _replays_clean_with_one_start(cassette, tmp_path)
