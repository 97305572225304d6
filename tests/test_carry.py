"""Value threading: minted values in live responses are carried into later requests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.compare.carry import Carry, translated
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.model.results import Substitution

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits")]

REC_ID = "3f2b8c1e-9a7d-4e2b-8f1c-0a9b8c7d6e5f"
LIVE_ID = "77aa0011-2233-4455-8899-aabbccddeeff"


def flow(answer: Any, *later: dict[str, Any], first: dict[str, Any] | None = None) -> Carry:
    """A Carry over a recording: a request (``first``) answered by ``answer`` (seq 1), then the
    ``later`` messages, each a request answered with nothing of note."""
    opening = first or {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "make"}}
    interactions = [Interaction(1, "request", opening, answer)]
    for n, message in enumerate(later, start=2):
        interactions.append(Interaction(n, "request", {"jsonrpc": "2.0", "id": n, **message}, {"result": {}}))
    return Carry(interactions)


def _started(job: str) -> dict[str, Any]:
    return {"result": {"structuredContent": {"jobId": job}, "content": [{"type": "text", "text": f"started {job}"}]}}


def test_structured_minted_id_is_threaded() -> None:
    later = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "job_status", "arguments": {"jobId": REC_ID}},
    }
    carry = flow(_started(REC_ID), later)
    carry.learn(_started(REC_ID), _started(LIVE_ID), 1)
    assert carry.apply(later)["params"]["arguments"]["jobId"] == LIVE_ID
    assert later["params"]["arguments"]["jobId"] == REC_ID  # the recorded message is not mutated


def test_request_state_and_cursor_keys_are_threaded_even_when_short() -> None:
    retry = {"params": {"requestState": "abc", "inputResponses": {}}}
    carry = flow({"result": {"requestState": "abc", "nextCursor": "p2"}}, retry, {"params": {"cursor": "p2"}})
    carry.learn(
        {"result": {"requestState": "abc", "nextCursor": "p2"}},
        {"result": {"requestState": "xyz", "nextCursor": "q9"}},
        1,
    )
    assert carry.apply(retry)["params"]["requestState"] == "xyz"
    assert carry.apply({"params": {"cursor": "p2"}})["params"]["cursor"] == "q9"


def test_embedded_tokens_in_text_and_json_text() -> None:
    recorded = {"result": {"content": [{"type": "text", "text": '{"task": "tsk_81f0c2a9d3", "n": 1}'}]}}
    carry = flow(recorded, {"params": {"uri": "tasks://tsk_81f0c2a9d3/log"}})
    carry.learn(recorded, {"result": {"content": [{"type": "text", "text": '{"task": "tsk_00aa11bb22", "n": 1}'}]}}, 1)
    assert (
        carry.apply({"params": {"uri": "tasks://tsk_81f0c2a9d3/log"}})["params"]["uri"] == "tasks://tsk_00aa11bb22/log"
    )


def test_short_values_and_values_the_client_sent_first_are_not_threaded() -> None:
    message = {"params": {"arguments": {"a": "5"}}}
    carry = flow({"result": {"content": [{"type": "text", "text": "5"}]}}, message)
    carry.learn(
        {"result": {"content": [{"type": "text", "text": "5"}]}},
        {"result": {"content": [{"type": "text", "text": "6"}]}},
        1,
    )
    assert not carry
    assert carry.apply(message) is message
    # The client chose "hello world" (the first request held it): an echo, not a mint.
    echo = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"text": "hello world"}}}
    carry = flow({"result": {"text": "hello world"}}, {"params": {"q": "hello world"}}, first=echo)
    carry.learn({"result": {"text": "hello world"}}, {"result": {"text": "goodbye world"}}, 1)
    assert not carry


def test_text_with_different_shape_does_not_pair_tokens() -> None:
    carry = flow({"result": {"t": f"started {REC_ID}"}}, {"params": {"id": REC_ID}})
    carry.learn({"result": {"t": f"started {REC_ID}"}}, {"result": {"t": f"failed to start, see {LIVE_ID}"}}, 1)
    assert not carry


def test_only_values_later_requests_quote_are_remembered() -> None:
    later = [{"params": {"arguments": {"jobId": REC_ID}}}]
    recorded = {"result": {"a": REC_ID, "b": "7f0e1d2c-3b4a-4958-8766-554433221100"}}
    carry = flow(recorded, *later)
    carry.learn(recorded, {"result": {"a": LIVE_ID, "b": "0" * 8 + "-aaaa"}}, 1)
    assert carry.mapping == {REC_ID: LIVE_ID}
    assert carry.apply(later[0]) == {"params": {"arguments": {"jobId": LIVE_ID}}}


def _links(*uris: str) -> dict:
    return {"result": {"content": [{"type": "resource_link", "uri": u, "name": u.rsplit("/", 1)[-1]} for u in uris]}}


def test_reordered_resource_links_are_identities_not_minted_values() -> None:
    # The same three links in another order: the later resources/read must go out as recorded.
    uris = [f"file:///srv/data/report{n}_2026q4x{n}a.csv" for n in (1, 2, 3)]
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": uris[0]}}
    carry = flow(_links(*uris), read)
    carry.learn(_links(*uris), _links(uris[2], uris[0], uris[1]), 1)
    assert not carry
    sent, subs = carry.rewrite(read)
    assert sent == read and subs == ()


def test_reordered_opaque_ids_pair_by_identity_not_index() -> None:
    # Token-shaped ids returned in another order are still all there live: nothing is threaded.
    ids = ["a81f0c2a9d3e47b1", "b92e1d3b0e4f58c2", "c03f2e4c1f5069d3"]
    later = [{"params": {"arguments": {"id": ids[0]}}}]
    recorded = {"result": {"structuredContent": {"items": [{"id": i} for i in ids]}}}
    carry = flow(recorded, *later)
    carry.learn(recorded, {"result": {"structuredContent": {"items": [{"id": i} for i in reversed(ids)]}}}, 1)
    assert carry.mapping == {}


def test_items_pair_by_name_then_a_truly_minted_id_is_threaded() -> None:
    recorded = {"result": {"structuredContent": {"jobs": [{"name": "a", "jobId": "J1"}, {"name": "b", "jobId": "J2"}]}}}
    live = {"result": {"structuredContent": {"jobs": [{"name": "b", "jobId": "K2"}, {"name": "a", "jobId": "K1"}]}}}
    later = {"jsonrpc": "2.0", "id": 2, "params": {"arguments": {"jobId": "J1"}}}
    carry = flow(recorded, later)
    carry.learn(recorded, live, 1)
    assert carry.mapping == {"J1": "K1"}
    sent, subs = carry.rewrite(later)
    assert sent == {"jsonrpc": "2.0", "id": 2, "params": {"arguments": {"jobId": "K1"}}}
    assert [(s.recorded, s.live) for s in subs] == [("J1", "K1")]


def test_a_truly_minted_uuid_is_threaded_and_reported() -> None:
    later = {"params": {"uri": f"jobs://{REC_ID}/log", "arguments": {"task": REC_ID}}}
    recorded = {"result": {"content": [{"type": "text", "text": f"queued {REC_ID}"}]}}
    carry = flow(recorded, later)
    carry.learn(recorded, {"result": {"content": [{"type": "text", "text": f"queued {LIVE_ID}"}]}}, 1)
    sent, subs = carry.rewrite(later)
    assert sent == {"params": {"uri": f"jobs://{LIVE_ID}/log", "arguments": {"task": LIVE_ID}}}
    assert [(s.recorded, s.live) for s in subs] == [(REC_ID, LIVE_ID)]


def test_a_value_present_in_both_answers_is_never_substituted() -> None:
    # The recorded id changed at one place but is still in the live answer elsewhere: an identity.
    later = {"jsonrpc": "2.0", "id": 2, "params": {"arguments": {"handle": "h-0a1b2c3d4e"}}}
    recorded = {"result": {"structuredContent": {"handle": "h-0a1b2c3d4e", "previous": "h-9f8e7d6c5b"}}}
    carry = flow(recorded, later)
    carry.learn(recorded, {"result": {"structuredContent": {"handle": "h-1234abcd99", "previous": "h-0a1b2c3d4e"}}}, 1)
    assert carry.mapping == {}
    assert carry.rewrite(later) == (later, ())


def test_handle_is_minted_everywhere() -> None:
    from mcp_replay_action.compare.masks import OPAQUE
    from mcp_replay_action.compare.normalize import normalize
    from mcp_replay_action.redact import Redactor

    assert normalize({"handle": "short"}) == {"handle": OPAQUE}
    carry = flow({"result": {"handle": "h1"}}, {"params": {"handle": "h1"}})
    carry.learn({"result": {"handle": "h1"}}, {"result": {"handle": "h2"}}, 1)
    assert carry.mapping == {"h1": "h2"}
    # The entropy rule must not redact a minted handle that replay has to send back.
    value = "Zq8Xk2Lm9Pw4Rt7Yb1Nc5Vd3Hf6Jg0Ks"
    assert Redactor().apply({"handle": value}) == {"handle": value}


async def _read_minted_uri(client: Any) -> dict[str, Any]:
    created = await client.call_tool("create_task", {"title": "label me"})
    task_id = created.structured_content["id"]
    await client.read_resource(f"tasks://{task_id}")
    return {"task_id": task_id}


def test_a_minted_uri_is_sent_live_and_labelled_with_what_was_sent(tmp_path: Path) -> None:
    """End to end with the SDK server that mints task ids: the recorded resource URI holds the
    recorded id, replay sends the live one, and the report labels the request with the URI really
    sent and lists the substitution (issue 9 section 1: the console once showed the recorded one)."""
    from e2e_helpers import FAST_SERVER, python_server, record_through_proxy, replay

    cassette = tmp_path / "minted-uri.jsonl"
    seen = record_through_proxy(python_server(FAST_SERVER), cassette, _read_minted_uri)
    recorded_uri = f"tasks://{seen['task_id']}"
    run = replay(python_server(FAST_SERVER), cassette, "-v", report=tmp_path / "r.json")
    assert run.code == 0 and run.findings() == [], run.describe()
    [read] = [i for i in run.interactions() if i["method"] == "resources/read"]
    assert read["name"].startswith("tasks://") and read["name"] != recorded_uri, read
    assert [(s["recorded"], s["live"]) for s in read["substitutions"]] == [(seen["task_id"], read["name"][8:])]
    assert f"resources/read {read['name']}" in run.stdout and recorded_uri not in run.stdout, run.describe()


def test_an_answer_is_learned_from_only_when_a_later_message_may_quote_it(tmp_path: Path, monkeypatch: Any) -> None:
    """Learning waits for the next message to be sent: the task id minted in the first answer is
    still sent live in the next request, and the last answer (a big one costs a walk of every
    value) is never walked, since nothing is sent after it."""
    import shlex

    from e2e_helpers import FAST_SERVER, python_server, record_through_proxy
    from mcp_replay_action.cassette import load
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import replay_cassette
    from mcp_replay_action.transport.stdio import StdioTransport

    cassette = tmp_path / "minted-uri.jsonl"
    seen = record_through_proxy(python_server(FAST_SERVER), cassette, _read_minted_uri)
    learned: list[Any] = []
    original = Carry.learn

    def spy(self: Carry, recorded: Any, live: Any, seq: int) -> None:
        learned.append(recorded)
        original(self, recorded, live, seq)

    monkeypatch.setattr(Carry, "learn", spy)
    loaded = load(cassette)
    result = replay_cassette(loaded, StdioTransport(shlex.split(python_server(FAST_SERVER))), Plan(timeout=10.0))
    [read] = [r for r in result.results if r.method == "resources/read"]
    assert [(s.recorded, s.live) for s in read.substitutions] == [(seen["task_id"], read.name[8:])], read
    assert all(r.status == "pass" for r in result.results), result.results
    last_answer = [i for i in loaded.interactions if i.kind == "request"][-1].response
    assert learned and last_answer not in learned
    assert seen["task_id"] in json.dumps(learned)


def test_a_learned_value_is_still_present_only_as_a_whole_token() -> None:
    """``_still_present`` finds a value inside the live answer only where no ASCII letter or
    digit touches it, exactly as the boundary regex it replaced did."""
    import random
    import re

    from mcp_replay_action.compare.carry import _still_present

    rng = random.Random(3)
    alphabet = 'ab1_-./ é\\"x'
    for _ in range(3000):
        value = "".join(rng.choice("ab1x") for _ in range(rng.randrange(8, 11)))
        dumped = "".join(rng.choice([*alphabet, value]) for _ in range(rng.randrange(0, 12)))
        expected = re.search(rf"(?<![A-Za-z0-9]){re.escape(value)}(?![A-Za-z0-9])", dumped) is not None
        assert _still_present(value, set(), dumped) == expected, (value, dumped)


def _sdk(value: dict[str, Any], prose: str = "") -> dict[str, Any]:
    """A tool result as the official Python SDK sends a dict: structuredContent and its JSON text copy."""
    content = [{"type": "text", "text": json.dumps(value, indent=2)}]
    if prose:
        content.append({"type": "text", "text": prose})
    return {"result": {"content": content, "structuredContent": value}}


def test_the_minting_answer_is_expected_with_the_live_value_in_every_copy() -> None:
    from mcp_replay_action.compare.correlate import ThreadRules

    recorded = _sdk({"id": 23014, "ref": "ab", "n": 3}, "Ticket 23014 opened.")
    live = _sdk({"id": 51177, "ref": "zq", "n": 3}, "Ticket 51177 opened.")
    quote = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {"id": 23014, "ref": "ab"}}}
    interactions = [
        Interaction(1, "request", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, recorded),
        Interaction(2, "request", quote, {"result": {}}),
    ]
    carry = Carry(interactions, ThreadRules(("ref",)))
    carry.learn(recorded, live, 1)
    assert carry.mapping == {"23014": "51177", "ab": "zq"}
    # structuredContent, the JSON text copy and the prose all carry the live values: nothing to
    # report in the answer that minted them (the short ref is replaced where it is a value only,
    # so the JSON text is read, and written back in another spacing).
    expected = carry.expected(recorded, 1)["result"]
    assert expected["structuredContent"] == live["result"]["structuredContent"]
    assert json.loads(expected["content"][0]["text"]) == live["result"]["structuredContent"]
    assert expected["content"][1] == live["result"]["content"][1]
    assert carry.apply({"text": "ref ab, not ab12"}) == {"text": "ref ab, not ab12"}  # prose: whole values only
    assert carry.minted_by(1) == (Substitution("23014", "51177"), Substitution("ab", "zq"))
    sent = (Substitution("x", "y"),)
    assert carry.minted_by(1, sent)[0] == sent[0] and carry.minted_by(2) == ()


def test_a_second_start_is_read_with_the_first_starts_values() -> None:
    recorded = _sdk({"id": "note_recorded1"})
    quote = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {"id": "note_recorded1"}}}
    interactions = [
        Interaction(1, "request", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, recorded),
        Interaction(2, "request", quote, {"result": {}}),
    ]
    first, second = Carry(interactions), Carry(interactions)
    first.learn(recorded, _sdk({"id": "note_firstrun1"}), 1)
    second.learn(recorded, _sdk({"id": "note_secondrn"}), 1)
    assert translated(second, first, _sdk({"id": "note_secondrn"})) == _sdk({"id": "note_firstrun1"})
    assert translated(None, first, {"a": 1}) == {"a": 1}


def test_a_short_integer_id_is_replaced_under_an_identifier_only() -> None:
    recorded = {"result": {"structuredContent": {"id": 7}}}
    quote = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"arguments": {"ticket_id": 7}}}
    interactions = [
        Interaction(1, "request", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}, recorded),
        Interaction(2, "request", quote, {"result": {}}),
    ]
    carry = Carry(interactions)
    carry.learn(recorded, {"result": {"structuredContent": {"id": 9}}}, 1)
    assert carry.apply({"params": {"ticket_id": 7, "limit": 7}}) == {"params": {"ticket_id": 9, "limit": 7}}
    assert carry.apply({"text": json.dumps({"id": 7, "count": 7})}) == {"text": json.dumps({"id": 9, "count": 7})}
