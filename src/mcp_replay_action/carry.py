"""Value threading: carry server-minted values from live responses into later requests.

A cassette remembers the task id, ``requestState``, pagination cursor or handle the server minted
when it was recorded. A new run of the server mints new ones, so a later recorded request that
quotes the old value (``tasks/get``, an MRTR retry, the next page, ``job_status``) must be sent
with the value the live server just minted, or the chain breaks for no fault of the server.

``Carry.learn`` walks a recorded and a live response side by side and remembers
``recorded -> live`` for every pair of differing values that are minted (``minted.py``: a minted
key, or a token-shaped value). Three rules keep it from ever sending a request that was not
recorded for a reason other than a fresh mint:

* a recorded value that is still present anywhere in the live answer is an identity the server
  kept (a resource link returned in another order), never a minted value: it is not substituted;
* list items pair by identity (``uriTemplate``, ``uri``, ``name``, ``id``: the keys comparison uses,
  plus ``id``), and only the items left over pair in order;
* every substitution made is returned by ``Carry.rewrite`` so the report can show it.

``Carry.rewrite`` rewrites a recorded message with what it learned, both whole strings and tokens
embedded in text.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable
from typing import Any

from mcp_replay_action.gcpause import paused
from mcp_replay_action.minted import MIN_LENGTH, MINTED_KEYS, TOKEN_IN_TEXT, is_minted_key, looks_minted
from mcp_replay_action.normalize import _JSON_STARTS, IDENTITY_KEYS, json_text_of, loosely_equal
from mcp_replay_action.results import Substitution

# How list items are paired: the identity keys comparison uses, then a plain ``id``.
PAIR_KEYS = (*IDENTITY_KEYS, "id")
_TOKEN_PARTS = re.compile(r"[/:.=+]+")
_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)
# At most this many token-shaped strings quoted by the outgoing messages are kept by name, for
# ``Carry.may_learn_from`` to look for in an answer; beyond, every differing answer is walked.
_TOKENS_KEPT = 64


class Carry:
    """The recorded->live substitutions learned so far in one replay.

    ``outgoing`` are the recorded messages that will be sent later (requests, notifications,
    answers): only values they quote are worth remembering, which keeps the mapping small, the
    rewrite fast, and a coincidental match from rewriting anything.
    """

    def __init__(self, outgoing: Iterable[Any] | None = None) -> None:
        self.mapping: dict[str, str] = {}
        self._pattern: re.Pattern[str] | None = None
        # Indexed when an answer first differs by a minted value: most replays never get there,
        # and the index walks every message a long cassette sends.
        self._outgoing = outgoing
        self._index: _Quoted | None = None
        # The token-shaped (``looks_minted``) strings among those indexed (None: no index yet,
        # or more than _TOKENS_KEPT of them), and one alternation of them (None when none).
        self._tokens: frozenset[str] | None = None
        self._token_pattern: re.Pattern[str] | None = None

    def __bool__(self) -> bool:
        return bool(self.mapping)

    def _quoted(self) -> _Quoted | None:
        """Every string the outgoing messages quote; None when any value may be learned."""
        if self._outgoing is not None:
            index = self._index = _Quoted()
            # A cassette repeats most strings ("2.0", the method, a tool's name) in every message:
            # each distinct one is indexed once. Bounded, so a million-message cassette's strings
            # are not all kept; a string seen again after a clear is only indexed again.
            seen: set[str] = set()
            tokens: set[str] | None = set()
            for message in self._outgoing:
                strings = _strings_of(message, seen)
                index.update(strings)
                if tokens is not None:
                    tokens.update(s for s in strings if len(s) >= MIN_LENGTH and looks_minted(s))
                    if len(tokens) > _TOKENS_KEPT:
                        tokens = None
                if len(seen) > 50_000:
                    seen.clear()
            self._outgoing = None
            if tokens is not None:
                self._tokens = frozenset(tokens)
                if tokens:
                    self._token_pattern = re.compile("|".join(re.escape(t) for t in sorted(tokens)))
        return self._index

    def may_learn_from(self, recorded: Any) -> bool:
        """False only when ``learn(recorded, live)`` would learn nothing, whatever ``live`` is.

        Once the outgoing messages are indexed, a value is learned only if they quote it, and it
        is either under a minted key or token-shaped: an answer that names no minted key and
        holds none of the few token-shaped strings the messages quote has nothing to learn, so
        the replay need not walk it beside its live answer (or redact that answer) before the
        next message is sent. True (walk it) until the index is built, and when the messages
        quote more than ``_TOKENS_KEPT`` token-shaped strings."""
        if self._tokens is None:
            return True
        return _may_hold(recorded, self._token_pattern)

    def learn(self, recorded: Any, live: Any) -> None:
        """Remember every minted value that differs between a recorded and a live response and
        that the live response no longer holds anywhere."""
        candidates: list[tuple[str, str]] = []
        with paused():  # a JSON text in the answers is parsed whole (gcpause.py)
            _pairs(recorded, live, None, candidates)
        if not candidates:
            return
        quoted = self._quoted()
        if quoted is not None:
            candidates = [(r, v) for r, v in candidates if r in quoted]
            if not candidates:
                return  # nothing later quotes these values: nothing worth learning
        present = _strings_of(live, set())
        dumped = json.dumps(live, ensure_ascii=False)
        for rec, value in candidates:
            if rec and not _still_present(rec, present, dumped) and self.mapping.get(rec) != value:
                self.mapping[rec] = value
                self._pattern = None

    def apply(self, message: Any) -> Any:
        """A copy of ``message`` with every learned recorded value replaced by its live twin."""
        return self.rewrite(message)[0]

    def rewrite(self, message: Any) -> tuple[Any, tuple[Substitution, ...]]:
        """``message`` with learned values replaced, and the substitutions that were made."""
        if not self.mapping:
            return message, ()
        used: dict[str, str] = {}
        out = self._apply(message, used)
        return out, tuple(Substitution(r, v) for r, v in used.items())

    def _apply(self, value: Any, used: dict[str, str]) -> Any:
        if isinstance(value, dict):
            return {k: self._apply(v, used) for k, v in value.items()}
        if isinstance(value, list):
            return [self._apply(v, used) for v in value]
        if isinstance(value, str):
            exact = self.mapping.get(value)
            if exact is not None:
                used[value] = exact
                return exact
            if len(value) > MIN_LENGTH:
                return self._substitute(value, used)
        return value

    def _substitute(self, text: str, used: dict[str, str]) -> str:
        if self._pattern is None:
            embedded = sorted((k for k in self.mapping if len(k) >= MIN_LENGTH), key=len, reverse=True)
            # Longest first, and never inside a longer word, so a token that contains another is
            # replaced whole and ``abc12345x`` is not touched by ``abc12345``.
            alternatives = "|".join(re.escape(k) for k in embedded) or r"(?!)"
            self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")

        def replace(match: re.Match[str]) -> str:
            live = used[match.group()] = self.mapping[match.group()]
            return live

        return self._pattern.sub(replace, text)


class _Quoted:
    """Which strings the outgoing messages quote, as a Bloom filter of their hashes (512 KiB,
    three bits each): as small for a million messages as for ten, where a set of hashes grew by
    ~100 bytes per string. A string that only collides reads as quoted (about one in 100,000 at
    30,000 strings): learning it changes no message, since none holds it, but grows the mapping
    every later message is rewritten with, so collisions are kept that rare."""

    _BITS = 1 << 22
    _MASK = _BITS - 1

    def __init__(self) -> None:
        self._bits = bytearray(self._BITS // 8)

    def update(self, strings: Iterable[str]) -> None:
        bits, mask = self._bits, self._MASK
        for value in strings:
            # _probes, written out: this runs once per string of every outgoing message.
            h = hash(value)
            first, step = h & mask, ((h >> 22) | 1) & mask
            second, third = (first + step) & mask, (first + 2 * step) & mask
            bits[first >> 3] |= 1 << (first & 7)
            bits[second >> 3] |= 1 << (second & 7)
            bits[third >> 3] |= 1 << (third & 7)

    def __contains__(self, value: str) -> bool:
        bits = self._bits
        return all(bits[at >> 3] >> (at & 7) & 1 for at in self._probes(value))

    @classmethod
    def _probes(cls, value: str) -> tuple[int, int, int]:
        # Double hashing: three positions from the two halves of one 64-bit hash.
        h = hash(value)
        first, step = h & cls._MASK, ((h >> 22) | 1) & cls._MASK
        return first, (first + step) & cls._MASK, (first + 2 * step) & cls._MASK


def _pairs(recorded: Any, live: Any, key: str | None, out: list[tuple[str, str]]) -> None:
    """Append to ``out`` every (recorded, live) pair of differing minted strings at the same place
    in two answers, in document order. Plain recursion into a list, not nested generators: this
    runs on every answer that differs."""
    if loosely_equal(recorded, live):
        # Equal subtrees hold equal strings at every place (lists pair by identity, which in
        # equal lists is by place): nothing to learn, and a big answer is not walked.
        return
    if isinstance(recorded, dict) and isinstance(live, dict):
        for k, value in recorded.items():
            if k in live:
                other = live[k]
                if isinstance(value, (dict, list)):
                    _pairs(value, other, k, out)
                elif isinstance(value, str) and isinstance(other, str) and value != other:
                    # A scalar pairs only string with differing string: settled here, not in a call
                    # per member.
                    _string_pairs(value, other, k, out)
    elif isinstance(recorded, list) and isinstance(live, list):
        for i, j in _align(recorded, live):
            _pairs(recorded[i], live[j], key, out)  # an equal pair returns at once
    elif isinstance(recorded, str) and isinstance(live, str):
        _string_pairs(recorded, live, key, out)


def _string_pairs(recorded: str, live: str, key: str | None, out: list[tuple[str, str]]) -> None:
    # Text that can hold JSON starts with a character no token holds: looks_minted is not asked.
    if is_minted_key(key) or (recorded[:1] not in _JSON_STARTS and looks_minted(recorded) and looks_minted(live)):
        out.append((recorded, live))
        return
    parsed = json_text_of(recorded), json_text_of(live)
    if parsed[0] is not None and parsed[1] is not None:
        _pairs(parsed[0], parsed[1], key, out)
        return
    # Tokens embedded in text ("started 1b4e...") pair up when the surrounding text agrees.
    rec_tokens = [m.group() for m in TOKEN_IN_TEXT.finditer(recorded) if looks_minted(m.group())]
    if not rec_tokens:
        return
    live_tokens = [m.group() for m in TOKEN_IN_TEXT.finditer(live) if looks_minted(m.group())]
    if len(rec_tokens) != len(live_tokens) or TOKEN_IN_TEXT.sub("", recorded) != TOKEN_IN_TEXT.sub("", live):
        return
    out.extend((rec, value) for rec, value in zip(rec_tokens, live_tokens, strict=True) if rec != value)


def _still_present(value: str, strings: set[str], dumped: str) -> bool:
    """Whether the live answer still holds ``value``: as a whole string, or (long enough to be an
    id) as a token inside any text."""
    if value in strings:
        return True
    if len(value) < MIN_LENGTH:
        return False
    needle = json.dumps(value, ensure_ascii=False)[1:-1]
    # Found by str.find, not a regex built per value: re's cache would keep up to 512 of them.
    at = dumped.find(needle)
    while at != -1:
        end = at + len(needle)
        if (at == 0 or dumped[at - 1] not in _ASCII_ALNUM) and (end == len(dumped) or dumped[end] not in _ASCII_ALNUM):
            return True
        at = dumped.find(needle, at + 1)
    return False


def _identity(item: Any, field: str) -> Any:
    value = item.get(field) if isinstance(item, dict) else None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _align(recorded: list[Any], live: list[Any]) -> list[tuple[int, int]]:
    """Index pairs: by the first identity key both lists carry uniquely, the rest in order."""
    if len(recorded) == 1 == len(live):
        return [(0, 0)]  # paired by identity or left over, one item pairs with the other
    for field in PAIR_KEYS:
        if not recorded or not live or _identity(recorded[0], field) is None or _identity(live[0], field) is None:
            continue  # settled by the first items, without a pass over every item
        rec_ids = [_identity(item, field) for item in recorded]
        live_ids = [_identity(item, field) for item in live]
        if None in rec_ids or None in live_ids:
            continue
        if len(set(rec_ids)) != len(rec_ids) or len(set(live_ids)) != len(live_ids):
            continue
        if rec_ids == live_ids:
            return list(zip(range(len(recorded)), range(len(live)), strict=True))  # in place already
        where = {ident: j for j, ident in enumerate(live_ids)}
        pairs = [(i, where[ident]) for i, ident in enumerate(rec_ids) if ident in where]
        taken = {j for _, j in pairs}
        left_rec = [i for i, ident in enumerate(rec_ids) if ident not in where]
        left_live = [j for j in range(len(live)) if j not in taken]
        return pairs + list(zip(left_rec, left_live, strict=False))
    return [(i, i) for i in range(min(len(recorded), len(live)))]


def _may_hold(recorded: Any, tokens: re.Pattern[str] | None) -> bool:
    """Whether ``recorded`` may hold a learnable value: a key ``is_minted_key`` names, or one of
    ``tokens`` anywhere in a string, at any depth of the JSON texts ``_pairs`` would parse.

    A string that ``json_text_of`` may parse is searched as text, never parsed: without a
    backslash, every key and string in it is written out literally (an escape, a nested JSON
    text's quotes or a ``\\u`` spelling of a key would need one, so a backslash answers True)."""
    stack = [recorded]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, member in value.items():
                if not isinstance(key, str) or is_minted_key(key):
                    return True
                stack.append(member)
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            if tokens is not None and tokens.search(value) is not None:
                return True
            if value[:1] in _JSON_STARTS and ("\\" in value or _names_minted_key(value)):
                return True
    return False


def _names_minted_key(text: str) -> bool:
    """Whether ``text`` holds a minted key's name as ``norm_key`` spells it (lower case, no ``_``
    or ``-``): a key in it that ``is_minted_key`` names always is, and mere prose may be."""
    folded = text.lower().replace("_", "").replace("-", "")
    return any(name in folded for name in MINTED_KEYS)


def _strings_of(message: Any, seen: set[str]) -> set[str]:
    """Every string ``message`` carries, every token embedded in those strings, and every string
    inside JSON text; less those that strings already in ``seen`` gave (``seen`` gains the rest:
    each string is read once)."""
    into: set[str] = set()
    stack = [message]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str) and value not in seen:
            seen.add(value)
            into.add(value)
            if len(value) > MIN_LENGTH:
                for match in TOKEN_IN_TEXT.finditer(value):
                    token = match.group()
                    into.add(token)
                    # tasks://tsk_81f0c2a9d3/log quotes tsk_81f0c2a9d3
                    into.update(p for p in _TOKEN_PARTS.split(token) if len(p) >= MIN_LENGTH)
                inner = json_text_of(value)
                if inner is not None:
                    stack.append(inner)
    return into
