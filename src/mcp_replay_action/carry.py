"""Value threading: carry server-minted values from live responses into later requests.

A cassette remembers the task id, ``requestState``, pagination cursor or handle the server minted
when it was recorded. A new run of the server mints new ones, so a later recorded request that
quotes the old value (``tasks/get``, an MRTR retry, the next page, ``job_status``) must be sent
with the value the live server just minted, or the chain breaks for no fault of the server.

``Carry.learn`` walks a recorded and a live response side by side and remembers
``recorded -> live`` for every pair of differing values that look minted (opaque tokens, UUIDs,
long hex, or anything under a key that conventionally carries one). ``Carry.apply`` rewrites a
recorded message with what it learned, both whole strings and tokens embedded in text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

# Keys whose string values are minted by the server and only ever echoed back by the client.
MINTED_KEYS = frozenset(
    {
        "requeststate",
        "nextcursor",
        "cursor",
        "taskid",
        "jobid",
        "handle",
        "sessionid",
        "progresstoken",
        "resumetoken",
        "subscriptionid",
        "runid",
        "operationid",
    }
)
# A token: a run of URL/base64-safe characters long enough to be an identifier, holding a digit.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_\-+/=.:]{6,}[A-Za-z0-9=]")
_MIN_TOKEN = 8


# Token-like: no white space, at least _MIN_TOKEN long, holding both a digit and a letter.
_TOKEN_LIKE = re.compile(r"(?=[^\d\s]*\d)(?=[^A-Za-z\s]*[A-Za-z])\S{" + str(_MIN_TOKEN) + ",}")


def _token_like(value: str) -> bool:
    return _TOKEN_LIKE.fullmatch(value) is not None


def _norm_key(key: str | None) -> str:
    return (key or "").replace("_", "").replace("-", "").lower()


class Carry:
    """The recorded->live substitutions learned so far in one replay.

    ``outgoing`` are the recorded messages that will be sent later (requests, notifications,
    answers): only values they quote are worth remembering, which keeps the mapping small, the
    rewrite fast, and a coincidental match from rewriting anything.
    """

    def __init__(self, outgoing: Iterable[Any] | None = None) -> None:
        self.mapping: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        self._quoted: set[str] | None = None
        if outgoing is not None:
            self._quoted = set()
            for message in outgoing:
                _collect_quoted(message, self._quoted)

    def __bool__(self) -> bool:
        return bool(self.mapping)

    def learn(self, recorded: Any, live: Any, key: str | None = None) -> None:
        """Remember every minted value that differs between a recorded and a live response."""
        if self._quoted is not None and not self._quoted:
            return  # nothing later quotes anything: there is nothing worth learning
        if isinstance(recorded, dict) and isinstance(live, dict):
            for k, value in recorded.items():
                if k in live:
                    self.learn(value, live[k], k)
        elif isinstance(recorded, list) and isinstance(live, list):
            for r_item, l_item in zip(recorded, live, strict=False):
                self.learn(r_item, l_item, key)
        elif isinstance(recorded, str) and isinstance(live, str) and recorded != live:
            self._learn_strings(recorded, live, key)

    def _learn_strings(self, recorded: str, live: str, key: str | None) -> None:
        quoted = self._quoted
        if (quoted is None or recorded in quoted) and (
            _norm_key(key) in MINTED_KEYS or (_token_like(recorded) and _token_like(live))
        ):
            self._remember(recorded, live)
            return
        if _token_like(recorded):
            return  # a whole token nobody quotes later: nothing inside it to pair up either
        parsed = _json_container(recorded), _json_container(live)
        if parsed[0] is not None and parsed[1] is not None:
            self.learn(parsed[0], parsed[1], key)
            return
        # Tokens embedded in text ("started 1b4e...") pair up when the surrounding text agrees.
        rec_tokens = [m for m in _TOKEN.finditer(recorded) if _token_like(m.group())]
        live_tokens = [m for m in _TOKEN.finditer(live) if _token_like(m.group())]
        if not rec_tokens or len(rec_tokens) != len(live_tokens):
            return
        if _TOKEN.sub("", recorded) != _TOKEN.sub("", live):
            return
        for r_match, l_match in zip(rec_tokens, live_tokens, strict=True):
            if r_match.group() != l_match.group():
                self._remember(r_match.group(), l_match.group())

    def _remember(self, recorded: str, live: str) -> None:
        if self._quoted is not None and recorded not in self._quoted:
            return
        if recorded and self.mapping.get(recorded) != live:
            self.mapping[recorded] = live
            self._pattern = None

    def apply(self, message: Any) -> Any:
        """A copy of ``message`` with every learned recorded value replaced by its live twin."""
        if not self.mapping:
            return message
        return self._apply(message)

    def _apply(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: self._apply(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self._apply(v) for v in value]
        if isinstance(value, str):
            exact = self.mapping.get(value)
            if exact is not None:
                return exact
            if len(value) > _MIN_TOKEN:
                return self._substitute(value)
        return value

    def _substitute(self, text: str) -> str:
        embedded = [k for k in self.mapping if len(k) >= _MIN_TOKEN]
        if not embedded:
            return text
        if self._pattern is None:
            # Longest first, so a token that contains another is replaced whole.
            alternatives = sorted(embedded, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(k) for k in alternatives))
        return self._pattern.sub(lambda m: self.mapping[m.group()], text)


def _collect_quoted(value: Any, into: set[str]) -> None:
    """Every string a message carries, and every token embedded in those strings."""
    if isinstance(value, dict):
        for item in value.values():
            _collect_quoted(item, into)
    elif isinstance(value, list):
        for item in value:
            _collect_quoted(item, into)
    elif isinstance(value, str):
        into.add(value)
        if len(value) > _MIN_TOKEN:
            into.update(m.group() for m in _TOKEN.finditer(value))


def _json_container(text: str) -> Any:
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, (dict, list)) else None
