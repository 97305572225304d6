"""The one builder of a recording's header (``meta``), shared by the stdio recorder, the HTTP
recorder and scenario recording, so all three agree on every field they have in common:

- the era and protocol version come from ``protocol.detect_era`` (the one era detector);
- ``server_info`` from ``server_info(interactions)`` (the one extractor: ``serverInfo`` of a
  handshake result, or the stateless era's ``_meta`` entry);
- the URL from ``header_url`` (the one display policy: never credentials or a query string; the
  origin only, or the path too, passed through the redactor);
- timestamps from ``utc_now`` (one spelling: ``2026-11-30T16:09:24Z``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from mcp_replay_action import __version__
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.transport import url_origin
from mcp_replay_action.wire.protocol import META_SERVER_INFO, detect_era


def utc_now() -> str:
    """The current UTC time as every header spells it: ``2026-11-30T16:09:24Z``."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def server_info(interactions: Iterable[Interaction]) -> JSONObject | None:
    """What the server said about itself: ``serverInfo`` of the first successful result that has
    one (``initialize``), or the stateless era's ``_meta`` entry for it (``server/discover`` and
    every later result)."""
    for inter in interactions:
        if inter.kind != "request" or not isinstance(inter.response, dict):
            continue
        result = inter.response.get("result")
        if not isinstance(result, dict):
            continue
        info = result.get("serverInfo")
        if not isinstance(info, dict):
            meta = result.get("_meta")
            info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        if isinstance(info, dict):
            return dict(info)
    return None


def session_facts(interactions: Sequence[Interaction]) -> JSONObject:
    """``era``, ``protocol_version`` and ``server_info`` as the traffic shows them (None when it
    does not)."""
    era = detect_era(interactions)
    return {
        "era": era.name or None,
        "protocol_version": era.protocol_version or None,
        "server_info": server_info(interactions),
    }


def header_url(url: str, redact: Callable[[str], object] | None = None, *, origin_only: bool = False) -> str:
    """A server URL as a header shows it: ``scheme://host[:port]`` with ``origin_only``, else with
    its path too, through ``redact`` (a key may live in the path). Never credentials or a query."""
    if origin_only:
        return url_origin(url)
    from mcp_replay_action.transport.http_client import display_url

    shown = display_url(url)
    return str(redact(shown)) if redact is not None else shown


@dataclass(frozen=True)
class CassetteHeader:
    """What a recorder knows of its session before the traffic: how the server was reached (its
    argv and/or URL, already fit to show) and when the recording started."""

    transport: str  # stdio, http or sse
    server: Sequence[str] | None = None
    url: str | None = None
    recorded_at: str = field(default_factory=utc_now)

    def meta(
        self,
        interactions: Sequence[Interaction],
        *,
        redaction: Mapping[str, JSON] | None = None,
        extra: Mapping[str, JSON] | None = None,
        era: str | None = None,
        protocol_version: str | None = None,
        info: Mapping[str, JSON] | None = None,
    ) -> JSONObject:
        """The header's ``meta`` for ``interactions``. ``era``/``protocol_version``/``info`` override
        what the traffic shows (a scenario knows its era); ``extra`` adds recorder-specific keys;
        ``redaction`` (the redactor's rules, hit counts included) comes last."""
        facts = session_facts(interactions)
        meta: JSONObject = {
            "server": list(self.server) if self.server else None,
            "url": self.url,
            "transport": self.transport,
            "recorded_at": self.recorded_at,
            "protocol_version": protocol_version or facts["protocol_version"],
            "era": era or facts["era"],
            "server_info": dict(info) if info is not None else facts["server_info"],
            "tool_version": __version__,
        }
        meta.update(extra or {})
        if redaction is not None:
            meta["redaction"] = dict(redaction)
        return meta


def recorded_line(path: object, interactions: int, meta: Mapping[str, JSON] | None, *, unanswered: int = 0) -> str:
    """The line every recording ends with (``record`` over stdio and HTTP, each scenario of
    ``record-scenarios``): ``12 interactions recorded to cassettes/x.jsonl (handshake era,
    2025-06-18)``; with nothing recorded, that no file was written. ``path`` None: not yet written."""
    noun = "interaction" if interactions == 1 else "interactions"
    if not interactions:
        return "0 interactions recorded" + (f": {path} not written" if path is not None else "")
    facts = [f"{meta['era']} era" if meta and meta.get("era") else ""]
    facts.append(str(meta.get("protocol_version") or "") if meta else "")
    if unanswered:
        facts.append(f"{unanswered} unanswered request{'s' if unanswered != 1 else ''} left out")
    shown = ", ".join(fact for fact in facts if fact)
    where = f" to {path}" if path is not None else ""
    return f"{interactions} {noun} recorded{where}" + (f" ({shown})" if shown else "")
