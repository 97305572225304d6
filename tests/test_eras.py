"""Replay across protocol eras (issue 23 section 1): ``replay --era`` sends a recording of one era
in the other, and compares the answers by meaning.

The servers are one small server on both official Python SDKs (``tests/servers/twin_server.py``):
on PyPI ``mcp`` 1.x (``tests/servers/.venv-sdk1``) a handshake-era server, on ``mcp`` 2.x (the
suite's python) a stateless-only one, the same tools on both, and ``--regressed`` twins with one
tool changed. Each cassette is recorded through ``mcp-replay record`` with the SDK client, which
answers the server's elicitation, roots and sampling requests (mid-call on 1.x, ``input_required``
on 2.x).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.shared.exceptions import MCPError
from pydantic import FileUrl

from e2e_helpers import PYTHON, SERVERS, command, record_through_proxy, replay
from mcp_replay_action.compare.engine import compare
from mcp_replay_action.compare.eras import comparable
from mcp_replay_action.errors import CassetteError, ConfigError
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.replay.translate import translate
from mcp_replay_action.wire.protocol import META_CLIENT_INFO, META_PROTOCOL_VERSION, META_SERVER_INFO
from test_plan import action_plan, cli_plan
from test_pytest_plugin import run as inner

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
pytest_plugins = ["pytester"]

SDK1 = SERVERS / ".venv-sdk1" / "bin" / "python"
TWIN = SERVERS / "twin_server.py"


def twin(sdk: str, *args: str) -> str:
    """The twin server on the handshake-era SDK (``1``) or the stateless-only one (``2``)."""
    return command(SDK1 if sdk == "1" else PYTHON, TWIN, *args)


async def elicit(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"ok": True})


async def roots(context: ClientRequestContext) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///work/a"), name="a")])


async def sample(context: ClientRequestContext, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="short"), model="m")


def session(handshake: bool) -> Any:
    async def script(client: Client) -> dict[str, Any]:
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
        await client.call_tool("echo", {"text": "hi"})
        confirmed = await client.call_tool("confirm", {"action": "wipe"})
        assert confirmed.structured_content == {"result": "wipe: accept ok=True"}, confirmed
        assert (await client.call_tool("roots", {})).structured_content == {"result": "file:///work/a"}
        assert (await client.call_tool("summarize", {"text": "a long text"})).structured_content == {
            "result": "summary: short"
        }
        await client.list_resources()
        await client.read_resource("note://hello")
        with pytest.raises(Exception, match="Unknown resource"):
            await client.read_resource("note://missing")
        if handshake:  # requests the 2026-07-28 revision removed
            await client.send_ping()
            with pytest.raises(Exception, match="Method not found"):
                await client.set_logging_level("info")
        return {}

    return script


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("eras")
    recorded = {"1": out / "sdk1-handshake.jsonl", "2": out / "sdk2-stateless.jsonl"}
    for sdk, path in recorded.items():
        seen = record_through_proxy(
            twin(sdk), path, session(sdk == "1"), elicitation=elicit, roots=roots, sampling=sample
        )
        assert seen["protocol_version"] == ("2025-11-25" if sdk == "1" else "2026-07-28"), seen
    return recorded


def statuses(run: Any) -> list[tuple[str, str]]:
    return [(i["method"], i["status"]) for i in run.interactions()]


def test_a_handshake_recording_replays_clean_on_the_stateless_sdk(cassettes: dict[str, Path]) -> None:
    cassette = cassettes["1"]
    run = replay(twin("2"), cassette, "--era", "stateless", report=cassette.with_suffix(".as-stateless.json"))
    assert run.code == 0 and run.findings() == [], run.describe()
    got = statuses(run)
    # The refused probe and the removed requests are skipped; initialize went as server/discover.
    assert got[:2] == [("server/discover", "skipped"), ("server/discover", "pass")], got
    assert ("ping", "skipped") in got and ("logging/setLevel", "skipped") in got, got
    assert all(s == "pass" for m, s in got[2:] if m not in ("ping", "logging/setLevel")), got
    # The elicitation, roots and sampling answered mid-call in the recording, now input_required
    # rounds (every tools/call passed above).
    assert len([m for m, _ in got if m == "tools/call"]) == 5, got
    [result] = run.report["cassettes"]  # type: ignore[index]
    assert result["era"] == "handshake" and result["replayed_era"] == "stateless", result
    listed = result["era_skipped"]
    assert [entry.split(" (")[0] for entry in listed] == ["ping", "logging/setLevel"], listed
    assert "not sent in the stateless era: ping" in run.stdout, run.describe()


def test_a_changed_tool_is_still_caught_across_eras(cassettes: dict[str, Path]) -> None:
    for recorded, live, era in (("1", "2", "stateless"), ("2", "1", "handshake")):
        cassette = cassettes[recorded]
        report = cassette.with_suffix(f".regressed-{era}.json")
        run = replay(twin(live, "--regressed"), cassette, "--era", era, report=report)
        assert run.code == 1, run.describe()
        found = {(f["method"], f["name"], f["kind"], f["class"]) for f in run.findings()}
        assert found == {("tools/call", "add", "value-change", "breaking")}, run.describe()


def test_a_pinned_sdk_recording_without_discover_replays_in_the_handshake_era(tmp_path: Path) -> None:
    """The official 2.x client pinned to the revision (``mode="2026-07-28"``) sends no
    ``server/discover``; its recording replays against the 1.x SDK build with ``--era handshake``,
    the ``initialize`` built from the requests' ``_meta``."""
    cassette = tmp_path / "sdk2-pinned.jsonl"
    seen = record_through_proxy(
        twin("2"), cassette, session(False), mode="2026-07-28", elicitation=elicit, roots=roots, sampling=sample
    )
    assert seen["protocol_version"] == "2026-07-28"
    assert '"server/discover"' not in cassette.read_text("utf-8")
    run = replay(twin("1"), cassette, "--era", "handshake", report=tmp_path / "r.json")
    assert run.code == 0 and run.findings() == [], run.describe()
    got = statuses(run)
    assert got[0] == ("tools/list", "pass"), got  # the initialize sent first is not a recorded request
    regressed = replay(twin("1", "--regressed"), cassette, "--era", "handshake", report=tmp_path / "x.json")
    found = {(f["method"], f["name"], f["kind"]) for f in regressed.findings()}
    assert regressed.code == 1 and found == {("tools/call", "add", "value-change")}, regressed.describe()


def test_a_recording_whose_discover_was_refused_replays_in_the_handshake_era(tmp_path: Path) -> None:
    """The official 2.x client pinned to the revision, its session asked for a ``server/discover``
    at a version the server does not speak (refused, -32022): that recording replays against the
    1.x SDK build with ``--era handshake``, the refused discover not sent and the ``initialize``
    built from the answered requests' ``_meta``."""
    script = session(False)

    async def refused_first(client: Client) -> dict[str, Any]:
        with pytest.raises(MCPError):
            await client.session.send_discover("2099-01-01")
        return await script(client)

    cassette = tmp_path / "sdk2-refused-discover.jsonl"
    seen = record_through_proxy(
        twin("2"), cassette, refused_first, mode="2026-07-28", elicitation=elicit, roots=roots, sampling=sample
    )
    assert seen["protocol_version"] == "2026-07-28"
    [discover] = [json.loads(line) for line in cassette.read_text("utf-8").splitlines() if '"server/discover"' in line]
    assert "error" in discover["response"], discover
    run = replay(twin("1"), cassette, "--era", "handshake", report=tmp_path / "r.json")
    assert run.code == 0 and run.findings() == [], run.describe()
    got = statuses(run)
    assert got[:2] == [("server/discover", "skipped"), ("tools/list", "pass")], got
    regressed = replay(twin("1", "--regressed"), cassette, "--era", "handshake", report=tmp_path / "x.json")
    found = {(f["method"], f["name"], f["kind"]) for f in regressed.findings()}
    assert regressed.code == 1 and found == {("tools/call", "add", "value-change")}, regressed.describe()


def test_a_stateless_recording_replays_clean_on_the_handshake_sdk(cassettes: dict[str, Path]) -> None:
    cassette = cassettes["2"]
    run = replay(twin("1"), cassette, "--era", "handshake", report=cassette.with_suffix(".as-handshake.json"))
    assert run.code == 0 and run.findings() == [], run.describe()
    got = statuses(run)
    assert got[0] == ("initialize", "pass"), got
    # Each input_required leg is not sent: the server asks mid-call, answered from the recording
    # (the leg's inputRequests beside the next leg's inputResponses), and the last leg passes.
    calls = [s for m, s in got if m == "tools/call"]
    assert calls == ["pass", "pass", "skipped", "pass", "skipped", "pass", "skipped", "pass"], got
    [result] = run.report["cassettes"]  # type: ignore[index]
    assert result["era"] == "stateless" and result["replayed_era"] == "handshake" and result["era_skipped"] == []


def test_the_era_the_server_does_not_speak_is_one_finding(cassettes: dict[str, Path]) -> None:
    cassette = cassettes["1"]
    run = replay(twin("2"), cassette, report=cassette.with_suffix(".as-recorded.json"), gate=False)
    assert run.code == 1, run.describe()
    [finding] = run.findings()
    assert finding["method"] == "initialize" and "protocol era mismatch" in finding["message"], finding
    # Sent in the era the server does not speak, it is that one finding too, naming --era.
    run = replay(twin("1"), cassette, "--era", "stateless", report=cassette.with_suffix(".wrong.json"), gate=False)
    assert run.code == 1, run.describe()
    [finding] = run.findings()
    assert finding["method"] == "server/discover" and "(--era stateless)" in finding["message"], finding
    assert "--era handshake" in finding["message"], finding


# -- the translation and the comparison, on plain data --------------------------------------------


def request(seq: int, method: str, params: dict[str, Any] | None, result: Any) -> Interaction:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": seq, "method": method}
    if params is not None:
        message["params"] = params
    return Interaction(seq, "request", message, {"jsonrpc": "2.0", "id": seq, "result": result}, line=seq + 2)


HELLO = {"name": "client", "version": "9"}


def test_handshake_to_stateless_messages() -> None:
    init = {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}, "clientInfo": HELLO}
    cassette = Cassette(
        interactions=(
            request(0, "initialize", init, {"protocolVersion": "2025-11-25", "capabilities": {}}),
            Interaction(1, "notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
            request(2, "tools/call", {"name": "a", "_meta": {"progressToken": 7}}, {"content": []}),
            request(3, "ping", None, {}),
        )
    )
    done = translate(cassette, "stateless")
    assert done.recorded == "handshake" and done.era == "stateless" and done.across
    opening, call, ping = done.cassette.interactions
    assert opening.method == "server/discover" and opening.line == 2
    meta = opening.message["params"]["_meta"]
    assert meta[META_PROTOCOL_VERSION] == "2026-07-28" and meta[META_CLIENT_INFO] == HELLO
    assert (
        call.message["params"]["_meta"]["progressToken"] == 7
        and META_PROTOCOL_VERSION in call.message["params"]["_meta"]
    )
    assert done.unsent == {3: "not in the 2026-07-28 revision"} and done.listed() == (
        "ping (seq 3): not in the 2026-07-28 revision",
    )
    assert translate(cassette, "handshake").cassette is cassette  # its own era: as recorded
    assert not translate(cassette, "handshake").across and not translate(cassette).across


def test_stateless_to_handshake_folds_input_required_legs() -> None:
    meta = {
        META_PROTOCOL_VERSION: "2026-07-28",
        META_CLIENT_INFO: HELLO,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    asked = {"k": {"method": "roots/list"}}
    cassette = Cassette(
        interactions=(
            request(0, "server/discover", {"_meta": meta}, {"supportedVersions": ["2026-07-28"], "capabilities": {}}),
            request(1, "tools/call", {"name": "r", "_meta": meta}, {"resultType": "input_required", "inputRequests": asked, "requestState": "s1"}),
            request(2, "tools/call", {"name": "r", "inputResponses": {"k": {"roots": []}}, "requestState": "s1", "_meta": meta}, {"content": []}),
        )
    )  # fmt: skip
    done = translate(cassette, "handshake")
    opening, initialized, leg, roots_asked, last = done.cassette.interactions
    assert opening.message["method"] == "initialize" and opening.message["params"]["clientInfo"] == HELLO
    assert initialized.kind == "notification" and initialized.method == "notifications/initialized"
    assert done.unsent.keys() == {1} and leg.seq == 1 and done.listed() == ()
    assert roots_asked.kind == "server-request" and roots_asked.method == "roots/list"
    assert roots_asked.response == {"jsonrpc": "2.0", "id": roots_asked.seq, "result": {"roots": []}}
    assert last.message["params"] == {"name": "r"}  # no protocol _meta, answers or state
    # No server/discover (the 2.x SDK's client pinned to the revision sends none): the handshake
    # opens with an initialize built from the first request's _meta, sent and not compared.
    pinned = translate(Cassette(interactions=cassette.interactions[1:]), "handshake")
    opened, _, first = pinned.cassette.interactions[:3]
    assert opened.method == "initialize" and opened.message["params"]["clientInfo"] == HELLO
    assert pinned.opened == {opened.seq} and opened.seq < 0 and first.seq == 1
    # A server/discover the server refused (a version it does not speak) opens nothing: it is not
    # sent, and the handshake opens as without one, from the answered requests' _meta.
    refusing = {"jsonrpc": "2.0", "id": 0, "error": {"code": -32022, "message": "unsupported"}}
    odd = {**meta, META_PROTOCOL_VERSION: "2099-01-01", META_CLIENT_INFO: {"name": "probe", "version": "0"}}
    refused = replace(cassette.interactions[0], message={**cassette.interactions[0].message, "params": {"_meta": odd}})
    refused = replace(refused, response=refusing)
    unanswered = translate(Cassette(interactions=(refused, *cassette.interactions[1:])), "handshake")
    opened, _, skipped = unanswered.cassette.interactions[:3]
    assert opened.method == "initialize" and opened.message["params"]["clientInfo"] == HELLO, opened
    assert unanswered.opened == {opened.seq} and skipped.seq == 0 and skipped.seq in unanswered.unsent
    assert unanswered.unsent[0].startswith("an unanswered server/discover") and unanswered.listed() == ()
    bare = tuple(replace(i, message={**i.message, "params": {"name": "r"}}) for i in cassette.interactions[1:])
    with pytest.raises(CassetteError, match="no protocol era to translate from"):
        translate(Cassette(interactions=bare), "handshake")


def test_answers_of_two_eras_compared_by_meaning() -> None:
    info = {"name": "s", "version": "1"}
    initialize = {
        "result": {
            "protocolVersion": "2025-11-25",
            "serverInfo": info,
            "capabilities": {"experimental": {}, "tools": {"listChanged": False}},
        }
    }
    discover = {
        "result": {
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "resultType": "complete",
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {META_SERVER_INFO: info},
        }
    }
    assert comparable("initialize", initialize) == comparable("server/discover", discover)
    listed = {
        "result": {
            "tools": [],
            "ttlMs": 5,
            "cacheScope": "public",
            "resultType": "complete",
            "_meta": {META_SERVER_INFO: info},
        }
    }
    assert comparable("tools/list", listed) == {"result": {"tools": []}}
    missing = {"error": {"code": -32002, "message": "Unknown resource: x"}}
    renumbered = {"error": {"code": -32602, "message": "Unknown resource: x"}}
    assert comparable("resources/read", missing) == comparable("resources/read", renumbered)
    assert comparable("tools/call", missing) != comparable("tools/call", renumbered)  # only for resources
    # What is not the era is compared as usual: a capability lost, an input_required left over.
    lost = {"result": {**discover["result"], "capabilities": {}}}
    [finding] = compare(comparable("initialize", initialize), comparable("server/discover", lost))
    assert finding.rule == "capability-removed" and finding.cls == "breaking", finding
    asking = {"result": {"resultType": "input_required", "inputRequests": {}}}
    assert compare(comparable("tools/call", {"result": {}}), comparable("tools/call", asking))
    # The user's own answer's _meta is kept.
    assert comparable("tools/call", {"result": {"_meta": {"mine": 1, META_SERVER_INFO: info}}}) == {
        "result": {"_meta": {"mine": 1}}
    }


def test_era_is_one_option_of_the_cli_and_the_action(tmp_path: Path) -> None:
    (tmp_path / "cassettes").mkdir()
    (tmp_path / "cassettes" / "a.jsonl").write_text("{}\n")
    root = tmp_path.resolve()
    action = action_plan({"server": "python -m s", "era": "stateless"}, root)
    assert action.era == "stateless"
    assert (
        cli_plan(["--server", "python -m s", "--cassette", "cassettes/*.jsonl", "--era", "stateless"], root).era
        == "stateless"
    )
    assert cli_plan(["--server", "python -m s", "--cassette", "cassettes/*.jsonl"], root).era == "recorded"
    assert action_plan({"server": "python -m s"}, root).era == "recorded"
    with pytest.raises(ConfigError, match="input era"):
        action_plan({"server": "python -m s", "era": "modern"}, root)
    with pytest.raises(ConfigError, match="--update"):
        cli_plan(["--server", "python -m s", "--cassette", "cassettes/*.jsonl", "--era", "handshake", "--update"], root)


# -- the pytest plugin: the same era option, at its edge ------------------------------------------

ACROSS_TEST = """
import pytest
from mcp_replay_action.pytest_plugin import assert_no_regressions


@pytest.mark.mcp_cassette("cassettes/sdk1.jsonl"{marker})
def test_across_eras(mcp_replay_verify):
    assert_no_regressions(mcp_replay_verify, fail_on="any")
    assert (mcp_replay_verify.era, mcp_replay_verify.replayed_era) == ("handshake", "stateless")
    assert [entry.split(" (")[0] for entry in mcp_replay_verify.era_skipped] == ["ping", "logging/setLevel"]
"""


@pytest.fixture
def sdk1(cassettes: dict[str, Path], pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester directory holding the 1.x recording at ``cassettes/sdk1.jsonl``."""
    (pytester.path / "cassettes").mkdir()
    shutil.copy(cassettes["1"], pytester.path / "cassettes" / "sdk1.jsonl")
    return pytester


def test_the_pytest_plugin_sends_a_cassette_in_another_era(sdk1: pytest.Pytester) -> None:
    pytester = sdk1
    pytester.makepyfile(test_across=ACROSS_TEST.format(marker=""))
    healthy, regressed = twin("2"), twin("2", "--regressed")
    # The 1.x recording against the stateless-only 2.x twin: clean only when sent stateless.
    inner(pytester, "--mcp-replay-target-stdio", healthy, "--mcp-replay-era", "stateless").assert_outcomes(passed=1)
    as_recorded = inner(pytester, "--mcp-replay-target-stdio", healthy)
    as_recorded.assert_outcomes(failed=1)
    assert "protocol era mismatch" in as_recorded.stdout.str(), as_recorded.stdout.str()
    caught = inner(pytester, "--mcp-replay-target-stdio", regressed, "--mcp-replay-era", "stateless")
    caught.assert_outcomes(failed=1)
    out = caught.stdout.str()
    assert "E       AssertionError: 1 breaking and 0 additive change(s)" in out, out
    assert (
        "(handshake 2025-11-25 sent as stateless)" in out and "[FAIL] #4 tools/call add  breaking value-change" in out
    )
    # The ini key, the marker's era= over it, and the command line over both (as for the server).
    pytester.makeini(f"[pytest]\nmcp_replay_server = {healthy}\nmcp_replay_era = stateless\n")
    inner(pytester).assert_outcomes(passed=1)
    pytester.makepyfile(test_across=ACROSS_TEST.format(marker=", era='stateless'"))
    pytester.makeini(f"[pytest]\nmcp_replay_server = {healthy}\nmcp_replay_era = handshake\n")
    inner(pytester).assert_outcomes(passed=1)
    inner(pytester, "--mcp-replay-era", "recorded").assert_outcomes(failed=1)


def test_the_pytest_plugins_era_refuses_what_the_cli_refuses(sdk1: pytest.Pytester) -> None:
    pytester = sdk1
    pytester.makepyfile(test_across=ACROSS_TEST.format(marker=", era='modern'"))
    bad = inner(pytester, "--mcp-replay-target-stdio", twin("2"))
    bad.assert_outcomes(errors=1)
    assert "@pytest.mark.mcp_cassette: unknown era 'modern' (expected one of: recorded, handshake, stateless)" in (
        bad.stdout.str()
    )
    pytester.makepyfile(test_across=ACROSS_TEST.format(marker=""))
    pytester.makeini("[pytest]\nmcp_replay_era = modern\n")
    usage = inner(pytester)
    assert usage.ret == pytest.ExitCode.USAGE_ERROR and "ini mcp_replay_era: unknown era 'modern'" in usage.stderr.str()
    pytester.makeini("[pytest]\n")
    # An update keeps each cassette's own era: refused with the options' own message, no server started.
    update = inner(
        pytester, "--mcp-replay-target-stdio", twin("2"), "--mcp-replay-era", "stateless", "--mcp-replay-update"
    )
    update.assert_outcomes(errors=1)
    assert "mcp_replay_verify: --era stateless cannot be combined with --update" in update.stdout.str()
