"""Correlation: which recorded values a later request took from an earlier answer.

A cassette shows its own data flow. When an answer holds a value and a later request quotes it
verbatim (as a whole argument, inside a nested object or a JSON text, inside a URI, or a word the
answer printed in prose: "Created note note_x7k2"), the client took the value from the server.
A new run of the server may mint another one, and the request must then carry the live value
(``carry.py`` threads it). Load-testing tools call this correlation (JMeter, LoadRunner); the
value's key and shape do not matter, only that the recording proves where it came from.

``correlate(interactions, rules)`` reads the recording once and returns the ``Correlations``:
the values to thread and the answers they come from. A value is one when all of these hold:

* it is a string of at least ``FLOOR`` characters and not one of the few JSON-schema and MCP
  words in ``COMMON`` (booleans, floats, null and short strings are too common to prove a flow),
  or an integer (matched by its decimal spelling) whose flow ``intflow.threads`` finds
  unambiguous: never a count or a limit, both places named as an identifier, or a value that
  occurs nowhere else;
* an answer holds it (a whole string or integer, a string in JSON text, a word of text: a run of
  letters, digits, ``_`` and ``-``, or a number in text), and that answer is not a declaration
  (``DECLARATIONS``: ``tools/list`` names a tool, it does not mint it);
* no request or notification sent before that answer came held it (the client knew it already:
  a title it chose, echoed back);
* a later request or notification quotes it;
* at most ``MANY`` answers held it before it was first quoted (a value every answer repeats is
  the server's vocabulary, not something it minted for this session).

Declared rules (``ThreadRules``, ``--thread`` / ``--no-thread``, stored in the cassette header)
cover the rest: a value at a ``--thread`` place (a key at any depth, or a path) is threaded
whatever its length or how many answers hold it, as are the values under the keys the protocol
defines as minted (``minted.MINTED_KEYS``: ``requestState``, ``cursor``, ``taskId``...); nothing
at a ``--no-thread`` place is. Every pattern here is linear in the text's length.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass, field

from mcp_replay_action.compare import intflow
from mcp_replay_action.compare.intflow import is_decimal
from mcp_replay_action.compare.masks import json_text_of
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON
from mcp_replay_action.values.minted import is_minted_key
from mcp_replay_action.values.paths import Token, parse_path

FLOOR = 6  # characters: a shorter string is a word or a number, too common to prove a flow
MANY = 3  # answers that may hold a value before it is first quoted
LONGEST = 4096  # a longer string is a document, not a value a request quotes back
# Answers that declare what the server offers rather than mint anything for the session.
DECLARATIONS = frozenset({"initialize", "server/discover", "tools/list", "prompts/list", "resources/templates/list"})
# Words of the protocol and of JSON Schema that many answers and requests share by design.
COMMON = frozenset(
    {
        "string",
        "number",
        "integer",
        "boolean",
        "object",
        "array",
        "null",
        "true",
        "false",
        "success",
        "failed",
        "resource",
        "resource_link",
        "image",
        "audio",
        "text/plain",
        "application/json",
        "required",
        "default",
    }
)
# A word of text: the place a value printed in prose is found (bounded: linear, no backtracking).
WORD = re.compile(rf"[A-Za-z0-9_\-]{{{FLOOR},{LONGEST}}}")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
_JSON_STARTS = "{["

Path = tuple[str | int, ...]  # keys and list indexes from the message root; "{json}" enters JSON text


@dataclass(frozen=True)
class ThreadRules:
    """Declared threading rules: ``thread`` and ``no_thread`` each hold keys (a plain word: that key
    at any depth) or paths in finding notation (``result.structuredContent.ref``, ``[]`` for any
    item), naming places in an answer."""

    thread: tuple[str, ...] = ()
    no_thread: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for rule in (*self.thread, *self.no_thread):
            _compiled(rule)  # a rule that cannot be read fails here, before any server starts

    def __bool__(self) -> bool:
        return bool(self.thread or self.no_thread)

    def threads(self, path: Path) -> bool:
        """Whether a ``--thread`` rule names ``path``."""
        return any(_matches(rule, path) for rule in self.thread)

    def refuses(self, path: Path) -> bool:
        """Whether a ``--no-thread`` rule names ``path``."""
        return any(_matches(rule, path) for rule in self.no_thread)

    def merged(self, other: ThreadRules) -> ThreadRules:
        """These rules and ``other``'s, each once, in order."""
        return ThreadRules(
            tuple(dict.fromkeys((*self.thread, *other.thread))),
            tuple(dict.fromkeys((*self.no_thread, *other.no_thread))),
        )

    def to_json(self) -> dict[str, list[str]]:
        """The header's ``threading`` entry."""
        out: dict[str, list[str]] = {}
        if self.thread:
            out["thread"] = list(self.thread)
        if self.no_thread:
            out["no_thread"] = list(self.no_thread)
        return out

    @classmethod
    def from_meta(cls, meta: Mapping[str, JSON] | None) -> ThreadRules:
        """The rules a cassette header stores (``threading``); none when it stores none."""
        entry = meta.get("threading") if isinstance(meta, Mapping) else None
        if not isinstance(entry, Mapping):
            return cls()

        def strings(name: str) -> tuple[str, ...]:
            values = entry.get(name)
            return tuple(v for v in values if isinstance(v, str)) if isinstance(values, list) else ()

        return cls(strings("thread"), strings("no_thread"))


def _compiled(rule: str) -> tuple[bool, tuple[Token, ...]]:
    """(is a bare key, path tokens): a plain word is a key at any depth, one ``("key", word)``."""
    text = rule.strip()
    if not text:
        raise ConfigError("invalid threading rule '': it names no key or path")
    if re.fullmatch(r"[A-Za-z_][\w-]*", text):
        return True, (("key", text),)
    try:
        return False, parse_path(text)
    except ConfigError as exc:
        raise ConfigError(str(exc).replace("ignore path", "threading rule")) from None


def _matches(rule: str, path: Path) -> bool:
    is_key, tokens = _compiled(rule)
    if is_key:
        return any(step == tokens[0][1] for step in path if isinstance(step, str))
    steps = [step for step in path if step != "{json}"]  # JSON text is entered transparently
    pattern = [t for t in tokens if t[0] != "box"]
    if len(pattern) != len(steps):
        return False
    for token, step in zip(pattern, steps, strict=True):
        kind = token[0]
        if kind == "key" and step != token[1]:
            return False
        if kind == "anykey" and not isinstance(step, str):
            return False
        if kind in ("any", "ident") and not isinstance(step, int):
            return False
        if kind == "index" and step != token[1]:
            return False
    return True


class Seqs:
    """A set of seqs, sorted in a flat array (4 bytes a seq where a frozenset of ints held ~60):
    ``in`` is a binary search."""

    def __init__(self, seqs: Iterable[int] = ()) -> None:
        self._seqs = array("i", sorted(set(seqs)))

    def __contains__(self, seq: object) -> bool:
        at = bisect_left(self._seqs, seq)  # type: ignore[call-overload]
        return at < len(self._seqs) and self._seqs[at] == seq

    def __iter__(self) -> Iterator[int]:
        return iter(self._seqs)

    def __len__(self) -> int:
        return len(self._seqs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Seqs) and self._seqs == other._seqs

    def __hash__(self) -> int:
        return hash(tuple(self._seqs))

    def __repr__(self) -> str:
        return f"Seqs({list(self._seqs)!r})"


@dataclass(frozen=True)
class Correlations:
    """What the recording proves was threaded: ``values`` (strings; an integer by its decimal
    spelling) that a later request quotes from an earlier answer, ``declared`` those of them that
    only a declared rule or a minted key made one (learned only at such a place)."""

    values: frozenset[str] = frozenset()
    declared: frozenset[str] = frozenset()
    # Every answer that held one of ``values`` before it was first quoted: the only answers a
    # replay learns live values from.
    holders: Seqs = field(default_factory=Seqs)


NONE = Correlations()


def correlate(interactions: Iterable[JSON], rules: ThreadRules | None = None) -> Correlations:
    """The correlations of a recording (see the module docstring), read in one pass over what the
    client sent plus one over the answers before the last first quote (``Flow``)."""
    return Flow(interactions, rules).correlations()


class Flow:
    """A recording's data flow, read as far as it is asked. ``may_hold`` needs only the first
    pass (what the client sent), ``correlations`` the second too (every answer before the last
    first quote, walked).

    A replay asks ``may_hold`` of each answer that differs from its recording, and on an unchanged
    server most such answers differ by a time or an id no request quotes: then the second pass is
    never made. What the first pass keeps of every value the client sent is its first quote's seq
    and two bits of the keys it was quoted under (``_Firsts``), not the value: a streamed cassette
    of 100,000 calls quotes ~100,000 distinct values, and a dict of them with a set of keys each
    raised a replay's peak RSS from 31 to 80 MiB."""

    def __init__(self, interactions: Iterable[JSON], rules: ThreadRules | None = None) -> None:
        self.rules = rules or ThreadRules()
        # Read twice: a cassette streamed from disk is iterated again, never held whole.
        self._items: Iterable[JSON] | None = list(interactions) if iter(interactions) is interactions else interactions
        self._firsts: _Firsts | None = None
        self._last = -1  # the last first quote: an answer from there on cannot be a source
        self._found: Correlations | None = None
        self._ahead: tuple[int, bool] | None = None  # (seq, may_hold) worked out ahead

    def correlations(self) -> Correlations:
        """What the recording proves was threaded (read once)."""
        if self._found is None:
            self._first_pass()
            items, self._items = self._items, None
            assert items is not None  # let go only once found
            # Handed over in a list the second pass empties: it lets go before its last sets.
            handed = [self._firsts] if self._firsts is not None else []
            self._firsts = None
            self._found = NONE if not handed or self._last < 0 else _second_pass(items, self.rules, handed, self._last)
        return self._found

    def may_hold(self, inter: JSON) -> bool:
        """False when the answer to ``inter`` (a request) cannot be among ``correlations().holders``:
        none of the values it offers was first quoted after it and could be one whatever other
        answers hold (a string long and rare enough, an integer of 3 digits or quoted under an
        identifier and never a quantity, or a value a declared rule names). From the first pass
        alone; once the second is read, exactly its answer."""
        if self._found is not None:
            return inter.seq in self._found.holders
        ahead = self._ahead
        if ahead is not None and ahead[0] == inter.seq:
            return ahead[1]
        return self._may_hold(inter)

    def look_ahead(self, inter: JSON) -> None:
        """Work out ``may_hold(inter)`` now and keep it (one answer's worth) for when it is asked:
        a replay asks it of an answer that differs before it sends the next request, and asked
        while the server still works on ``inter`` it costs nothing to wait for. Only once the
        first pass is made (an answer differed) and until the second is."""
        if self._found is None and self._firsts is not None:
            self._ahead = (inter.seq, self._may_hold(inter))

    def _may_hold(self, inter: JSON) -> bool:
        firsts = self._first_pass()
        response = inter.response
        seq = inter.seq
        if seq >= self._last or inter.method in DECLARATIONS or not isinstance(response, dict):
            return False
        result = response.get("result")
        if not isinstance(result, (dict, list)):
            return False
        later = (seq + 1) << 2  # a packed first quote this high came after the answer
        packed = firsts.packed
        key_marks = intflow.key_marks
        for value, ruled, key in offered_values(result, self.rules):
            found = packed(value)
            if found < later:
                continue  # never quoted, or the client held it before this answer came
            if ruled:
                return True
            if not is_decimal(value):
                if plain_value(value):
                    return True
                continue
            marks = found & 3 | key_marks(key)
            if marks & intflow.QUANTITY:
                continue
            if marks & intflow.IDENTIFIER or len(value.lstrip("-")) >= intflow.UNIQUE_DIGITS:
                return True
        return False

    def _first_pass(self) -> _Firsts:
        if self._firsts is None:
            assert self._items is not None
            # About one value a client message quotes afresh (a calc cassette: 100,007 in 100,001).
            items = self._items
            firsts = self._firsts = _Firsts(len(items) if isinstance(items, Sized) else 0)
            note = firsts.note_all
            for inter in self._items:
                if inter.kind in ("request", "notification") and note(quotes(inter.message), inter.seq):
                    self._last = inter.seq
        return self._firsts


def _second_pass(items: Iterable[JSON], rules: ThreadRules, handed: list[_Firsts], last: int) -> Correlations:
    """The correlations, from the answers before ``last`` and the first pass (``handed``: taken
    out of the list, so it goes when this lets go of it)."""
    firsts = handed.pop()
    # A value an answer held before its first quote -> the first such answer's seq << 2 | the
    # marks of the keys those answers held an integer under; the later such answers, apart (few).
    held: dict[str, int] = {}
    more: dict[str, list[int]] = {}
    by_rule: set[str] = set()
    declarations: list[tuple[int, JSON]] = []  # (seq, result): what an integer must not occur in
    for inter in items:
        response = inter.response
        seq = inter.seq
        if seq >= last:
            break  # an answer after the last first quote is never walked (a big last answer costs nothing)
        if inter.kind != "request" or not isinstance(response, dict):
            continue
        result = response.get("result")
        if not isinstance(result, (dict, list)):
            continue
        if inter.method in DECLARATIONS:
            declarations.append((seq, result))
            continue
        for value, ruled, key in offered_values(result, rules):
            if firsts.first(value) <= seq:
                continue  # never quoted, or the client held it before this answer came
            marks = intflow.key_marks(key) if is_decimal(value) else 0
            packed = held.get(value)
            if packed is None:
                held[value] = seq << 2 | marks
            else:
                held[value] = packed | marks
                if packed >> 2 != seq:
                    later = more.setdefault(value, [])
                    if not later or later[-1] != seq:
                        later.append(seq)
            if ruled:
                by_rule.add(value)
    integers = [value for value in held if is_decimal(value)]
    declared_at = _declared_integers(declarations, frozenset(integers)) if integers else {}
    by_flow = []
    for value, packed in held.items():
        count = 1 + len(more.get(value, ()))
        if is_decimal(value):
            if intflow.flows(
                value,
                packed & 3,
                firsts.marks(value),
                held=count,
                many=MANY,
                declared_before=declared_at.get(value, last) < firsts.first(value),
            ):
                by_flow.append(value)
        elif plain_value(value) and count <= MANY:
            by_flow.append(value)
    del firsts, integers  # gone before the sets below are made: a replay's peak is here
    # A value only a declared rule made a correlation is learned only at a rule's place.
    declared = frozenset(by_rule.difference(by_flow))
    values = frozenset(by_flow).union(declared) if declared else frozenset(by_flow)
    del by_flow
    holders = [held[v] >> 2 for v in values]
    for value in more.keys() & values:
        holders.extend(more[value])
    return Correlations(values, declared, Seqs(holders))


class _Firsts:
    """For every value the client sent: the seq of its first quote and the ``intflow`` marks of
    the keys it was quoted under, found by the value's hash in two flat arrays (open addressing,
    at most two thirds full), so no value is kept: 18 to 36 bytes a value, where a dict of the
    values and a set of keys each held ~300. Two values whose 64-bit hashes are equal (about one
    pair in 10^9 among 100,000) would read as one."""

    def __init__(self, expected: int = 0) -> None:
        # Sized from the start for ``expected`` values (growing holds both tables at once, and
        # the freed one is seldom given back to the system).
        size = 1024
        while 2 * size < 3 * expected:
            size *= 2
        self._hashes = array("q", bytes(8 * size))
        self._data = array("i", bytes(4 * size))  # seq << 2 | marks
        self._count = 0

    def note_all(self, quoted: Iterable[tuple[str, str | None]], seq: int) -> bool:
        """Record the quotes of one message at ``seq`` (``quotes``; messages come in seq order),
        each value with the marks of its key when it spells an integer; True when one of them
        is a value's first. Probed inline: the first pass notes every value a recording's client
        sent, and a call per value was a third of its time."""
        hashes, data = self._hashes, self._data
        mask = len(hashes) - 1
        key_marks = intflow.key_marks
        fresh = False
        for value, key in quoted:
            h = hash(value) or 1  # 0 marks an empty slot
            at = h & mask
            found = hashes[at]
            while found and found != h:
                at = (at + 1) & mask
                found = hashes[at]
            # (``isdigit`` first: most values are not numbers, and it is a method, not a call here)
            marks = key_marks(key) if (value.isdigit() or value[:1] == "-") and is_decimal(value) else 0
            if found:
                if marks:
                    data[at] |= marks
                continue
            hashes[at] = h
            data[at] = seq << 2 | marks
            fresh = True
            self._count += 1
            if 3 * self._count > 2 * len(hashes):
                self._grow()
                hashes, data = self._hashes, self._data
                mask = len(hashes) - 1
        return fresh

    def packed(self, value: str) -> int:
        """The seq of the first quote of ``value``, shifted left two, or'd with the marks of the
        keys it was quoted under; -1 when the client never sent it."""
        hashes = self._hashes
        h = hash(value) or 1
        mask = len(hashes) - 1
        at = h & mask
        while True:
            found = hashes[at]
            if found == h:
                return self._data[at]
            if not found:
                return -1
            at = (at + 1) & mask

    def first(self, value: str) -> int:
        """The seq of the first quote of ``value``; -1 when the client never sent it."""
        found = self.packed(value)
        return -1 if found < 0 else found >> 2

    def marks(self, value: str) -> int:
        """The marks of the keys ``value`` was quoted under (0 for a value never sent)."""
        found = self.packed(value)
        return 0 if found < 0 else found & 3

    def _grow(self) -> None:
        old = zip(self._hashes, self._data, strict=True)
        size = 2 * len(self._hashes)
        hashes = self._hashes = array("q", bytes(8 * size))
        data = self._data = array("i", bytes(4 * size))
        mask = size - 1
        for h, packed in old:
            if h:
                at = h & mask
                while hashes[at]:
                    at = (at + 1) & mask
                hashes[at] = h
                data[at] = packed


def _declared_integers(declarations: list[tuple[int, JSON]], wanted: frozenset[str]) -> dict[str, int]:
    """Where each integer of ``wanted`` first occurs in a declaration (seq), as a whole value or
    a number in text."""
    out: dict[str, int] = {}
    for seq, result in declarations:
        for _, leaf in keyed_leaves(result, "result"):
            found = intflow.number_words(leaf) if isinstance(leaf, str) else [str(leaf)]
            for value in found:
                if value in wanted:
                    out.setdefault(value, seq)
    return out


def quoted_values(message: Mapping[str, JSON]) -> set[str]:
    """Every value a client message quotes (``quotes``)."""
    return {value for value, _ in quotes(message)}


def quotes(message: Mapping[str, JSON]) -> Iterator[tuple[str, str | None]]:
    """(value, key) for every value a client message quotes: each whole string and integer of
    its ``params`` (JSON text entered), each word and each number of its strings, with the key
    it was quoted under."""
    params = message.get("params")
    if not isinstance(params, (dict, list)):
        return
    for key, leaf in keyed_leaves(params, "params"):
        if type(leaf) is int:
            yield str(leaf), key
            continue
        assert isinstance(leaf, str)
        if len(leaf) <= LONGEST:
            yield leaf, key
        if len(leaf) > FLOOR:
            for word in WORD.findall(leaf):
                yield word, key
        for number in intflow.number_words(leaf):
            yield number, key


def offered_values(result: JSON, rules: ThreadRules) -> Iterator[tuple[str, bool, str | None]]:
    """(value, declared, key) for every value an answer's ``result`` may have minted: each whole
    string and integer (by its decimal spelling), each word and number of its texts, whether a
    declared rule (a ``--thread`` place or a minted key) names its place, and the key it is held
    under; nothing at a ``--no-thread`` place."""
    for key, leaf, path in _held(result, rules):
        ruled = is_minted_key(key) or (path is not None and rules.threads(path))
        if type(leaf) is int:
            yield str(leaf), ruled, key
            continue
        assert isinstance(leaf, str)
        if ruled or plain_value(leaf):
            yield leaf, ruled, key
        if leaf[:1] in _JSON_STARTS:
            continue
        if len(leaf) > FLOOR:
            for word in WORD.findall(leaf):
                if word != leaf and word.lower() not in COMMON:
                    yield word, False, key
        for number in intflow.number_words(leaf):
            yield number, ruled and number == leaf, key


def _held(result: JSON, rules: ThreadRules) -> Iterator[tuple[str | None, str | int, Path | None]]:
    """(key, leaf, path) for every leaf of an answer's ``result`` no ``--no-thread`` rule names;
    the path only when rules are declared (only they read it: without, no path is built)."""
    if not rules:
        for key, leaf in keyed_leaves(result, "result"):
            yield key, leaf, None
        return
    for path, leaf in leaves(result, ("result",)):
        if not rules.refuses(path):
            yield key_of(path), leaf, path


def key_of(path: Path) -> str | None:
    """The key a value at ``path`` is held under (JSON text entered transparently)."""
    return next((step for step in reversed(path) if isinstance(step, str) and step != "{json}"), None)


def plain_value(value: str) -> bool:
    """Whether a string may be a correlation without a declared rule: long enough, not a
    document, not a common word (an integer is read by its data flow instead: ``intflow``)."""
    return FLOOR <= len(value) <= LONGEST and value.lower() not in COMMON


def leaves(value: JSON, path: Path) -> Iterator[tuple[Path, str | int]]:
    """(path, leaf) for every string and integer (not boolean) in ``value``, entering JSON text."""
    stack: list[tuple[Path, JSON]] = [(path, value)]
    while stack:
        at, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((at + (k,), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((at + (i,), v) for i, v in enumerate(node))
        elif isinstance(node, str):
            yield at, node
            inner = json_text_of(node)
            if inner is not None:
                stack.append((at + ("{json}",), inner))
        elif isinstance(node, int) and not isinstance(node, bool):
            yield at, node


def keyed_leaves(value: JSON, key: str | None) -> Iterator[tuple[str | None, str | int]]:
    """(key, leaf) for every leaf ``leaves`` gives, with the key it is held under (``key_of`` of
    its path; ``key`` at the root and for the items of a root list), and no path built: this
    walks every message of a recording."""
    stack: list[tuple[str | None, JSON]] = [(key, value)]
    while stack:
        at, node = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend(node.items())  # type: ignore[union-attr]
        elif kind is list:
            stack.extend((at, item) for item in node)  # type: ignore[union-attr]
        elif kind is str:
            yield at, node  # type: ignore[misc]
            if node[:1] in _JSON_STARTS:  # type: ignore[index]
                inner = json_text_of(node)  # type: ignore[arg-type]
                if inner is not None:
                    stack.append((at, inner))
        elif kind is int:
            yield at, node  # type: ignore[misc]


def locate(recorded: str, word: str, live: str) -> str | None:
    """The live twin of ``word``, a word of the recorded text, found at the same place in the live
    text: after the same literal context (the characters before it, back to the previous word that
    holds a digit, which may vary itself, at most ``CONTEXT``), at the same occurrence of that
    context, and followed by the same character. None when the live text has no such place.
    Only ``str.find`` and slices: linear in the texts' length."""
    at = word_at(recorded, word)
    if at < 0:
        return None
    start = max(0, at - CONTEXT)
    # Do not lean on a neighbouring id, a count or a time: cut the context after the last word
    # in it that holds a digit.
    left = recorded[start:at]
    cut = 0
    for match in _DIGIT_WORD.finditer(left):
        cut = match.end()
    left = left[cut:]
    if left:
        n = _occurrences(recorded, left, at)
        begin = _nth(live, left, n)
        if begin < 0:
            return None
        begin += len(left)
    else:
        if at != 0:
            return None  # only a word at the very start has no context before it
        begin = 0
    end = begin
    while end < len(live) and live[end] in _WORD_CHARS and end - begin <= LONGEST:
        end += 1
    found = live[begin:end]
    after_rec = recorded[at + len(word) : at + len(word) + 1]
    after_live = live[end : end + 1]
    if not found or after_rec != after_live:
        return None
    return found


CONTEXT = 24  # characters of literal context a word in prose is found by
_DIGIT_WORD = re.compile(r"[A-Za-z0-9_\-]*[0-9][A-Za-z0-9_\-]*")


def word_at(text: str, word: str, chars: frozenset[str] = _WORD_CHARS) -> int:
    """Where ``word`` first stands whole in ``text`` (no character of ``chars`` touches it on
    either side), or -1. ``str.find`` only: linear, whatever the text."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        if (at == 0 or text[at - 1] not in chars) and (end == len(text) or text[end] not in chars):
            return at
        at = text.find(word, at + 1)
    return -1


def _occurrences(text: str, needle: str, before: int) -> int:
    """How many non-overlapping times ``needle`` occurs in ``text`` ending at or before ``before``."""
    count, at = 0, text.find(needle)
    while at != -1 and at + len(needle) <= before:
        count += 1
        at = text.find(needle, at + len(needle))
    return count


def _nth(text: str, needle: str, n: int) -> int:
    """Where the ``n``-th (1-based) non-overlapping occurrence of ``needle`` in ``text`` starts."""
    at = -1
    pos = 0
    for _ in range(n):
        at = text.find(needle, pos)
        if at < 0:
            return -1
        pos = at + len(needle)
    return at
