"""``--reset CMD`` (action input ``reset``): the confirmation pass needs a server as fresh as the
first pass met. A ``--url`` server this replay did not start keeps the state the first pass left
(``tests/servers/counter_server.py``: a count raised by 2 per call, kept in a file, and a request
tag drawn afresh in every answer): without ``--reset`` the confirmation pass is not run against it
and the report says noise could not be told apart; with it, the pass runs after the reset and the
tag is learned as noise. A replay with findings and no ``--setup`` says state can explain them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import PYTHON, SERVERS, python_server, record_through_proxy, run_cli
from http_helpers import free_port, running
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.options import clean_reset
from mcp_replay_action.plan import make_target
from mcp_replay_action.replay.advice import STATE, UNCONFIRMED

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

COUNTER = SERVERS / "counter_server.py"


async def bumps(client: Client) -> dict[str, Any]:
    for _ in range(2):
        assert not (await client.call_tool("bump", {})).is_error
    return {}


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A session recorded from a count of 0 (answers "count 2", "count 4"), and the count file."""
    where = tmp_path_factory.mktemp("counter")
    counter = where / "counter"
    cassette = where / "counter.jsonl"
    record_through_proxy(
        python_server(COUNTER),
        cassette,
        bumps,
        proxy_args=["--env", f"COUNTER_FILE={counter}", "--env-public", "COUNTER_FILE"],
    )
    return cassette, counter


def _replay_url(cassette: Path, counter: Path, *extra: str) -> Any:
    counter.write_text("0")  # the recorded state, restored by hand: only the passes differ
    port = free_port()
    with running(
        [PYTHON, str(COUNTER), str(port)], f"http://127.0.0.1:{port}/mcp", env={"COUNTER_FILE": str(counter)}
    ) as url:
        return run_cli(
            "replay",
            "--url",
            url,
            "--cassette",
            str(cassette),
            "--cwd",
            str(counter.parent),
            *extra,
            report=cassette.with_name("report.json"),
        )


def test_without_reset_a_url_server_is_replayed_once_and_the_report_says_so(counted: tuple[Path, Path]) -> None:
    cassette, counter = counted
    run = _replay_url(cassette, counter)
    assert run.code == 1, run.describe()  # the tag differs, and nothing can tell it is noise
    assert counter.read_text() == "4", run.describe()  # one pass of two bumps: no second pass ran
    [result] = run.report["cassettes"]
    assert result["notes"] == [UNCONFIRMED, STATE], run.describe()
    assert "--reset CMD" in run.stdout and "--setup CMD" in run.stdout, run.describe()


def test_with_reset_the_confirmation_pass_meets_a_fresh_server(counted: tuple[Path, Path]) -> None:
    cassette, counter = counted
    run = _replay_url(cassette, counter, "--reset", "sh -c 'echo 0 > counter'")
    assert run.code == 0, run.describe()
    assert counter.read_text() == "4", run.describe()  # reset before the second pass, then bumped
    [result] = run.report["cassettes"]
    assert result["notes"] == [], run.describe()
    noise = [n for i in result["interactions"] for n in i["noise"]]
    assert noise and all(n["path"].endswith("text") or "structuredContent" in n["path"] for n in noise), run.describe()


def test_reset_is_split_like_server_and_needs_a_url() -> None:
    assert clean_reset("") == ()
    assert clean_reset(" sh -c 'echo 0 > counter' ") == ("sh", "-c", "echo 0 > counter")
    with pytest.raises(ConfigError, match="input reset"):
        clean_reset("sh 'unclosed")
    with pytest.raises(ConfigError, match="--reset"):
        make_target("python3 -m x", None, reset="true")
    assert make_target(None, "http://127.0.0.1:1/mcp", reset="true").fresh_each_start
    assert not make_target(None, "http://127.0.0.1:1/mcp").fresh_each_start
    assert make_target("python3 -m x", "http://127.0.0.1:1/mcp").fresh_each_start
