"""Value threading: minted values in live responses are carried into later requests."""

from __future__ import annotations

from mcp_replay_action.carry import Carry

REC_ID = "3f2b8c1e-9a7d-4e2b-8f1c-0a9b8c7d6e5f"
LIVE_ID = "77aa0011-2233-4455-8899-aabbccddeeff"


def test_structured_minted_id_is_threaded() -> None:
    carry = Carry()
    carry.learn(
        {
            "result": {
                "structuredContent": {"jobId": REC_ID},
                "content": [{"type": "text", "text": f"started {REC_ID}"}],
            }
        },
        {
            "result": {
                "structuredContent": {"jobId": LIVE_ID},
                "content": [{"type": "text", "text": f"started {LIVE_ID}"}],
            }
        },
    )
    later = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "job_status", "arguments": {"jobId": REC_ID}},
    }
    assert carry.apply(later)["params"]["arguments"]["jobId"] == LIVE_ID
    assert later["params"]["arguments"]["jobId"] == REC_ID  # the recorded message is not mutated


def test_request_state_and_cursor_keys_are_threaded_even_when_short() -> None:
    carry = Carry()
    carry.learn(
        {"result": {"requestState": "abc", "nextCursor": "p2"}}, {"result": {"requestState": "xyz", "nextCursor": "q9"}}
    )
    retry = {"params": {"requestState": "abc", "inputResponses": {}}}
    assert carry.apply(retry)["params"]["requestState"] == "xyz"
    assert carry.apply({"params": {"cursor": "p2"}})["params"]["cursor"] == "q9"


def test_embedded_tokens_in_text_and_json_text() -> None:
    carry = Carry()
    carry.learn(
        {"result": {"content": [{"type": "text", "text": '{"task": "tsk_81f0c2a9d3", "n": 1}'}]}},
        {"result": {"content": [{"type": "text", "text": '{"task": "tsk_00aa11bb22", "n": 1}'}]}},
    )
    assert (
        carry.apply({"params": {"uri": "tasks://tsk_81f0c2a9d3/log"}})["params"]["uri"] == "tasks://tsk_00aa11bb22/log"
    )


def test_plain_value_changes_are_not_threaded() -> None:
    carry = Carry()
    carry.learn(
        {"result": {"content": [{"type": "text", "text": "5"}]}},
        {"result": {"content": [{"type": "text", "text": "6"}]}},
    )
    carry.learn({"result": {"text": "hello world"}}, {"result": {"text": "goodbye world"}})
    assert not carry
    message = {"params": {"arguments": {"a": "5"}}}
    assert carry.apply(message) is message


def test_text_with_different_shape_does_not_pair_tokens() -> None:
    carry = Carry()
    carry.learn({"t": f"started {REC_ID}"}, {"t": f"failed to start, see {LIVE_ID}"})
    assert not carry


def test_only_values_later_requests_quote_are_remembered() -> None:
    later = [{"params": {"arguments": {"jobId": REC_ID}}}]
    carry = Carry(later)
    carry.learn({"a": REC_ID, "b": "7f0e1d2c-3b4a-4958-8766-554433221100"}, {"a": LIVE_ID, "b": "0" * 8 + "-aaaa"})
    assert carry.mapping == {REC_ID: LIVE_ID}
    assert carry.apply(later[0]) == {"params": {"arguments": {"jobId": LIVE_ID}}}
