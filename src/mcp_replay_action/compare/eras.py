"""Answers of the two protocol eras compared by what they mean (``replay --era``).

Applied only when a cassette is replayed in another era than the one it was recorded in: within
one era, a changed ``cacheScope`` or a result that stopped saying ``resultType`` is a change of the
server's own, and is compared as usual. Across eras these differ by the revision alone:

- a missing ``resultType`` is ``complete`` (the handshake era has no other kind);
- ``ttlMs`` and ``cacheScope`` are cache hints, not behaviour;
- ``-32002`` (resource not found, handshake era) and ``-32602`` (its 2026-07-28 code) are the same
  answer to a resources request;
- the server info a stateless server puts in every result's ``_meta`` is not a change;
- an ``initialize`` result and a ``server/discover`` result are compared by what both say: the
  server's info, its capabilities (a ``false`` flag and an empty ``experimental`` are what saying
  nothing says) and its instructions; the protocol versions are the eras themselves.

Everything else is compared as usual, by ``compare.py``, on the two forms made here.
"""

from __future__ import annotations

from typing import overload

from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.wire.protocol import META_SERVER_INFO

CACHE_HINTS = ("ttlMs", "cacheScope")
OPENERS = frozenset({"initialize", "server/discover"})
RESOURCE_NOT_FOUND = (-32002, -32602)  # the handshake era's code, and the stateless era's


@overload
def comparable(method: str, answer: JSONObject) -> JSONObject: ...
@overload
def comparable(method: str, answer: JSONObject | None) -> JSONObject | None: ...
def comparable(method: str, answer: JSONObject | None) -> JSONObject | None:
    """``answer`` (to a request of ``method``) in the form both eras share."""
    if not isinstance(answer, dict):
        return answer
    out = dict(answer)
    error = out.get("error")
    if isinstance(error, dict) and method.startswith("resources/") and error.get("code") in RESOURCE_NOT_FOUND:
        out["error"] = {**error, "code": RESOURCE_NOT_FOUND[1]}
    result = out.get("result")
    if isinstance(result, dict):
        out["result"] = _opening(result) if method in OPENERS else _result(result)
    return out


def _result(result: JSONObject) -> JSONObject:
    out = {k: v for k, v in result.items() if k not in CACHE_HINTS}
    if out.get("resultType") == "complete":
        del out["resultType"]
    meta = out.get("_meta")
    if isinstance(meta, dict) and META_SERVER_INFO in meta:
        meta = {k: v for k, v in meta.items() if k != META_SERVER_INFO}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    return out


def _opening(result: JSONObject) -> JSONObject:
    """What an ``initialize`` or ``server/discover`` result says of the server."""
    meta = result.get("_meta")
    info = result.get("serverInfo")
    if info is None and isinstance(meta, dict):
        info = meta.get(META_SERVER_INFO)
    out: JSONObject = {"serverInfo": info, "capabilities": _said(result.get("capabilities"))}
    if result.get("instructions") is not None:
        out["instructions"] = result["instructions"]
    return out


def _said(capabilities: JSON) -> JSON:
    """Capabilities without what says nothing: a ``false`` flag, an empty ``experimental``."""
    if not isinstance(capabilities, dict):
        return capabilities
    out: JSONObject = {}
    for name, value in capabilities.items():
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if v is not False}
            if name == "experimental" and not value:
                continue
        out[name] = value
    return out
