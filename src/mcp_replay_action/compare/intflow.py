"""Integers by data flow: when an integer an answer gave and a later request quoted was minted.

A string id proves its flow by being long and rare; an integer does not. ``5`` in ``count: 5``
and in a later ``limit: 5`` is the client reading a count, not the server minting an id, and a
database sequence that stands at 23014 mints ids no longer than a page size. So an integer is
threaded only when its flow is unambiguous, read from the recording (``correlate`` gathers the
facts, ``threads`` decides):

* never when a place that holds it names a quantity: the answer's key or a quoting request's
  (``count``, ``total``, ``limit``, ``page``, ``offset``, ``size``, ... as a word of the key:
  ``pageSize``, ``max_results``);
* **both places name an identifier**: the answer holds it under a key such as ``id``,
  ``ticket_id``, ``orderId``, ``ref`` and a request quotes it under one, and at most ``MANY``
  answers held it before it was first quoted; any value, ``7`` included;
* or **it occurs nowhere else**: one answer held it before it was first quoted, no declaration
  (``tools/list``, ...) before that quote holds it, the client did not hold it first (as for any
  value), and it has at least ``UNIQUE_DIGITS`` digits (``0`` to ``99`` are where counts,
  indexes and flags live, and a coincidence among them proves nothing). This is the flow of the
  official Python SDK's ``{"result": 23014}`` answer quoted as ``ticket: 23014``, and of a number
  printed in prose (``Ticket 23014 opened.``).

A declared rule (``--thread KEY``) threads an integer at its place whatever the above says.
Every pattern here is linear in the text's length.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

UNIQUE_DIGITS = 3  # an integer that occurs nowhere else proves a flow from this many digits
# Words of a key that name an identifier: its last word (``ticket_id``, ``orderRef``).
IDENTIFIER_WORDS = frozenset({"id", "ids", "ref", "uuid", "guid", "pk", "key"})
# Words of a key that name a quantity or a setting, never an id the server minted: any word of
# it (``pageSize``, ``max_results``, ``count``, ``status_code``).
QUANTITY_WORDS = frozenset(
    {
        "count",
        "counts",
        "total",
        "totals",
        "limit",
        "page",
        "pages",
        "offset",
        "skip",
        "top",
        "size",
        "length",
        "len",
        "max",
        "min",
        "amount",
        "quantity",
        "qty",
        "index",
        "idx",
        "per",
        "num",
        "version",
        "port",
        "timeout",
        "seconds",
        "ms",
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "width",
        "height",
        "depth",
        "level",
        "score",
        "status",
        "code",
        "priority",
    }
)
# A key's words: runs of lower-case letters or digits, an upper-case letter starting one
# (``pageSize`` -> page, size; ``HTTPCode`` -> http, code). Linear: no run gives back.
_KEY_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
# A number written in text: a run of digits no letter, digit, ``_``, ``-`` or ``.`` touches
# (``Ticket 23014 opened``, ``tickets://23014/log``; not ``v1.2``, ``abc123``, ``-5``).
# Possessive, and it starts only where a run starts: linear in the text's length.
_NUMBER_WORD = re.compile(r"(?<![\w.\-])[0-9]{1,19}+(?![\w.\-])")


@lru_cache(maxsize=4096)
def key_words(key: str | None) -> tuple[str, ...]:
    """The words of a key, lower-cased: ``ticketId`` -> (ticket, id), ``page_size`` -> (page, size)."""
    return tuple(w.lower() for w in _KEY_WORD.findall(key or ""))


def names_identifier(key: str | None) -> bool:
    """Whether ``key`` names an identifier: its last word is one (``id``, ``ticket_id``, ``orderRef``)."""
    words = key_words(key)
    return bool(words) and words[-1] in IDENTIFIER_WORDS and not names_quantity(key)


def names_quantity(key: str | None) -> bool:
    """Whether ``key`` names a quantity: a word of it is one (``count``, ``pageSize``, ``max_results``)."""
    return any(word in QUANTITY_WORDS for word in key_words(key))


def number_words(text: str) -> list[str]:
    """Every number written as a word of ``text``, as it is spelled."""
    return _NUMBER_WORD.findall(text)


def is_decimal(value: str) -> bool:
    """Whether ``value`` spells an integer as an integer leaf's ``str()`` does."""
    digits = value[1:] if value.startswith("-") else value
    return digits.isascii() and digits.isdigit() and (digits == "0" or digits[0] != "0")


# What ``key_marks`` says of a key: it names a quantity, or an identifier.
QUANTITY, IDENTIFIER = 1, 2


@lru_cache(maxsize=4096)
def key_marks(key: str | None) -> int:
    """``QUANTITY`` and ``IDENTIFIER``, or'd, for what ``key`` names: all ``threads`` reads of a
    key (a recording's integers are kept with these two bits, not with their keys)."""
    return (QUANTITY if names_quantity(key) else 0) | (IDENTIFIER if names_identifier(key) else 0)


def threads(
    value: str,
    held_by: Iterable[str | None],
    quoted_by: Iterable[str | None],
    *,
    held: int,
    many: int,
    declared_before: bool,
) -> bool:
    """Whether the integer ``value`` was minted by the answer that held it (see the module
    docstring): ``held_by`` the keys it was held under in the answers before its first quote,
    ``quoted_by`` the keys requests quoted it under, ``held`` how many answers held it before
    that quote (at most ``many`` for an identifier), ``declared_before`` whether a declaration
    before that quote held it."""
    held_marks = quoted_marks = 0
    for key in held_by:
        held_marks |= key_marks(key)
    for key in quoted_by:
        quoted_marks |= key_marks(key)
    return flows(value, held_marks, quoted_marks, held=held, many=many, declared_before=declared_before)


def flows(value: str, held_marks: int, quoted_marks: int, *, held: int, many: int, declared_before: bool) -> bool:
    """``threads``, given the ``key_marks`` of the keys it was held and quoted under, or'd."""
    if (held_marks | quoted_marks) & QUANTITY:
        return False
    if held_marks & quoted_marks & IDENTIFIER:
        return held <= many
    return held == 1 and not declared_before and len(value.lstrip("-")) >= UNIQUE_DIGITS
