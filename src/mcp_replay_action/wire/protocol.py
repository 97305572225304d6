"""What the cassette tells about the MCP protocol era it was recorded in.

Handshake era (2024-11-05 .. 2025-11-25): ``initialize`` + ``notifications/initialized``, sessions,
server-to-client requests. Stateless era (2026-07-28): no handshake, ``server/discover``, every
request carries its protocol version and client capabilities in ``params._meta``, results carry
``resultType``, and server-to-client needs come back as ``input_required`` results. Replay sends
what was recorded in either era (``replay/translate.py`` sends it in the other one, with ``--era``); this
module only names the era for reports and for transports that need a protocol version header.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mcp_replay_action.model import JSONObject

if TYPE_CHECKING:
    from mcp_replay_action.model.cassette import Interaction

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
HANDSHAKE_VERSION = "2025-11-25"  # the newest handshake-era version
STATELESS_VERSION = "2026-07-28"  # the first stateless-era version
# What a cassette may be sent in (``--era``, the action's ``era``, the pytest plugin's
# ``--mcp-replay-era``): as recorded, or translated into one era (``replay/translate.py``).
ERAS = ("recorded", "handshake", "stateless")
LIFECYCLE_METHODS = frozenset({"initialize", "notifications/initialized", "server/discover", "ping"})


@dataclass(frozen=True)
class Era:
    name: str  # "handshake", "stateless" or "" when the cassette holds no evidence
    protocol_version: str


def era_of(protocol_version: str | None) -> str | None:
    """``stateless`` from 2026-07-28 on, ``handshake`` before, None when unknown."""
    if not protocol_version:
        return None
    return "stateless" if protocol_version >= STATELESS_VERSION else "handshake"


def request_protocol_version(message: JSONObject) -> str | None:
    """The protocol version a stateless-era request declares in ``params._meta``, if any."""
    params = message.get("params")
    if isinstance(params, dict):
        meta = params.get("_meta")
        if isinstance(meta, dict):
            version = meta.get(META_PROTOCOL_VERSION)
            if isinstance(version, str):
                return version
    return None


def detect_era(interactions: Iterable[Interaction], meta: JSONObject | None = None) -> Era:
    """The era and protocol version, from the traffic, else from the header.

    A successful ``initialize`` means the handshake era, whatever came before it: the official
    SDKs probe ``server/discover`` first and fall back to the handshake when a handshake-era
    server refuses the probe (a refused request says nothing about the era). Otherwise a
    successful ``server/discover``, or any answered request that declares its protocol version in
    ``params._meta``, means the stateless era.
    """
    meta = meta or {}
    stateless: str | None = None  # the stateless version seen ("" when only discover showed it)
    for inter in interactions:
        if inter.kind != "request" or not isinstance(inter.response, dict) or "result" not in inter.response:
            continue
        if inter.method == "initialize":
            result = inter.response.get("result") or {}
            version = result.get("protocolVersion") or (inter.message.get("params") or {}).get("protocolVersion")
            return Era("handshake", str(version or meta.get("protocol_version") or ""))
        version = request_protocol_version(inter.message)
        if version and not stateless:
            stateless = version
        elif stateless is None and inter.method == "server/discover":
            stateless = ""
    if stateless is not None:
        return Era("stateless", stateless or str(meta.get("protocol_version") or ""))
    return Era(str(meta.get("era") or ""), str(meta.get("protocol_version") or ""))


def refused_probes(interactions: Iterable[Interaction]) -> frozenset[int]:
    """The ``server/discover`` probes a client sent before it fell back to ``initialize`` (seqs):
    the recording server refused them, which made the session a handshake-era one.

    Replay does not send them: a server that now speaks the stateless era too (the official SDKs
    serve both, decided by the first request) would accept the probe and open a stateless
    connection, on which the recorded ``initialize`` is refused. That is the build gaining an era,
    not the session changing. A server that speaks only the stateless era still refuses the
    ``initialize``, and that is the one era finding."""
    probes: list[int] = []
    for inter in interactions:
        if inter.kind != "request":
            continue
        if inter.method == "server/discover" and isinstance(inter.response, dict) and "error" in inter.response:
            probes.append(inter.seq)
            continue
        if inter.method == "initialize" and isinstance(inter.response, dict) and "result" in inter.response:
            return frozenset(probes)
        if inter.method not in LIFECYCLE_METHODS:
            break
    return frozenset()


def is_input_required(response: JSONObject | None) -> bool:
    """True for a stateless-era ``input_required`` result (a multi round-trip request's first leg)."""
    result = (response or {}).get("result")
    return isinstance(result, dict) and result.get("resultType") == "input_required"
