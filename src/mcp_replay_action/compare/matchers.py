"""Request matchers, in VCR.py's sense: small pure functions that say whether a live request is
the one a cassette recorded. ``serve`` (answering a client from a cassette), ``diff`` (pairing the
requests of two cassettes) and ``replay`` (answering a server's own requests from the cassette)
all match through here, so "the same request" means the same thing everywhere.

The rule: the same ``method`` and the same ``params``, ``_meta`` aside (it carries per-call
bookkeeping such as progress tokens and, in the stateless era, the protocol version); key order
never matters.

``unchanged`` says the same of an answer, strictly: a live answer that is its recording's JSON
exactly (envelope aside) is compare's fastest exit, which a replay takes without importing the
compare engine.
"""

from __future__ import annotations

import json

from mcp_replay_action.model import JSON, JSONObject

# The JSON-RPC envelope: never compared (``id`` is the client's choice, ``jsonrpc`` constant).
ENVELOPE = ("jsonrpc", "id")


def same_json(a: JSON, b: JSON) -> bool:
    """Whether two parsed JSON values are the same JSON, keys in the same order: ``==`` rejects
    most differing pairs at C speed, then ``_same_form`` rules out what ``==`` forgives (``True ==
    1 == 1.0``, key order, ``0.0 == -0.0``). False on hostile nesting: the depth-limited
    normaliser decides."""
    try:
        return bool(a == b) and _same_form(a, b)
    except RecursionError:
        return False


# A container with fewer members than this is walked; a longer one is told apart by ``repr``.
_WALK_BELOW = 64


def _same_form(a: JSON, b: JSON) -> bool:
    """Given ``a == b``: whether they are spelled alike as JSON. ``repr`` tells apart what ``==``
    forgives as ``json.dumps`` does, at C speed and with no encoder built per call; but it copies
    every string, so short containers (an answer's envelope, its content list) are walked and a
    long text in them is compared by ``==`` alone (equal strings of one type are spelled alike).
    A long list or map (many records) goes to ``repr`` whole, which is faster than a walk."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is dict:
        if len(a) >= _WALK_BELOW:
            return repr(a) == repr(b)
        if list(a) != list(b):
            return False  # the same keys (a == b) in another order
        for key, value in a.items():
            if not _same_form(value, b[key]):
                return False
        return True
    if kind is list:
        if len(a) >= _WALK_BELOW:
            return repr(a) == repr(b)
        for x, y in zip(a, b, strict=True):
            if not _same_form(x, y):
                return False
        return True
    if kind is float:
        return repr(a) == repr(b)  # 0.0 == -0.0
    return True  # str, int, bool, None: equal values of one type are spelled alike


def unchanged(recorded: JSON, live: JSON) -> bool:
    """Whether a live JSON-RPC answer is its recorded one exactly, the envelope aside (so
    ``compare`` finds nothing). ``==`` runs once over the two (a differing answer of megabytes is
    walked by it up to its first difference, once): equal, the forms are checked, the whole and
    then without the envelope (whose keys may come in another order); unequal, only a differing
    envelope can leave the bodies the same."""
    if not isinstance(recorded, dict) or not isinstance(live, dict):
        return False
    try:
        if recorded == live:
            # The usual case: a replay sends the recorded id, so the envelopes agree too.
            return _same_form(recorded, live) or _same_form(_body(recorded), _body(live))
        if all((k in recorded) == (k in live) and recorded.get(k) == live.get(k) for k in ENVELOPE):
            return False  # equal envelopes, unequal answers: the bodies differ
    except RecursionError:
        return False  # hostile nesting: the depth-limited normaliser decides
    return same_json(_body(recorded), _body(live))


def _body(message: JSONObject) -> JSONObject:
    return {k: v for k, v in message.items() if k not in ENVELOPE}


def without_meta(params: JSON) -> JSON:
    """``params`` without its ``_meta`` entry (unchanged when it has none)."""
    if isinstance(params, dict) and "_meta" in params:
        return {k: v for k, v in params.items() if k != "_meta"}
    return params


def without_progress_token(params: JSON) -> JSON:
    """``params`` with ``_meta.progressToken`` dropped (a client picks a fresh one per call)."""
    if isinstance(params, dict) and isinstance(params.get("_meta"), dict) and "progressToken" in params["_meta"]:
        meta = {k: v for k, v in params["_meta"].items() if k != "progressToken"}
        return {**params, "_meta": meta}
    return params


def progress_token(message: JSONObject) -> JSON:
    """The ``progressToken`` a request asks its progress under (``params._meta``), else None."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def canonical(value: JSON) -> str:
    """``value`` as canonical JSON text: sorted keys, no spaces, so equal values give equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_key(message: JSONObject) -> tuple[str, str]:
    """What identifies a request: its method and its canonical params, ``_meta`` aside."""
    return str(message.get("method", "")), canonical(without_meta(message.get("params")))


def same_request(a: JSONObject, b: JSONObject) -> bool:
    """True when ``a`` and ``b`` ask the same thing (method and params, ``_meta`` aside)."""
    return a.get("method") == b.get("method") and without_meta(a.get("params")) == without_meta(b.get("params"))
