"""Threading by data flow, end to end: a server of ours that mints ids in nine shapes under plain
keys (``tests/servers/ids_server.py``, official SDK), recorded with the official SDK client through
``mcp-replay record``, replayed unchanged with no options, then against a build whose id scheme
changed and one whose answer to a threaded call changed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, python_server, record_through_proxy, replay

pytestmark = pytest.mark.integration

IDS = python_server(SERVERS / "ids_server.py")
REPLAYS = 5


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def ids_session(client: Client) -> dict[str, Any]:
    """A user's session: every minted id is taken from an answer and quoted back."""
    await client.list_tools()
    note = (await client.call_tool("create_note", {"title": "groceries"})).structured_content
    assert note is not None
    got = await client.call_tool("get_note", {"id": note["id"]})
    assert not got.is_error, got
    assert not (await client.call_tool("get_customer", {"ref": note["ref"]})).is_error
    prose = _text(await client.call_tool("create_draft", {"title": "plan"}))
    found = re.search(r"Created draft (\S+) \(ref (\w+)\)", prose)
    assert found, prose
    assert not (await client.call_tool("get_draft", {"id": found[1], "ref": found[2]})).is_error
    token = (await client.call_tool("create_token", {"purpose": "deploy"})).structured_content
    assert token is not None
    assert not (await client.call_tool("use_token", {"id": token["id"], "ticket": token["ref"]})).is_error
    import json

    event = json.loads(_text(await client.call_tool("create_event", {"name": "launch"})))
    args = {"ref": event["event"]["ref"], "commit": event["event"]["id"], "slug": event["slug"]}
    assert not (await client.call_tool("get_event", args)).is_error
    await client.read_resource(f"notes://{note['id']}/body")
    await client.call_tool("list_notes", {})
    return {"note": note, "draft": found[1], "token": token, "event": event}


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("threading") / "ids.jsonl"
    record_through_proxy(IDS, path, ids_session)
    return path


def _failed(run: Any) -> list[str]:
    return [
        f"{i['seq']} {i['method']} {i['name']}: {i['findings']}" for i in run.interactions() if i["status"] == "fail"
    ]


def test_an_unchanged_server_replays_its_own_recording_five_times_without_a_failure(
    cassette: Path, tmp_path: Path
) -> None:
    for n in range(REPLAYS):
        run = replay(IDS, cassette, report=tmp_path / f"r{n}.json")
        assert run.code == 0 and not _failed(run), run.describe()
        sent = {s["recorded"]: s["live"] for i in run.interactions() for s in i["substitutions"]}
        # Each id the client quoted back was sent live: whole arguments, words of prose, a URI.
        assert len(sent) >= 7, sent
        assert all(i["status"] in ("pass", "skipped") for i in run.interactions()), run.describe()


def test_verbose_lists_each_substitution(cassette: Path, tmp_path: Path) -> None:
    run = replay(IDS, cassette, "-v", report=tmp_path / "v.json")
    assert run.code == 0, run.describe()
    assert re.search(r"threaded 'note_[0-9a-z]{12}' -> 'note_[0-9a-z]{12}'", run.stdout), run.stdout


def test_an_id_scheme_that_changed_is_threaded_and_a_no_thread_rule_holds_it_as_contract(
    cassette: Path, tmp_path: Path
) -> None:
    changed = f"env IDS_SERVER_VARIANT=scheme {IDS}"
    # The slug is threaded like any minted id: reported as threaded where it was minted, carried
    # into the call that quotes it, never a reason to start the server again.
    run = replay(changed, cassette, report=tmp_path / "scheme.json")
    assert run.code == 0 and not _failed(run), run.describe()
    create_event = next(i for i in run.interactions() if i["name"] == "create_event")
    assert any(len(s["recorded"]) == 12 for s in create_event["substitutions"]), create_event
    # Declared not threaded, the slug is sent as recorded: the call that quotes it fails (the
    # answer that minted it is a hex id the masks hold volatile).
    held = replay(changed, cassette, "--no-thread", "slug", report=tmp_path / "held.json")
    assert held.code == 1, held.describe()
    failed = [i for i in held.interactions() if i["status"] == "fail"]
    assert [i["name"] for i in failed] == ["get_event"], _failed(held)
    assert not failed[0]["substitutions"] or all(len(s["recorded"]) != 12 for s in failed[0]["substitutions"])


def test_a_changed_answer_to_a_threaded_call_is_caught(cassette: Path, tmp_path: Path) -> None:
    changed = f"env IDS_SERVER_VARIANT=title {IDS}"
    run = replay(changed, cassette, report=tmp_path / "title.json")
    assert run.code == 1, run.describe()
    failed = [i for i in run.interactions() if i["status"] == "fail"]
    assert [i["name"] for i in failed] == ["get_note"], _failed(run)
    assert failed[0]["substitutions"], failed[0]  # it was a threaded call
    assert any("GROCERIES" in str(f) for f in failed[0]["findings"]), failed[0]


async def _short_ref_session(client: Client) -> dict[str, Any]:
    token = (await client.call_tool("create_token", {"purpose": "ci"})).structured_content
    assert token is not None
    assert not (await client.call_tool("use_token", {"id": token["id"], "ticket": token["ref"]})).is_error
    return {}


def test_declared_rules_are_stored_by_record_shown_by_inspect_and_checked_by_replay(tmp_path: Path) -> None:
    from e2e_helpers import cassette_lines, run_cli

    path = tmp_path / "rules.jsonl"
    record_through_proxy(IDS, path, _short_ref_session, proxy_args=("--thread", "ref", "--no-thread", "result.x"))
    assert cassette_lines(path)[0]["meta"]["threading"] == {"thread": ["ref"], "no_thread": ["result.x"]}
    shown = run_cli("inspect", path)
    assert shown.code == 0 and "--thread ref" in shown.stdout and "--no-thread result.x" in shown.stdout, shown.stdout
    run = replay(IDS, path, "--thread", "purpose", report=tmp_path / "r.json")
    assert run.code == 0 and not _failed(run), run.describe()
    bad = replay(IDS, path, "--no-thread", "result..[", report=tmp_path / "bad.json")
    assert bad.code == 2 and "threading rule" in bad.stderr, bad.describe()


async def _memory_session(client: Client) -> dict[str, Any]:
    entities = [{"entityType": "person", "name": "Ada Lovelace", "observations": ["wrote the first program"]}]
    assert not (await client.call_tool("create_entities", {"entities": entities})).is_error
    graph = await client.call_tool("read_graph", {})
    assert "Ada Lovelace" in str(graph.content), graph
    await client.call_tool("open_nodes", {"names": ["Ada Lovelace"]})
    await client.call_tool("delete_entities", {"entityNames": ["Ada Lovelace"]})
    return {}


def test_a_registry_server_whose_names_are_the_clients_threads_nothing(tmp_path: Path) -> None:
    """npm server-memory keys entities by the names the client gives: the answers echo them and
    later requests quote them, but the client held them first, so nothing is a correlation and
    every request goes out as recorded."""
    from e2e_helpers import NODE_BIN, command
    from mcp_replay_action.cassette import load
    from mcp_replay_action.compare.correlate import correlate

    memory = NODE_BIN / "mcp-server-memory"
    if not memory.exists():
        pytest.skip("npm server-memory is not installed in tests/servers/node_modules")
    path = tmp_path / "memory.jsonl"
    store = tmp_path / "record" / "memory.jsonl"
    store.parent.mkdir()
    record_through_proxy(command(memory), path, _memory_session, proxy_args=["--env", f"MEMORY_FILE_PATH={store}"])
    assert correlate(load(str(path)).interactions).values == set()
    fresh = tmp_path / "replay" / "memory.jsonl"
    fresh.parent.mkdir()
    run = replay(command(memory), path, "--env", f"MEMORY_FILE_PATH={fresh}", report=tmp_path / "m.json")
    assert run.code == 0 and not _failed(run), run.describe()
    assert not any(i["substitutions"] for i in run.interactions()), run.describe()


async def _ts_session(client: Client) -> dict[str, Any]:
    item = (await client.call_tool("create_item", {"title": "lamp"})).structured_content
    assert item is not None
    assert not (await client.call_tool("get_item", {"id": item["id"], "ref": item["ref"]})).is_error
    prose = _text(await client.call_tool("create_order", {"what": "bulbs"}))
    found = re.search(r"Order (\S+) placed as number (\d+)", prose)
    assert found, prose
    got = await client.call_tool("get_order", {"order": found[1], "number": int(found[2])})
    assert not got.is_error, got
    return {}


def test_a_typescript_sdk_server_replays_its_own_recording_without_a_failure(tmp_path: Path) -> None:
    """The same on the official TypeScript SDK (``tests/servers/ids_server.mjs``): a UUID, a base36
    id, a hex id and an integer in prose, quoted back; three replays, no options, no failure."""
    import shutil

    from e2e_helpers import command

    node = shutil.which("node")
    if node is None or not (SERVERS / "node_modules" / "@modelcontextprotocol" / "sdk").exists():
        pytest.skip("node or @modelcontextprotocol/sdk is not installed")
    server = command(node, SERVERS / "ids_server.mjs")
    path = tmp_path / "ts.jsonl"
    record_through_proxy(server, path, _ts_session)
    for n in range(3):
        run = replay(server, path, report=tmp_path / f"ts{n}.json")
        assert run.code == 0 and not _failed(run), run.describe()
        sent = {s["recorded"] for i in run.interactions() for s in i["substitutions"]}
        assert len(sent) == 4, run.describe()


def test_calibrate_threads_its_runs_and_stores_the_declared_rules(tmp_path: Path) -> None:
    from e2e_helpers import cassette_lines, run_cli

    path = tmp_path / "cal.jsonl"
    record_through_proxy(IDS, path, _short_ref_session)
    done = run_cli("calibrate", "--server", IDS, "--cassette", path, "--runs", "2", "--thread", "purpose")
    assert done.code == 0, done.describe()
    assert cassette_lines(path)[0]["meta"]["threading"] == {"thread": ["purpose"]}
    run = replay(IDS, path, report=tmp_path / "after.json")
    assert run.code == 0 and not _failed(run), run.describe()
