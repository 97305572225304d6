"""What a server mints: the one definition of a value a new server run may legitimately change and
a client only ever echoes back (a task id, a cursor, ``requestState``, a handle).

Three places need the same answer and once drifted apart (``handle`` was threaded as minted but
compared as a value): ``correlate`` threads the values under a minted key whatever their length
(what else is threaded it reads from the recording's data flow, never from a value's shape),
``normalize`` masks them before comparing, and ``redact`` leaves them to the rules that recognise
secrets by name instead of guessing from entropy.

Two tests, both here:

* ``is_minted_key(key)``: the key conventionally carries a minted value (case, ``-`` and ``_``
  ignored: ``session_id`` is ``sessionId``).
* ``looks_minted(value)``: the whole value is token-shaped: a UUID, a long hex id, a random-looking
  base64/base62 run, or an identifier whose body is such a run (``tsk_81f0c2a9d3``). URIs, paths,
  file names, versions and words are not: they hold a ``/``, ``:`` or ``.``, or long letter runs.
"""

from __future__ import annotations

import re
from functools import lru_cache

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

MIN_LENGTH = 8  # shorter values are words or numbers, never worth threading by shape alone

_UUID = re.compile(r"[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}")
_HEX = re.compile(r"[0-9A-Fa-f]{16,}")
_RANDOM_CHARS = re.compile(r"[A-Za-z0-9_\-+/=.~]{20,4096}")
_SEGMENT_SPLIT = re.compile(r"[_\-]")
_CLASS_RUN = re.compile(r"[A-Z]+|[a-z]+|[0-9]+|[^A-Za-z0-9]+")
_IDENTIFIER = re.compile(r"[A-Za-z0-9_\-]+")
# Every token shape below holds 8 letters or digits in a row, or is 20 characters long: a value
# with neither ("item-2184", "v1.2.3") is settled without trying each shape.
_ALNUM_RUN = re.compile(r"[A-Za-z0-9]{8}")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


def norm_key(key: str | None) -> str:
    """``session_id``, ``Session-Id``, ``sessionId`` -> ``sessionid``."""
    return (key or "").replace("_", "").replace("-", "").lower()


@lru_cache(maxsize=4096)
def is_minted_key(key: str | None) -> bool:
    """Whether values under ``key`` are minted by the server (``taskId``, ``nextCursor``, ``handle``)."""
    return norm_key(key) in MINTED_KEYS


def _mixed_runs(value: str) -> float:
    """Characters per character-class run: ~1.6 for random text, 4+ for words and numbers."""
    return len(value) / len(_CLASS_RUN.findall(value))


@lru_cache(maxsize=4096)  # recurring values fit; one-off ones would only grow memory
def looks_minted(value: str) -> bool:
    """Whether a whole value is token-shaped (see the module docstring)."""
    if len(value) < MIN_LENGTH or len(value) > 4096:
        return False
    if len(value) < 20 and _ALNUM_RUN.search(value) is None:
        return False
    if _UUID.fullmatch(value):
        return True
    if _HEX.fullmatch(value):
        return bool(_DIGIT.search(value) and _LETTER.search(value))
    if _RANDOM_CHARS.fullmatch(value) and value.lower() != value and value.upper() != value:
        # Random base64: upper, lower and digits, changing class every ~1.6 characters.
        if _DIGIT.search(value) and _mixed_runs(value) <= 2.0:
            return True
    if not _IDENTIFIER.fullmatch(value):
        return False  # a URI, a path, a file name, a version, prose
    # An identifier with a random body: the longest _/- separated part mixes letters and digits.
    body = max(_SEGMENT_SPLIT.split(value), key=len)
    if len(body) < MIN_LENGTH or not (_DIGIT.search(body) and _LETTER.search(body)):
        return False
    if body.lower() != body and body.upper() != body:
        return False  # camelCase words with a number in them (getUserById2024Version)
    return sum(ch.isdigit() for ch in body) >= 3 and _mixed_runs(body) <= 2.0
