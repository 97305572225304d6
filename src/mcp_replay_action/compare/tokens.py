"""Noise at the token: the pattern a text rule holds (``noise.py``), learned from live texts of one
build that differ, covering only the tokens that varied.

A text is cut into tokens: a word (letters and digits, with ``.``-joined parts: ``12.5``,
``v1.2.3``, ``9e37c05a``), a run of whitespace, or any other single character. The live texts are
lined up token by token (``difflib.SequenceMatcher``); every token all of them share is held
literally, and each one that varied becomes a wildcard as narrow as what varied:

- a word that another run replaced by one word (a PID, a duration, an id): one word
  (``WORD``, or ``NUMBER`` when every value seen was a number);
- a space or a mark replaced one for one: one of its kind;
- anything else (a token that came or went, several replaced by another count): a run of
  characters that holds no whitespace (unless a varying value did) and not the first character
  of the literal that follows.

So ``Created note n_1f (groceries).`` does not fit a rule learned from ``Created note n_2a.`` and
``Created note n_3b.``: the wildcard is one word, and `` (groceries)`` is not one. A dropped
clause, a changed word or an added item next to the varying token still fails.

Every wildcard is possessive and stops where the next literal must start: matching a pattern
never backtracks, so it is linear in the text's length (servers send megabytes).

A finding such a rule does not explain (a real change beside the varying token) is shown at the
first run of tokens the rule does not allow (``first_unfit``), not at the token that varied.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mcp_replay_action.values.narrow import common_prefix

WORD_CHARS = r"[^\W_]"
# A token (``tokenize``): a word, a run of whitespace, or one other character.
TOKEN = re.compile(rf"{WORD_CHARS}+(?:\.{WORD_CHARS}+)*|\s+|.", re.DOTALL)
_WORD = re.compile(rf"{WORD_CHARS}+(?:\.{WORD_CHARS}+)*")
_NUMERAL = re.compile(r"\d+(?:\.\d+)?")
# The wildcards: each possessive, so a match never gives back what it took.
WORD = rf"{WORD_CHARS}++(?:\.{WORD_CHARS}++)*+"
NUMBER = r"\d++(?:\.\d++)?+"
SPACE = r"\s++"
MARK = r"[^\w\s]"
EVIDENCE_CAP = 8


def tokenize(text: str) -> list[str]:
    """``text`` cut into tokens (``TOKEN``); joined, they give ``text`` back."""
    return TOKEN.findall(text)


@dataclass(frozen=True)
class Learned:
    """What lining up live texts gave: the ``pattern`` each of them fits, how many ``wildcards``
    it holds, and the varying values seen (``evidence``)."""

    pattern: str
    wildcards: int
    evidence: tuple[str, ...]


def text_pattern(values: list[str]) -> Learned:
    """The pattern every one of ``values`` (two or more) fits: their common tokens literally, each
    varying run of tokens as the narrowest wildcard that holds what varied."""
    base = tokenize(values[0])
    # Per base token: the tokens that replaced it one for one in each other value, or None once
    # anything else happened at it (a run of another length, an insertion beside it).
    aligned: list[list[str] | None] = [[] for _ in base]
    varying = [False] * len(base)
    inserted: set[int] = set()  # base positions before which another value holds more tokens
    evidence: dict[str, None] = {}
    for other in values[1:]:
        tokens = tokenize(other)
        matcher = difflib.SequenceMatcher(a=base, b=tokens, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                continue
            evidence.setdefault("".join(base[i1:i2]), None)
            evidence.setdefault("".join(tokens[j1:j2]), None)
            if i1 == i2:
                inserted.add(i1)
                continue
            one_for_one = i2 - i1 == j2 - j1
            for k, i in enumerate(range(i1, i2)):
                varying[i] = True
                seen = aligned[i]
                if seen is not None and one_for_one:
                    seen.append(tokens[j1 + k])
                else:
                    aligned[i] = None
    parts: list[str] = []
    wildcards = 0
    i, taken = 0, -1  # ``taken``: the insertion point a run already covered
    while i <= len(base):
        opens = i in inserted and i != taken
        if i < len(base) and not varying[i] and not opens:
            parts.append(re.escape(base[i]))
            i += 1
            continue
        if i == len(base) and not opens:
            break
        # A varying run: an insertion at i, the varying tokens from i, an insertion after them.
        k, free = i, opens
        while k < len(base) and varying[k]:
            k += 1
            if k in inserted:
                free, taken = True, k
        run = base[i:k]
        each = [] if free else [_one_for_one(base[n], aligned[n]) for n in range(i, k)]
        if each and None not in each:
            parts += [w for w in each if w is not None]
        else:
            spaced = any(t.isspace() for t in run) or any(_spaced(e) for e in evidence)
            parts.append(_free(_literal_after(base, k, varying, inserted), spaced))
        wildcards += 1
        if k == i:  # an insertion only: the token at i is taken literally next
            taken = i
        i = k
    shown = tuple(e for e in evidence if e)[:EVIDENCE_CAP]
    return Learned("".join(parts), wildcards, shown)


def _one_for_one(token: str, others: list[str] | None) -> str | None:
    """The wildcard for a token each other value replaced by one token of its kind (None: not
    so replaced)."""
    if others is None:
        return None
    seen = [token, *others]
    if all(_NUMERAL.fullmatch(t) for t in seen):
        return NUMBER
    if all(_WORD.fullmatch(t) for t in seen):
        return WORD
    if all(t.isspace() for t in seen):
        return SPACE
    if all(len(t) == 1 and not t.isalnum() and not t.isspace() and t != "_" for t in seen):
        return MARK
    return None


# How much of the literal after a free run the run looks ahead for, at each character it takes:
# a bounded lookahead keeps the match linear.
LOOKAHEAD_CHARS = 16


def _literal_after(base: list[str], k: int, varying: list[bool], inserted: set[int]) -> str:
    """The text the pattern holds literally from token ``k`` on (up to ``LOOKAHEAD_CHARS``)."""
    out = ""
    n = k
    while n < len(base) and not varying[n] and (n == k or n not in inserted) and len(out) < LOOKAHEAD_CHARS:
        out += base[n]
        n += 1
    return out[:LOOKAHEAD_CHARS]


def _free(following: str, spaced: bool) -> str:
    """A run of characters that stops where the literal after it (``following``) starts: within
    a line when a varying value held whitespace, else within a word."""
    char = "[^\\n]" if spaced else "\\S"
    if not following:
        return f"{char}*+"
    return f"(?:(?!{re.escape(following)}){char})*+"


def _spaced(text: str) -> bool:
    return any(c.isspace() for c in text)


# How many differing runs of tokens ``first_unfit`` tries, each by one match of a text of at most
# ``noise.LEARN_MAX_CHARS``: bounded work whatever the texts hold.
UNFIT_TRIES = 64


def first_unfit(recorded: str, live: str, pattern: str) -> tuple[int, int] | None:
    """Where ``live`` first differs from ``recorded`` in a way ``pattern`` (a learned text rule
    both were meant to fit) does not allow, as a position in each; None when it cannot be told
    (``recorded`` does not fit, or no single difference breaks the fit).

    The texts are lined up token by token; each run that differs is put, alone, into
    ``recorded``: a run the pattern holds a wildcard for (a PID, a minted id) still fits, and the
    first run after which it does not is the change."""
    compiled = re.compile(pattern, re.DOTALL)
    if compiled.fullmatch(recorded) is None:
        return None
    a, b = tokenize(recorded), tokenize(live)
    at_a, at_b = _offsets(a), _offsets(b)
    tries = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        tries += 1
        if tries > UNFIT_TRIES:
            return None
        x, y = at_a[i1], at_b[j1]
        if compiled.fullmatch(recorded[:x] + live[y : at_b[j2]] + recorded[at_a[i2] :]) is None:
            same = common_prefix(recorded[x : at_a[i2]], live[y : at_b[j2]])
            return x + same, y + same
    return None


def _offsets(tokens: list[str]) -> list[int]:
    """Where each token starts, and the text's length after the last."""
    out = [0]
    for token in tokens:
        out.append(out[-1] + len(token))
    return out
