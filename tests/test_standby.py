"""The confirmation pass's server started ahead (``replay/standby.py``): when a long answer differs
from its recording, the second start overlaps the first run's comparison of it, and the confirming
run takes that server; a replay that never confirms stops it.

Real processes: a stdio server (``_LONG_SERVER``) whose one tool answers a JSON text of about
1.5 MB, one record changed when ``LONG_CHANGE=1`` (the same in every start: a real change); with
``LONG_MINT=1`` the text opens with a snapshot id minted at each start, which a later ``keep`` call
quotes (a threaded value, no reason to start a second server).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.plan import Plan, make_target
from mcp_replay_action.replay.engine import replay_cassette
from mcp_replay_action.replay.standby import Standby
from mcp_replay_action.transport import Transport
from mcp_replay_action.transport.stdio import StdioTransport

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

_LONG_SERVER = r"""
import json, os, secrets, sys
records = [{"id": i, "name": f"record-{i}", "score": i % 7} for i in range(30000)]
if os.environ.get("LONG_CHANGE") == "1":
    records[15000]["score"] = -1
minted = {"snapshot": "snap_" + secrets.token_hex(6)} if os.environ.get("LONG_MINT") == "1" else {}
text = json.dumps({**minted, "records": records})
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "long", "version": "1"}}
    else:
        result = {"content": [{"type": "text", "text": "kept" if msg["params"]["name"] == "keep" else text}]}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "dump", "arguments": {}}}


def _answer(argv: list[str], message: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    lines = json.dumps(INIT) + "\n" + json.dumps(message) + "\n"
    run = subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=60, check=True, env=env)
    return json.loads(run.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def long_cassette(tmp_path_factory: pytest.TempPathFactory) -> tuple[Cassette, list[str]]:
    script = tmp_path_factory.mktemp("long") / "long_server.py"
    script.write_text(_LONG_SERVER)
    argv = [sys.executable, str(script)]
    inters = (
        Interaction(seq=0, kind="request", message=INIT, response=_answer(argv, INIT)),
        Interaction(seq=1, kind="notification", message={"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Interaction(seq=2, kind="request", message=CALL, response=_answer(argv, CALL)),
    )
    return Cassette(meta={}, interactions=inters, path=str(script.with_suffix(".jsonl"))), argv


@pytest.fixture(scope="module")
def minting_cassette(tmp_path_factory: pytest.TempPathFactory) -> tuple[Cassette, list[str]]:
    """The long answer mints a snapshot id, and a later call quotes it."""
    script = tmp_path_factory.mktemp("mint") / "long_server.py"
    script.write_text(_LONG_SERVER)
    argv = [sys.executable, str(script)]
    dump = _answer(argv, CALL, {**os.environ, "LONG_MINT": "1"})
    snapshot = json.loads(dump["result"]["content"][0]["text"])["snapshot"]
    keep = {**CALL, "id": 2, "params": {"name": "keep", "arguments": {"snapshot": snapshot}}}
    inters = (
        Interaction(seq=0, kind="request", message=INIT, response=_answer(argv, INIT)),
        Interaction(seq=1, kind="notification", message={"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Interaction(seq=2, kind="request", message=CALL, response=dump),
        Interaction(seq=3, kind="request", message=keep, response=_answer(argv, keep)),
    )
    return Cassette(meta={}, interactions=inters, path=str(script.with_suffix(".jsonl"))), argv


class _Watched:
    """A real stdio transport that notes when it was started and closed, in one shared log."""

    def __init__(self, argv: list[str], name: str, log: list[str], env: dict[str, str]) -> None:
        self.inner = StdioTransport(argv, env=env)
        self.name, self.log = name, log

    def start(self) -> None:
        self.log.append(f"{self.name} started")
        self.inner.start()

    def close(self) -> None:
        self.log.append(f"{self.name} closed")
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _replay(long_cassette: tuple[Cassette, list[str]], env: dict[str, str]) -> tuple[Any, list[str]]:
    cassette, argv = long_cassette
    log: list[str] = []
    opened: list[_Watched] = []

    def confirm() -> Transport:
        opened.append(_Watched(argv, f"confirming {len(opened) + 1}", log, env))
        return opened[-1]  # type: ignore[return-value]

    plan = Plan(timeout=60.0, target=make_target(shlex.join(argv), None))
    first = _Watched(argv, "first", log, env)
    result = replay_cassette(cassette, first, plan, confirm=confirm)  # type: ignore[arg-type]
    return result, log


def test_a_long_answer_that_differs_starts_the_confirming_server_while_it_is_compared(
    long_cassette: tuple[Cassette, list[str]],
) -> None:
    result, log = _replay(long_cassette, {"LONG_CHANGE": "1"})
    assert [r.status for r in result.results if r.method == "tools/call"] == ["fail"], result.results
    # Started before the first run was over, taken by the confirming run: one second server.
    assert log == ["first started", "confirming 1 started", "first closed", "confirming 1 closed"], log


def test_an_unchanged_long_answer_starts_no_second_server(long_cassette: tuple[Cassette, list[str]]) -> None:
    result, log = _replay(long_cassette, {})
    assert all(r.status == "pass" for r in result.results), result.results
    assert log == ["first started", "first closed"], log


def test_a_long_answer_that_differs_by_its_threaded_id_alone_starts_no_second_server(
    minting_cassette: tuple[Cassette, list[str]],
) -> None:
    result, log = _replay(minting_cassette, {"LONG_MINT": "1"})
    assert all(r.status == "pass" for r in result.results), result.results
    assert [r.substitutions != () for r in result.results if r.method == "tools/call"] == [True, True]
    assert log == ["first started", "first closed"], log


def test_a_server_started_ahead_that_no_run_takes_is_stopped(long_cassette: tuple[Cassette, list[str]]) -> None:
    _, argv = long_cassette
    log: list[str] = []
    standby = Standby(lambda: _Watched(argv, "ahead", log, {}), ahead=True)  # type: ignore[arg-type,return-value]
    standby.warm()
    standby.warm()  # once
    standby.discard()
    assert log == ["ahead started", "ahead closed"], log
    transport, start = standby.take()  # after a discard, a fresh one, started when asked
    assert log == ["ahead started", "ahead closed"] and isinstance(transport, _Watched)
    assert not Standby.may_start_ahead(make_target("x", None, setup="true"))
    assert not Standby.may_start_ahead(make_target(None, "http://127.0.0.1:1/mcp"))


def test_a_server_that_cannot_start_ahead_fails_where_the_confirming_run_starts_it(tmp_path: Path) -> None:
    from mcp_replay_action.errors import ServerStartError

    standby = Standby(lambda: StdioTransport([str(tmp_path / "no-such-server")]), ahead=True)
    standby.warm()  # the error is kept, not raised here
    _, start = standby.take()
    with pytest.raises(ServerStartError):
        start()
