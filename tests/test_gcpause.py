"""The garbage collector paused while a large JSON value is built and compared, and never left off."""

from __future__ import annotations

import gc

import pytest

from mcp_replay_action.compare.engine import compare
from mcp_replay_action.host.gcpause import paused

pytestmark = pytest.mark.unit


def test_the_collector_is_off_inside_and_on_after_also_on_error() -> None:
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():  # nested: the inner use must not turn it back on early
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_collector_turned_off_by_the_caller_stays_off() -> None:
    gc.disable()
    try:
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_comparing_a_changed_answer_leaves_the_collector_on() -> None:
    recorded = {"result": {"items": [{"name": f"n{i}", "v": i} for i in range(50)]}}
    live = {"result": {"items": [{"name": f"n{i}", "v": -i} for i in range(50)]}}
    assert compare(recorded, live)
    assert gc.isenabled()
