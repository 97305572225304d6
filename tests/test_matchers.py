"""The one definition of "the same request" (serve, diff and replay match through it)."""

from __future__ import annotations

import pytest

from mcp_replay_action.compare.matchers import (
    canonical,
    request_key,
    same_request,
    without_meta,
    without_progress_token,
)

pytestmark = pytest.mark.unit


def call(params: object, method: str = "tools/call") -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def test_meta_and_key_order_do_not_matter_params_do() -> None:
    a = call({"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": 7}})
    b = call({"arguments": {"b": 2, "a": 1}, "name": "add"})
    assert same_request(a, b) and request_key(a) == request_key(b)
    assert not same_request(a, call({"name": "add", "arguments": {"a": 1, "b": 3}}))
    assert not same_request(a, call({"name": "add", "arguments": {"a": 1, "b": 2}}, method="prompts/get"))
    assert request_key(call(None, method="ping")) == ("ping", "null")


def test_helpers_leave_their_input_alone() -> None:
    params = {"x": 1, "_meta": {"progressToken": 3, "trace": "t"}}
    assert without_meta(params) == {"x": 1}
    assert without_progress_token(params) == {"x": 1, "_meta": {"trace": "t"}}
    assert params == {"x": 1, "_meta": {"progressToken": 3, "trace": "t"}}
    assert without_meta([1]) == [1] and canonical({"b": 1, "a": "é"}) == '{"a":"é","b":1}'
