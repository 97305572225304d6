"""The ``--setup`` notes are shown only when the recorded session may have left state
(``replay/effects.py``, ``replay/advice.py``): a call of a tool its recorded listing does not
annotate ``readOnlyHint: true``, or a method of unknown effect.

End to end on a FastMCP server of the 1.x SDK (``tests/servers/typed_server.py``: ``echo`` is
annotated read-only, ``stats`` is not): a session of listings and ``echo`` calls replayed against a
build whose ``echo`` changed has findings and no note; a session calling ``stats`` replayed against
a build whose ``stats`` changed has findings and the note naming ``--setup``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, command, python_server, record_through_proxy, replay
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.replay.advice import LEARNED_STATE, STATE
from mcp_replay_action.replay.effects import Effects

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

SDK1_PYTHON = SERVERS / ".venv-sdk1" / "bin" / "python"  # FastMCP lives in the 1.x SDK
TYPED = SERVERS / "typed_server.py"
NOISY = python_server(SERVERS / "noisy_server.py")


def request(seq: int, method: str, params: dict[str, Any] | None = None, result: Any = None) -> Interaction:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": seq, "method": method}
    if params is not None:
        message["params"] = params
    return Interaction(seq, "request", message, {"jsonrpc": "2.0", "id": seq, "result": result or {}})


def listing(**hints: dict[str, Any]) -> Interaction:
    tools = [{"name": name, "inputSchema": {"type": "object"}, "annotations": a} for name, a in hints.items()]
    return request(0, "tools/list", {}, {"tools": tools})


def may_leave_state(interactions: list[Interaction]) -> bool:
    """What the replay learns of ``interactions`` as it reads them (``Effects.watch``)."""
    effects = Effects()
    for _ in effects.watch(interactions):
        pass
    return effects.may_leave_state()


def test_reads_subscriptions_and_read_only_tools_leave_no_state() -> None:
    reads = [
        request(1, "initialize", {}),
        listing(lookup={"readOnlyHint": True}, wipe={"destructiveHint": True}, save={"readOnlyHint": False}),
        request(2, "resources/read", {"uri": "note://a"}),
        request(3, "resources/subscribe", {"uri": "note://a"}),
        request(4, "logging/setLevel", {"level": "debug"}),
        request(5, "prompts/get", {"name": "p"}),
        request(6, "completion/complete", {}),
        request(7, "tools/call", {"name": "lookup", "arguments": {}}),
        request(8, "ping"),
    ]
    assert not may_leave_state(reads)
    # A tool annotated otherwise, or not at all (the hint's default is false), may write.
    for name in ("save", "wipe"):
        assert may_leave_state([*reads, request(9, "tools/call", {"name": name})]), name
    # A tool never listed is not known to be read-only, and a method of unknown effect may write.
    assert may_leave_state([request(1, "tools/call", {"name": "lookup"})])
    assert may_leave_state([*reads, request(9, "vendor/reindex", {})])


def typed(*flags: str) -> str:
    return command(SDK1_PYTHON, TYPED, *flags)


async def reading(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.call_tool("echo", {"text": "hi"})
    await client.list_resources()
    return {}


async def writing(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.call_tool("stats", {"values": [1, 2, 4]})
    return {}


@pytest.mark.parametrize(
    ("script", "build", "notes"),
    [(reading, "--bloat", []), (writing, "--regressed", [STATE])],
    ids=["read-only-session", "writing-session"],
)
def test_the_setup_note_only_for_a_session_that_may_have_written(
    tmp_path: Path, script: Any, build: str, notes: list[str]
) -> None:
    if not SDK1_PYTHON.exists():
        pytest.skip("tests/run.sh builds tests/servers/.venv-sdk1 (the 1.x SDK)")
    cassette = tmp_path / "session.jsonl"
    record_through_proxy(typed(), cassette, script)
    run = replay(typed(build), cassette, report=tmp_path / "r.json", gate=False)
    assert run.findings(), run.describe()  # findings either way: only the note differs
    [result] = run.report["cassettes"]  # type: ignore[index]
    assert result["notes"] == notes, run.describe()
    assert ("--setup CMD" in run.stdout) == bool(notes), run.describe()


async def noisy_session(client: Client) -> dict[str, Any]:
    await client.call_tool("status", {})
    await client.call_tool("echo", {"text": "hi"})
    return {}


@pytest.mark.parametrize(
    ("extra", "notes"),
    [((), [LEARNED_STATE]), (("--isolate",), []), (("--setup", "true"), [])],
    ids=["nothing-restores-state", "isolated", "setup"],
)
def test_noise_learned_from_a_session_that_may_have_written_says_how_to_start_fresh(
    tmp_path: Path, extra: tuple[str, ...], notes: list[str]
) -> None:
    """``noisy_server``'s tools are not annotated read-only, so its second start may have met what
    the first one left: what the confirmation pass learned is noise only if each start began from
    the recorded state, and with neither ``--setup`` nor ``--isolate`` the report says so."""
    cassette = tmp_path / "noisy.jsonl"
    record_through_proxy(NOISY, cassette, noisy_session)
    run = replay(NOISY, cassette, *extra, report=tmp_path / "r.json", gate=False)
    assert run.code == 0 and not run.findings(), run.describe()
    [result] = run.report["cassettes"]  # type: ignore[index]
    assert any(i["noise"] for i in result["interactions"]), run.describe()  # the pass did learn
    assert result["notes"] == notes, run.describe()
    assert ("--isolate if the server" in run.stdout) == bool(notes), run.describe()
