"""Value threading: carry the values a server minted from live answers into later requests.

A cassette remembers the note id, task id, ``requestState``, cursor or handle the server minted
when it was recorded. A new run of the server mints new ones, so a later recorded request that
quotes the old value (``get_note``, ``tasks/get``, an MRTR retry, the next page) must be sent with
the value the live server just gave, or the chain breaks for no fault of the server.

Which values to carry is read from the recording's own data flow (``correlate.py``: a value an
earlier answer held and a later request quoted, whatever its key or shape, plus declared rules and
the keys the protocol defines as minted). ``Carry.learn`` walks a recorded answer that holds such
a value beside its live answer and remembers ``recorded -> live`` where the live answer holds
another value at the same place: the same key, the same item of a list, the same word of a text
(found by its literal context, ``correlate.locate``). Rules that keep it from sending a request
that was not recorded for a reason other than a fresh mint:

* only the answers that held a correlated value before a request quoted it are learned from, and
  the first live value learned for a recorded one stays;
* a recorded value that is still present anywhere in the live answer is an identity the server
  kept (a resource link returned in another order), never a minted value: it is not substituted;
* list items pair by identity (``uriTemplate``, ``uri``, ``name``, ``id``: the keys comparison uses,
  plus ``id``), and only the items left over pair in order;
* every substitution made is returned by ``Carry.rewrite`` so the report can show it.

``Carry.rewrite`` rewrites a recorded message with what it learned, both whole values and words
embedded in text; ``Carry.expected`` does the same to a later recorded answer, which echoes the
value the request now carried (``get_note`` answering with the live note id).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from mcp_replay_action.compare.correlate import (
    FLOOR,
    NONE,
    WORD,
    Correlations,
    Flow,
    Path,
    ThreadRules,
    key_of,
    locate,
    word_at,
)
from mcp_replay_action.compare.intflow import UNIQUE_DIGITS, is_decimal, names_identifier, number_words
from mcp_replay_action.compare.normalize import IDENTITY_KEYS, json_text_of, loosely_equal
from mcp_replay_action.host.gcpause import paused
from mcp_replay_action.model import JSON
from mcp_replay_action.model.results import Substitution
from mcp_replay_action.values.minted import is_minted_key

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared

# How list items are paired: the identity keys comparison uses, then a plain ``id``.
PAIR_KEYS = (*IDENTITY_KEYS, "id")
_ASCII_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


class Carry:
    """The recorded->live substitutions learned so far in one replay.

    ``interactions`` is the recording (read once, by ``correlate``, for what it proves was
    threaded); ``rules`` the declared ``--thread``/``--no-thread`` rules. Without a recording
    nothing is learned (``mapping`` may still be set, as ``update`` does to thread backwards).
    """

    def __init__(
        self, interactions: Iterable[JSON] | Flow | Correlations | None = None, rules: ThreadRules | None = None
    ) -> None:
        self.mapping: dict[str, str] = {}
        self.ints: dict[int, int] = {}  # the integers among them, sent as integers
        self.learned_at: dict[str, int] = {}  # the seq of the answer each was learned from
        self._pattern: re.Pattern[str] | None = None
        self._short: bool | None = None  # ``_whole_only``, once asked (reset as ``_pattern`` is)
        self.rules = rules or ThreadRules()
        # The recording's data flow, read as far as it is asked (``correlate.Flow``).
        self.flow: Flow | None = None
        self._found: Correlations | None = None
        self._differed: set[tuple[str, str | None]] = set()  # (method, tool) of answers that differed
        if isinstance(interactions, Correlations):
            self._found = interactions
        elif isinstance(interactions, Flow):
            self.flow = interactions
        elif interactions is None:
            self._found = NONE
        else:
            self.flow = Flow(interactions, self.rules)

    @property
    def correlations(self) -> Correlations:
        """What the recording proves was threaded (both of ``Flow``'s passes, once)."""
        if self._found is None:
            assert self.flow is not None
            self._found = self.flow.correlations()
        return self._found

    def __bool__(self) -> bool:
        return bool(self.mapping)

    def may_learn_from(self, seq: int, inter: JSON = None) -> bool:
        """False when ``learn`` of the answer to interaction ``seq`` would learn nothing, whatever
        the live answer is: only the answers that held a correlated value before it was quoted
        are learned from. Given the recorded interaction ``inter``, what the client sent alone
        (``Flow.may_hold``) answers first, and most answers that differ are settled by it."""
        if self._found is None and inter is not None and self.flow is not None:
            self._differed.add((inter.method, inter.tool_name))
            if not self.flow.may_hold(inter):
                return False
        return seq in self.correlations.holders

    def look_ahead(self, inter: JSON, prepared: Prepared | None = None) -> None:
        """While the server works on the request ``inter``, work out what ``may_learn_from``
        will ask of its answer should it differ (``Flow.look_ahead``): when an answer to the
        same method and tool differed before in this run (a tool that stamps the time differs
        every call; one that never differed costs nothing), and the answer holds no long text
        (``prepared``: that one is read ahead for the comparison instead, and walking it for
        values could cost more than the server takes)."""
        if self._found is not None or self.flow is None or (inter.method, inter.tool_name) not in self._differed:
            return
        if prepared is None or prepared.text() is None:
            self.flow.look_ahead(inter)

    def learn(self, recorded: JSON, live: JSON, seq: int) -> None:
        """Remember every correlated value that differs between the recorded and the live answer
        to interaction ``seq`` at the same place, and that the live answer no longer holds."""
        if not self.may_learn_from(seq):
            return
        candidates: list[tuple[str, str, bool, Path]] = []
        with paused():  # a JSON text in the answers is parsed whole (gcpause.py)
            self._pairs(recorded, live, (), candidates)
        if not candidates:
            return
        present = _strings_of(live)
        dumped = json.dumps(live, ensure_ascii=False)
        for rec, value, whole_int, _path in candidates:
            if rec in self.mapping or _still_present(rec, present, dumped):
                continue
            self.mapping[rec] = value
            self.learned_at[rec] = seq
            if whole_int or (is_decimal(rec) and is_decimal(value)):
                self.ints[int(rec)] = int(value)
            self._pattern = self._short = None

    def apply(self, message: JSON) -> JSON:
        """A copy of ``message`` with every learned recorded value replaced by its live twin."""
        return self.rewrite(message)[0]

    def rewrite(self, message: JSON) -> tuple[JSON, tuple[Substitution, ...]]:
        """``message`` with learned values replaced, and the substitutions that were made."""
        if not self.mapping:
            return message, ()
        used: dict[str, str] = {}
        out = self._apply(message, used)
        return out, tuple(Substitution(r, v) for r, v in used.items())

    def expected(self, recorded: JSON, seq: int) -> JSON:
        """The recorded answer to interaction ``seq`` as the live server should give it: every
        value learned so far, from this answer or an earlier one, replaced by its live twin. A
        threaded value is expected to differ wherever an answer carries it: in the answer that
        minted it (in ``structuredContent``, its JSON text copy and prose alike) and in every
        later answer that echoes what its request carried."""
        if not self.mapping:
            return recorded
        chosen = {r: v for r, v in self.mapping.items() if self.learned_at.get(r, -1) <= seq}
        if len(chosen) == len(self.mapping):
            return self.apply(recorded)
        return self._view(chosen).apply(recorded)

    def learned_from(self, seq: int) -> dict[str, str]:
        """The ``recorded -> live`` values learned from the answer to interaction ``seq``."""
        return {r: v for r, v in self.mapping.items() if self.learned_at.get(r) == seq}

    def minted_by(self, seq: int, sent: tuple[Substitution, ...] = ()) -> tuple[Substitution, ...]:
        """``sent`` (what the request to ``seq`` carried) and every value its answer minted, as
        the report shows threaded values: ``recorded -> live``."""
        own = self.learned_from(seq)
        if not own:
            return sent
        shown = {s.recorded for s in sent}
        return (*sent, *(Substitution(r, v) for r, v in own.items() if r not in shown))

    def _view(self, mapping: Mapping[str, str]) -> Carry:
        view = Carry()
        view.mapping = dict(mapping)
        view.ints = {int(r): int(v) for r, v in mapping.items() if is_decimal(r) and is_decimal(v)}
        return view

    def _apply(self, value: JSON, used: dict[str, str], key: str | None = None) -> JSON:
        if isinstance(value, dict):
            return {k: self._apply(v, used, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._apply(v, used, key) for v in value]
        if isinstance(value, str):
            exact = self.mapping.get(value)
            if exact is not None and self._may_replace(value, key):
                used[value] = exact
                return exact
            if value[:1] in "{[" and self._whole_only():
                return self._json_text(value, used)
            if len(value) >= UNIQUE_DIGITS:
                return self._substitute(value, used)
        elif isinstance(value, int) and not isinstance(value, bool) and value in self.ints:
            if not self._may_replace(str(value), key):
                return value
            live = self.ints[value]
            used[str(value)] = str(live)
            return live
        return value

    def _may_replace(self, value: str, key: str | None) -> bool:
        """Whether ``value`` under ``key`` is replaced: a number of one or two digits (an ``id: 7``)
        only where its key names an identifier (or a rule threads it), never a ``limit: 7``."""
        if _embeddable(value) or not is_decimal(value):
            return True
        return names_identifier(key) or is_minted_key(key) or (bool(self.rules) and self.rules.threads((key or "",)))

    def _whole_only(self) -> bool:
        """Whether a value too short to be replaced inside text was learned (an ``id: 7``, a
        two-character ``ref`` a ``--thread`` rule names): JSON text is then read to replace it."""
        if self._short is None:
            self._short = any(not _embeddable(k) for k in self.mapping)
        return self._short

    def _json_text(self, text: str, used: dict[str, str]) -> str:
        """JSON text (the SDK's copy of ``structuredContent``) with learned values replaced as
        whole values, so a short id is replaced where it is a value and nowhere else."""
        parsed = json_text_of(text)
        if parsed is None:
            return self._substitute(text, used)
        before = len(used)
        out = self._apply(parsed, used)
        return json.dumps(out, ensure_ascii=False) if len(used) != before or out != parsed else text

    def _substitute(self, text: str, used: dict[str, str]) -> str:
        if self._pattern is None:
            # Words as long as a value proves a flow, and numbers of a few digits: the integer
            # ids in prose and in JSON text copies (``Ticket 23014 opened``).
            embedded = sorted((k for k in self.mapping if _embeddable(k)), key=len, reverse=True)
            # Longest first, and never inside a longer word, so a token that contains another is
            # replaced whole and ``abc12345x`` is not touched by ``abc12345``. The alternatives
            # are escaped literals: no backtracking, whatever the server minted.
            alternatives = "|".join(re.escape(k) for k in embedded) or r"(?!)"
            self._pattern = re.compile(rf"(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")

        def replace(match: re.Match[str]) -> str:
            live = used[match.group()] = self.mapping[match.group()]
            return live

        return self._pattern.sub(replace, text)

    def _learnable(self, value: str, path: Path, key: str | None) -> bool:
        """Whether ``value`` at ``path`` may be learned: a correlated value, and one that only a
        declared rule made one only at such a place."""
        found = self.correlations
        if value not in found.values:
            return False
        if self.rules and self.rules.refuses(path):
            return False
        if value in found.declared:
            return is_minted_key(key) or (bool(self.rules) and self.rules.threads(path))
        return True

    def _pairs(self, recorded: JSON, live: JSON, path: Path, out: list[tuple[str, str, bool, Path]]) -> None:
        """Append to ``out`` every (recorded, live, integer, place) pair of differing correlated values
        at the same place in two answers, in document order."""
        if loosely_equal(recorded, live):
            # Equal subtrees hold equal values at every place (lists pair by identity, which in
            # equal lists is by place): nothing to learn, and a big answer is not walked.
            return
        if isinstance(recorded, dict) and isinstance(live, dict):
            for k, value in recorded.items():
                if k in live:
                    self._pairs(value, live[k], (*path, k), out)
        elif isinstance(recorded, list) and isinstance(live, list):
            for i, j in _align(recorded, live):
                self._pairs(recorded[i], live[j], (*path, i), out)  # an equal pair returns at once
        elif isinstance(recorded, str) and isinstance(live, str):
            self._string_pairs(recorded, live, path, out)
        elif _is_int(recorded) and _is_int(live):
            key = key_of(path)
            if self._learnable(str(recorded), path, key):
                out.append((str(recorded), str(live), True, path))

    def _string_pairs(self, recorded: str, live: str, path: Path, out: list[tuple[str, str, bool, Path]]) -> None:
        key = key_of(path)
        if self._learnable(recorded, path, key):
            out.append((recorded, live, False, path))
            return
        parsed = json_text_of(recorded), json_text_of(live)
        if parsed[0] is not None and parsed[1] is not None:
            self._pairs(parsed[0], parsed[1], (*path, "{json}"), out)
            return
        if self.rules and self.rules.refuses(path):
            return
        # A value printed in text ("Created note note_x7k2", "Ticket 23014 opened"): the live
        # word at the same place.
        values = self.correlations.values
        declared = self.correlations.declared
        words = WORD.findall(recorded) if len(recorded) > FLOOR else []
        for word in dict.fromkeys((*words, *number_words(recorded))):
            if word in values and word not in declared:
                twin = locate(recorded, word, live)
                if twin is not None and twin != word:
                    out.append((word, twin, False, path))


def translated(theirs: Carry | None, mine: Carry | None, message: JSON) -> JSON:
    """``message``, a live answer of a run that threaded ``theirs``, with each value that run
    learned spelled as the run that threaded ``mine`` learned it (the same recorded value): two
    fresh starts each mint their own ids, and a confirmation pass compares their answers without
    taking a threaded value for noise."""
    if not theirs or not mine:
        return message
    same = {v: mine.mapping[r] for r, v in theirs.mapping.items() if r in mine.mapping and mine.mapping[r] != v}
    return mine._view(same).apply(message) if same else message


def _embeddable(value: str) -> bool:
    """Whether ``value`` is found and replaced as a word inside a longer text."""
    return len(value) >= FLOOR or (len(value) >= UNIQUE_DIGITS and is_decimal(value))


def _is_int(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _still_present(value: str, strings: set[str], dumped: str) -> bool:
    """Whether the live answer still holds ``value``: as a whole string, or (long enough to be an
    id) as a token inside any text."""
    if value in strings:
        return True
    if not _embeddable(value):
        return False
    # Found by str.find, not a regex built per value: re's cache would keep up to 512 of them.
    return word_at(dumped, json.dumps(value, ensure_ascii=False)[1:-1], _ASCII_ALNUM) >= 0


def _identity(item: JSON, field: str) -> JSON:
    value = item.get(field) if isinstance(item, dict) else None
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _align(recorded: list[JSON], live: list[JSON]) -> list[tuple[int, int]]:
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


def _strings_of(message: JSON) -> set[str]:
    """Every string ``message`` carries (integers by their decimal spelling), inside JSON text too."""
    from mcp_replay_action.compare.correlate import leaves

    return {leaf if isinstance(leaf, str) else str(leaf) for _, leaf in leaves(message, ())}
