"""Era detection from the traffic a cassette holds."""

from __future__ import annotations

import pytest

from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.wire.protocol import detect_era, is_input_required, refused_probes

pytestmark = pytest.mark.unit

META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def request(seq: int, method: str, params: dict, response: dict) -> Interaction:
    return Interaction(
        seq=seq,
        kind="request",
        message={"jsonrpc": "2.0", "id": seq, "method": method, "params": params},
        response={"jsonrpc": "2.0", "id": seq, **response},
    )


def test_sdk_probe_refused_then_handshake_is_the_handshake_era() -> None:
    probe = request(0, "server/discover", {"_meta": META}, {"error": {"code": -32601, "message": "Method not found"}})
    init = request(1, "initialize", {"protocolVersion": "2025-11-25"}, {"result": {"protocolVersion": "2025-06-18"}})
    era = detect_era([probe, init])
    assert (era.name, era.protocol_version) == ("handshake", "2025-06-18")


def test_answered_discover_is_the_stateless_era() -> None:
    probe = request(0, "server/discover", {"_meta": META}, {"result": {"supportedVersions": ["2026-07-28"]}})
    era = detect_era([probe])
    assert (era.name, era.protocol_version) == ("stateless", "2026-07-28")


def test_header_is_the_fallback_and_input_required_is_recognised() -> None:
    assert detect_era([], {"era": "stateless", "protocol_version": "2026-07-28"}).name == "stateless"
    assert detect_era([]).name == ""
    assert is_input_required({"result": {"resultType": "input_required", "requestState": "x"}})
    assert not is_input_required({"result": {"content": []}})


def test_only_a_refused_discover_before_an_answered_initialize_is_a_refused_probe() -> None:
    refused = {"error": {"code": -32601, "message": "Method not found"}}
    probe = request(0, "server/discover", {"_meta": META}, refused)
    init = request(1, "initialize", {"protocolVersion": "2025-11-25"}, {"result": {"protocolVersion": "2025-11-25"}})
    call = request(2, "tools/call", {"name": "add"}, refused)
    assert refused_probes([probe, init, call]) == {0}
    assert refused_probes([probe]) == set()  # no fallback: a stateless session that was refused
    assert refused_probes([probe, call, init]) == set()  # the probe was not part of opening
    answered = request(0, "server/discover", {"_meta": META}, {"result": {"supportedVersions": ["2026-07-28"]}})
    assert refused_probes([answered, init]) == set()
