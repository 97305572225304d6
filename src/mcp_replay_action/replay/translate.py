"""A recorded session sent in the other protocol era (``replay --era``).

The handshake era (``initialize``, a session, server-to-client requests mid-call) and the
stateless 2026-07-28 revision (``server/discover``, per-request ``_meta``, ``input_required``
results) say the same things in different messages; a server author porting a server from one to
the other replays the old recording in the new era and wants to see only real changes.

Handshake to stateless: ``initialize`` becomes ``server/discover``, and every request carries
what it declared (protocol version, client info and capabilities) in ``params._meta``;
``notifications/initialized`` and ``notifications/roots/list_changed`` are not sent; requests the
new revision dropped (``ping``, ``logging/setLevel``, ``resources/subscribe``/``unsubscribe``) are
skipped and listed; a server-to-client request the recording answered (roots, sampling,
elicitation) is now an ``input_required`` round, answered from the recording by ``rounds``.

Stateless to handshake: ``server/discover`` becomes an ``initialize`` built from the requests'
``_meta`` (then ``notifications/initialized``); a recording without an answered one (the official
2.x SDK's stateless client sends none, or a discover the server answered with an error) is opened
by an ``initialize`` sent before its first request, whose answer nothing recorded
(``Translation.opened``: not compared), and its unanswered discover is not sent; the protocol keys
leave ``_meta``; a multi
round-trip request's ``input_required`` legs are not sent (the server now asks mid-call, and is
answered with what the recording answered: each leg's ``inputRequests`` beside the next leg's
``inputResponses``), and its last leg is sent without ``inputResponses``/``requestState``.

Every translated interaction keeps its seq and cassette line, so findings point at the recording.
How answers of the two eras are compared is ``compare/eras.py``'s business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from mcp_replay_action.errors import CassetteError
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.wire.protocol import (
    ERAS,
    HANDSHAKE_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
    detect_era,
    is_input_required,
    refused_probes,
)

# Requests the 2026-07-28 revision removed (its changelog; ``subscriptions/listen`` replaces the
# subscribe pair), and the notifications it removed or has no handshake for.
NOT_STATELESS = frozenset({"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
NOT_STATELESS_NOTIFICATIONS = frozenset({"notifications/initialized", "notifications/roots/list_changed"})
# Stateless-era requests a handshake-era server has no method for.
NOT_HANDSHAKE = frozenset({"subscriptions/listen"})
_PROTOCOL_KEYS = (META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES, META_CLIENT_INFO)
CLIENT_INFO = {"name": "mcp-replay", "version": "1"}  # when the recording names no client
_LACKING = "not in"  # how the reason for a request the other era has no method for begins
MAX_ROUNDS = 8  # input_required rounds answered for one request before giving up


@dataclass(frozen=True)
class Translation:
    """A cassette as it is replayed: in its recorded era, or translated into another one."""

    cassette: Cassette  # the interactions to replay (the same seqs and lines as the recording)
    recorded: str  # the era it was recorded in ("" when not looked for, or the cassette shows none)
    era: str  # the era it is sent in (``recorded``: as recorded)
    # Recorded requests not sent, by seq, with why (a refused server/discover probe, a request
    # the other era has no method for, an input_required leg): shown as skipped.
    unsent: dict[int, str] = field(default_factory=dict)
    # Of those, the requests the other era has no method for (``ping``...): listed in the report.
    lacking: frozenset[int] = frozenset()
    # Requests sent that the recording never made, so have no answer to compare: the ``initialize``
    # that opens a handshake for a stateless recording without ``server/discover`` (``_to_handshake``).
    opened: frozenset[int] = frozenset()

    @property
    def across(self) -> bool:
        """Whether the answers come from another era than the recording's (compared by meaning)."""
        return bool(self.recorded) and self.era not in ("recorded", self.recorded)

    def listed(self) -> tuple[str, ...]:
        """The requests the other era has no method for, for the report ("ping (seq 13)")."""
        if not self.lacking:  # as recorded: a long streamed cassette is not read once more for none
            return ()
        names = {i.seq: i.label for i in self.cassette.interactions if i.seq in self.lacking}
        return tuple(f"{names[seq]} (seq {seq}): {self.unsent[seq]}" for seq in sorted(names))


def translate(cassette: Cassette, era: str = "recorded") -> Translation:
    """``cassette`` as replayed in ``era`` (``recorded``, ``handshake`` or ``stateless``). Raises
    ``CassetteError`` when it cannot be: the cassette shows no era, or a stateless one has no
    ``server/discover`` to open a handshake from."""
    if era not in ERAS:
        raise ValueError(f"era must be one of {', '.join(ERAS)}, not {era!r}")
    # As recorded, the era is not looked for: a long streamed cassette is not read once more for it.
    recorded = detect_era(cassette.interactions, cassette.meta).name if era != "recorded" else ""
    if era == "recorded" or era == recorded:
        probes = refused_probes(cassette.interactions)
        return Translation(cassette, recorded, era, dict.fromkeys(probes, "a refused server/discover probe"))
    if not recorded:
        raise CassetteError(
            cassette.path,
            None,
            f"--era {era}: the cassette shows no protocol era to translate from (replay as recorded)",
        )
    interactions = tuple(cassette.interactions)  # translated whole: a leg is paired with the next
    if era == "stateless":
        out, unsent = _to_stateless(interactions)
    else:
        out, unsent = _to_handshake(interactions, cassette.path)
    lacking = frozenset(seq for seq, why in unsent.items() if why.startswith(_LACKING))
    opened = frozenset(i.seq for i in out if i.seq == OPENED_SEQ)
    return Translation(replace(cassette, interactions=tuple(out)), recorded, era, unsent, lacking, opened)


def _to_stateless(interactions: tuple[Interaction, ...]) -> tuple[list[Interaction], dict[int, str]]:
    probes = refused_probes(interactions)
    unsent = dict.fromkeys(probes, "a refused server/discover probe")
    opening = next((i for i in interactions if i.kind == "request" and i.method == "initialize"), None)
    params = (opening.message.get("params") if opening else None) or {}
    stamp = {
        META_PROTOCOL_VERSION: STATELESS_VERSION,
        META_CLIENT_INFO: params.get("clientInfo") or CLIENT_INFO,
        META_CLIENT_CAPABILITIES: params.get("capabilities") or {},
    }
    out: list[Interaction] = []
    for inter in interactions:
        if inter.kind == "notification" and inter.method in NOT_STATELESS_NOTIFICATIONS:
            continue
        if inter.kind != "request" or inter.seq in probes:
            out.append(inter)
            continue
        if inter.method in NOT_STATELESS:
            unsent[inter.seq] = f"{_LACKING} the {STATELESS_VERSION} revision"
            out.append(inter)
            continue
        message = dict(inter.message)
        if inter.method == "initialize":
            message["method"] = "server/discover"
            message["params"] = {}
        message["params"] = stamped(message.get("params"), stamp)
        out.append(replace(inter, message=message))
    return out, unsent


def stamped(params: JSON, stamp: JSONObject) -> JSONObject:
    """``params`` with the stateless era's protocol keys in its ``_meta`` (its own keys kept)."""
    out = dict(params) if isinstance(params, dict) else {}
    meta = out.get("_meta")
    out["_meta"] = {**stamp, **(meta if isinstance(meta, dict) else {})}
    return out


# The seq of an ``initialize`` the recording never sent (``Translation.opened``): below every
# recorded seq and apart from the synthesized server requests' (-2, -3, ...).
OPENED_SEQ = -1


def _to_handshake(interactions: tuple[Interaction, ...], path: str) -> tuple[list[Interaction], dict[int, str]]:
    discover = next((i for i in interactions if i.kind == "request" and i.method == "server/discover"), None)
    answered = discover is not None and isinstance(discover.response, dict) and "result" in discover.response
    opening = discover if answered else None
    meta = _protocol_meta(interactions)
    unsent: dict[int, str] = {}
    if opening is None and meta:
        # The official 2.x SDK's stateless client sends no server/discover, or one the server
        # answered with an error (a version it does not speak): every request carries the protocol
        # _meta an initialize needs. The handshake opens before the first request, as a request
        # the recording never made (sent, its answer not compared); an unanswered discover is not sent.
        first = next(i for i in interactions if i.kind == "request")
        opening = Interaction(seq=OPENED_SEQ, kind="request", message={"id": "mcp-replay-initialize"}, line=first.line)
        interactions = tuple(i for j in interactions for i in ((opening, j) if j is first else (j,)))
        if discover is not None:
            unsent[discover.seq] = "an unanswered server/discover: the handshake opens with an initialize instead"
    elif opening is None:
        raise CassetteError(
            path, None, "--era handshake: no answered server/discover and no request _meta to open the handshake from"
        )
    initialize = {
        "jsonrpc": "2.0",
        "id": opening.message.get("id"),
        "method": "initialize",
        "params": {
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": meta.get(META_CLIENT_CAPABILITIES) or {},
            "clientInfo": meta.get(META_CLIENT_INFO) or CLIENT_INFO,
        },
    }
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    answers = _leg_answers(interactions)
    out: list[Interaction] = []
    asked = OPENED_SEQ - 1  # the synthesized server requests' seqs: negative, apart from every recorded one
    for inter in interactions:
        if inter.kind != "request":
            out.append(inter)
            continue
        if inter is opening:
            out.append(replace(inter, message=initialize))
            out.append(Interaction(seq=inter.seq, kind="notification", message=initialized, line=inter.line))
            continue
        if inter.seq in unsent:  # the unanswered server/discover
            out.append(inter)
            continue
        if inter.method in NOT_HANDSHAKE:
            unsent[inter.seq] = f"{_LACKING} the handshake era"
            out.append(inter)
            continue
        if is_input_required(inter.response):
            unsent[inter.seq] = "an input_required leg: the server asks mid-call in the handshake era"
            out.append(inter)
            for method, params, result in answers.get(inter.seq, ()):
                asked_message: JSONObject = {"jsonrpc": "2.0", "id": asked, "method": method}
                if params is not None:
                    asked_message["params"] = params
                answer = {"jsonrpc": "2.0", "id": asked, "result": result}
                out.append(Interaction(seq=asked, kind="server-request", message=asked_message, response=answer))
                asked -= 1
            continue
        out.append(replace(inter, message=_unstamped(inter.message)))
    return out, unsent


def _protocol_meta(interactions: Iterable[Interaction]) -> JSONObject:
    """The protocol ``_meta`` (the client's info and capabilities) of the first request the server
    answered, else of the first request: a refused ``server/discover`` may have proposed a version
    the server does not speak, and declared its capabilities for that version."""
    first: JSONObject = {}
    for inter in interactions:
        params = inter.message.get("params") if inter.kind == "request" else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
            if isinstance(inter.response, dict) and "result" in inter.response:
                return meta
            first = first or meta
    return first


def _leg_answers(interactions: tuple[Interaction, ...]) -> dict[int, list[tuple[str, JSON, JSON]]]:
    """For each ``input_required`` leg (by seq): what it asked and what the client answered, from
    the next leg of the same request (the one that quotes its ``requestState``, else the next one
    of the same method carrying ``inputResponses``)."""
    out: dict[int, list[tuple[str, JSON, JSON]]] = {}
    for at, leg in enumerate(interactions):
        if leg.kind != "request" or not is_input_required(leg.response):
            continue
        assert leg.response is not None
        result = leg.response["result"]
        requests = result.get("inputRequests")
        state = result.get("requestState")
        retry = next(
            (
                i
                for i in interactions[at + 1 :]
                if i.kind == "request"
                and i.method == leg.method
                and isinstance(i.message.get("params"), dict)
                and "inputResponses" in i.message["params"]
                and (state is None or i.message["params"].get("requestState") == state)
            ),
            None,
        )
        responses = (retry.message["params"].get("inputResponses") if retry else None) or {}
        if not isinstance(requests, dict) or not isinstance(responses, dict):
            continue
        out[leg.seq] = [
            (str(asked.get("method")), asked.get("params"), responses[key])
            for key, asked in requests.items()
            if isinstance(asked, dict) and key in responses
        ]
    return out


def _unstamped(message: JSONObject) -> JSONObject:
    """A stateless request as the handshake era sends it: no protocol keys in ``_meta``, no
    ``inputResponses``/``requestState`` (the server asks mid-call instead)."""
    params = message.get("params")
    if not isinstance(params, dict):
        return message
    params = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
    meta = params.get("_meta")
    if isinstance(meta, dict):
        meta = {k: v for k, v in meta.items() if k not in _PROTOCOL_KEYS}
        if meta:
            params["_meta"] = meta
        else:
            del params["_meta"]
    out = dict(message)
    if params:
        out["params"] = params
    else:
        out.pop("params", None)
    return out


def rounds(
    live: JSONObject,
    message: JSONObject,
    answer: Callable[[JSONObject], JSONObject],
    send: Callable[[JSONObject], JSONObject],
) -> JSONObject:
    """The final answer to a request a stateless server answered ``input_required``: each
    ``inputRequests`` entry answered by ``answer`` (a server-to-client request -> the JSON-RPC
    answer the recording gave), and the request sent again (``send``) with ``inputResponses`` and
    the live ``requestState``, until the server completes, errs, or ``MAX_ROUNDS`` retries."""
    for n in range(1, MAX_ROUNDS + 1):
        if not is_input_required(live):
            return live
        result = live["result"]
        responses: JSONObject = {}
        requests = result.get("inputRequests")
        for key, asked in (requests if isinstance(requests, dict) else {}).items():
            if not isinstance(asked, dict):
                continue
            question = {"jsonrpc": "2.0", "id": key, "method": asked.get("method")}
            if "params" in asked:
                question["params"] = asked["params"]
            given = answer(question)
            if "result" not in given:
                return live  # nothing recorded answers it: the input_required answer is compared
            responses[key] = given["result"]
        params = dict(message.get("params") or {})
        params["inputResponses"] = responses
        if "requestState" in result:
            params["requestState"] = result["requestState"]
        else:
            params.pop("requestState", None)
        live = send({**message, "id": f"mcp-replay-{message.get('id')}-round-{n}", "params": params})
    return live
