"""Masks: what is volatile in a text, found and replaced by a placeholder, so that it can never
show up as a difference. Dates and times near a reference moment (ISO-8601, RFC 2822,
``date(1)``, numeric and named dates, clock times, a value that is only a weekday name; a weekday
inside other text only as part of a date) become ``<timestamp>``, epoch
seconds under a key that names a moment too; UUIDs ``<uuid>``; runs of 16 or more hex characters
mixing digits and letters ``<hex>``; object addresses (``at 0x7f...``) ``<address>``; temporary
paths ``<tmp>``; a whole value that looks minted ``<opaque>``.

Every pattern here runs over server text, which can be megabytes long: each is linear in the
length of the text it searches (``tests/test_linear_masks.py``), and each is tried only on a text
that holds what it needs (a cheap hint search first). ``normalize.py`` applies these to every
string of an answer; it also holds the boxes (JSON in text, base64 text, named lists) and the walk.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from mcp_replay_action.values.minted import looks_minted

# -- placeholders -----------------------------------------------------------------------------

TIMESTAMP = "<timestamp>"
UUID = "<uuid>"
HEX = "<hex>"
OPAQUE = "<opaque>"
ADDRESS = "<address>"
TEMP = "<tmp>"
# A dated time further than this from the recording and from the replay is data (a stored row's
# date, a release date) and is compared; nearer to either, it is the clock and is masked.
DATA_AFTER_DAYS = 366
# Words that make a key name a moment; a trailing unit word (timestamp_ms) is skipped.
_TIME_WORDS = frozenset(
    {
        "at",
        "time",
        "timestamp",
        "ts",
        "epoch",
        "date",
        "datetime",
        "created",
        "updated",
        "modified",
        "expires",
        "expiry",
        "since",
        "until",
        "started",
        "ended",
        "finished",
        "mtime",
        "ctime",
        "atime",
        "now",
        "when",
    }
)
_UNIT_WORDS = frozenset({"ms", "s", "sec", "secs", "seconds", "millis", "utc"})
_KEY_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

# -- regular expressions (compiled once) ------------------------------------------------------

_MON = (
    r"(?i:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_DOW = (
    r"(?i:Mon(?:day)?|Tue(?:s(?:day)?)?|Wed(?:nesday)?|Thu(?:r(?:s(?:day)?)?)?|Fri(?:day)?|Sat(?:urday)?|Sun(?:day)?)"
)
_TZ = r"(?:Z|UTC|GMT|[A-Z]{2,4}T|[+-]\d{2}:?\d{2})"
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:\s?[AaPp]\.?[Mm]\.?)?"
_CLOCK_TZ = rf"{_CLOCK}(?:\s?{_TZ}(?![A-Za-z]))?"
# Forms that name a month, tried first (only when a month name occurs at all) so that
# "Sun Nov 29 20:41:14 UTC 2026" is one mask, not three.
_NAMED_FORMS = [
    # JavaScript Date#toString: Mon Nov 30 2026 16:44:37 GMT+0000 (Coordinated Universal Time)
    rf"{_DOW}\s+{_MON}\s+\d{{1,2}}\s+\d{{4}}\s+{_CLOCK}(?:\s+GMT[+-]\d{{4}})?(?:\s+\([A-Za-z ]{{1,60}}\))?",
    # date(1) and ctime: Sun Nov 29 20:41:14 UTC 2026, Sun Nov 29 20:41:14 2026
    rf"{_DOW}\s+{_MON}\s+\d{{1,2}}\s+{_CLOCK}(?:\s+[A-Z]{{2,5}})?\s+\d{{4}}",
    # RFC 2822 and day-first: Sun, 29 Nov 2026 20:41:14 +0000, 29 November 2026
    rf"(?:{_DOW},?\s+)?\d{{1,2}}\s+{_MON}\.?,?\s+\d{{4}}(?:,?\s+(?:at\s+)?{_CLOCK_TZ})?",
    # month first: Sunday, November 29, 2026, Nov 29, 2026 at 8:41 PM
    rf"(?:{_DOW},?\s+)?{_MON}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}(?:,?\s+(?:at\s+)?{_CLOCK_TZ})?",
]
# Forms that start with a digit.
_NUMERIC_FORMS = [
    # ISO-8601 / RFC 3339: 2026-11-29, 2026-11-29T20:41:14.123Z, 2026-11-29 20:41:14+01:00
    # ... and Go's time.Time String(): 2026-11-30 16:44:37.1234 +0000 UTC m=+0.010452
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:\s?(?:Z|[+-]\d{2}(?::?\d{2})?))?"
    r"(?:\s[A-Z]{2,5}(?:\s+m=[+-]\d+(?:\.\d+)?)?)?)?",
    # basic ISO-8601: 20261129T204114Z
    r"\d{8}T\d{6}(?:\.\d{1,9})?Z?",
    # numeric: 11/29/2026, 8:41:14 PM; 29.11.2026 20:41; 2026/11/29
    rf"\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{4}}(?:,?\s+{_CLOCK_TZ})?",
    r"\d{4}/\d{2}/\d{2}",
    # a clock time alone: 20:41:14, 8:41 PM, 20:41:14.5 UTC
    r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:\s?[AaPp]\.?[Mm]\.?)?" + rf"(?:\s?{_TZ}(?![A-Za-z]))?",
    r"\d{1,2}:\d{2}\s?[AaPp]\.?[Mm]\.?" + rf"(?:\s?{_TZ}(?![A-Za-z]))?",
]
# The guards stop a match from starting or ending inside a longer word or number; the lookahead
# right after them lets the engine give up at once on positions that cannot start a date.
_BEFORE = r"(?<![A-Za-z0-9:.])"
_AFTER = r"(?![A-Za-z0-9]|[:.,]\d)"
_NAMED_DATE_RE = re.compile(
    _BEFORE
    # Only the day-first form starts with a digit, and it holds one or two and a space there: a
    # date's digits elsewhere (2026-11-29, 20:41) are passed over without trying the forms.
    + r"(?=\d{1,2}\s|(?i:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))(?:"
    + "|".join(_NAMED_FORMS)
    + ")"
    + _AFTER
)
_NUMERIC_DATE_RE = re.compile(_BEFORE + r"(?=\d)(?:" + "|".join(_NUMERIC_FORMS) + ")" + _AFTER)
# Cheap pre-checks that start with a character class, which the regex engine scans for quickly:
# most text holds no date at all, and the full patterns are costly to try at every position.
_YEAR_HINT = re.compile(r"\d{4}")
_NUMERIC_HINT = re.compile(r"\d(?:[-/.:]\d|\d{7}T)")
_HEX_HINT = re.compile(r"[0-9A-Fa-f]{16}")
# Language reprs of a moment: Python's datetime.datetime(2026, 11, 30, 16, 44, 37, 346050,
# tzinfo=...) and datetime.date(2026, 11, 30).
_PY_DATETIME_RE = re.compile(
    r"datetime\.(?:datetime|date)\(\s*\d{4}(?:,\s*\d{1,6}){2,6}"
    r"(?:,\s*(?:tzinfo|fold)=(?:[^()]|\([^()]*\))*+)?\)"
)
# A 10-digit (seconds) or 13-digit (milliseconds) epoch after a time-named key in text ('ts': 1796...).
# The key is the rest of a run of word characters from its first letter. The pattern is tried only
# where such a run starts (the lookbehind; ``pre`` skips the digits and hyphens before the first
# letter), and reads the run once: tried at every position of a run, as a plain ``[A-Za-z_][\w-]*``
# is, it read to the run's end each time, quadratic on a long one (22 s on 1.6 MB of minified
# JavaScript). ``_EPOCH_AFTER_RE`` is the same pattern anchored where a previous match ended
# inside a run ("ts: 1796...x_at: ..."): ``_sub_epochs`` tries it there, so the matches are the
# ones the plain pattern finds.
_EPOCH_TAIL = (
    r"(?:[^\W_A-Za-z]|-)*+(?P<key>[A-Za-z_][\w-]*+)(?P<q>['\"]?)\s*+[:=]\s*+"
    r"(?P<num>\d{10}(?:\d{3})?)(?:\.\d+)?(?!\d)"
)
_EPOCH_IN_TEXT_RE = re.compile(r"(?<![\w-])" + _EPOCH_TAIL)
_EPOCH_AFTER_RE = re.compile(_EPOCH_TAIL)
_EPOCH_HINT = re.compile(r"\d{10}")
# Process-local values: object addresses and fresh temporary directories.
_ADDRESS_RE = re.compile(r"(?<=\bat )0x[0-9A-Fa-f]{6,16}\b")
_TEMP_RE = re.compile(
    r"(?<![\w/])(?P<root>/(?:private/)?(?:tmp|var/tmp|var/folders/\w+/\w+/T))/(?P<name>[\w.-]*\d[\w.-]*)"
)
_YEAR_IN_RE = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_YMD_RE = re.compile(r"(?<!\d)(\d{4})[-/]?(\d{2})[-/]?(\d{2})(?!\d)|\((\d{4}),\s*(\d{1,2}),\s*(\d{1,2})")
_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_RE = re.compile(
    r"(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})\b|\b(\d{1,2})\s+(?i:(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))"
)
_WEEKDAY_RE = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)day", re.IGNORECASE)
_UUID_RE = re.compile(r"(?<![0-9A-Fa-f-])[0-9A-Fa-f]{8}-(?:[0-9A-Fa-f]{4}-){3}[0-9A-Fa-f]{12}(?![0-9A-Fa-f-])")
_HEX_RE = re.compile(r"(?<![0-9A-Za-z])[0-9A-Fa-f]{16,}(?![0-9A-Za-z])")
_HAS_DIGIT = re.compile(r"\d")
_BASE64_RE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


# -- masks ------------------------------------------------------------------------------------


def _hex_sub(match: re.Match[str]) -> str:
    text = match.group()
    # Pure digits are a number, pure letters a word: an id mixes both.
    if text.isdigit() or not _HAS_DIGIT.search(text):
        return text
    return HEX


def _day_of(text: str) -> int | None:
    """The day (proleptic ordinal) a matched time names, or None when it names no year (a clock)."""
    ymd = _YMD_RE.search(text)
    if ymd is not None:
        parts = ymd.groups()[:3] if ymd.group(1) else ymd.groups()[3:]
        try:
            return dt.date(int(parts[0]), int(parts[1]), int(parts[2])).toordinal()
        except ValueError:
            pass
    year = _YEAR_IN_RE.search(text)
    if year is None:
        return None
    named = _MONTH_RE.search(text)
    if named is not None:
        month = _MONTH_NAMES.index((named.group(1) or named.group(4)).lower()[:3]) + 1
        try:
            return dt.date(int(year.group(1)), month, int(named.group(2) or named.group(3))).toordinal()
        except ValueError:
            pass
    return dt.date(int(year.group(1)), 7, 1).toordinal()


def _near(day: int | None, days: tuple[int, ...]) -> bool:
    """Whether a time is volatile: it names no day, or a day within a year of a reference moment."""
    if day is None or not days:
        return True
    return any(abs(day - ref) <= DATA_AFTER_DAYS for ref in days)


def key_words(key: str) -> list[str]:
    """A key's words, lower case: ``createdAtMs`` -> ``created``, ``at``, ``ms``; ``duration_seconds``
    -> ``duration``, ``seconds``."""
    return [w.lower() for w in _KEY_WORD.findall(key)]


def time_key(key: str) -> bool:
    """Whether a key names a moment (``createdAt``, ``updated_at``, ``timestamp_ms``, ``epoch``)."""
    words = key_words(key)
    if len(words) > 1 and words[-1] in _UNIT_WORDS:
        words.pop()
    return bool(words) and (words[-1] in _TIME_WORDS or words[0] in _TIME_WORDS - {"at"})


def _epoch_day(value: float) -> int | None:
    """The day an epoch in seconds (10 digits) or milliseconds (13 digits) names, else None."""
    if 1e9 <= value < 1e10:
        seconds = value
    elif 1e12 <= value < 1e13:
        seconds = value / 1000.0
    else:
        return None
    return dt.datetime.fromtimestamp(seconds, dt.UTC).date().toordinal()


def volatile_epoch(value: float, days: tuple[int, ...]) -> bool:
    day = _epoch_day(value)
    return day is not None and _near(day, days)


# Caches sized for the values that recur (names, tags, enum words): a bigger one fills with
# one-off values (every live timestamp) and grows a long replay's memory for nothing. At 2048 and
# 4096 entries, a replay of 100,000 calls (a fresh time and id in every third answer) peaked at
# 35.7 MiB; at 256, 32.3-33.4 MiB, and no benchmark row moved (bench_rss, bench_big_answer).
@lru_cache(maxsize=256)
def mask_text(text: str, days: tuple[int, ...] = ()) -> str:
    """``text`` with volatile times, UUIDs, long hex ids, object addresses and temporary paths
    replaced by placeholders. ``days`` are the reference moments (recording, replay) as day
    ordinals: a dated time more than a year from all of them is data and stays; with no ``days``
    every time is volatile."""
    if not _HAS_DIGIT.search(text):
        if _WEEKDAY_RE.fullmatch(text.strip()):
            return TIMESTAMP
        return text

    def time_sub(match: re.Match[str]) -> str:
        return TIMESTAMP if _near(_day_of(match.group()), days) else match.group()

    def epoch_sub(match: re.Match[str]) -> str:
        if not time_key(match.group("key")) or not volatile_epoch(float(match.group("num")), days):
            return match.group()
        return match.group()[: match.start("num") - match.start()] + TIMESTAMP

    if "-" in text:
        text = _UUID_RE.sub(UUID, text)
    if "datetime." in text:
        text = _PY_DATETIME_RE.sub(time_sub, text)
    if _YEAR_HINT.search(text):
        text = _NAMED_DATE_RE.sub(time_sub, text)
    if _NUMERIC_HINT.search(text):
        text = _NUMERIC_DATE_RE.sub(time_sub, text)
    if _EPOCH_HINT.search(text):
        text = _sub_epochs(text, epoch_sub)
    if "0x" in text:
        text = _ADDRESS_RE.sub(ADDRESS, text)
    if "/" in text:
        text = _TEMP_RE.sub(lambda m: m.group("root") + "/" + TEMP, text)
    if len(text) >= 16 and _HEX_HINT.search(text):
        text = _HEX_RE.sub(_hex_sub, text)
    return text


def _sub_epochs(text: str, sub: Callable[[re.Match[str]], str]) -> str:
    """``_EPOCH_IN_TEXT_RE.sub(sub, text)`` as the unanchored pattern would do it, in linear time
    (``_EPOCH_IN_TEXT_RE``)."""
    parts: list[str] = []
    end = 0
    match = _EPOCH_IN_TEXT_RE.search(text)
    while match is not None:
        parts += (text[end : match.start()], sub(match))
        end = match.end()
        match = _EPOCH_AFTER_RE.match(text, end) or _EPOCH_IN_TEXT_RE.search(text, end)
    return "".join(parts) + text[end:] if parts else text


# What a short string must hold for ``plain_string`` to change it: each mask in ``mask_text`` is
# tried only on a text holding one of these (three letters that could spell "day" or a month,
# as in a weekday, a month name or "datetime."; an address; a path; a digit-separator-digit date
# or clock; 8 letters or digits in a row for a UUID, an epoch or a hex id), and ``looks_minted``
# needs the 8 in a row below 20 characters. Letter classes, not words: the search stays cheap.
_MAYBE_MASKED = re.compile(r"[ADFJMNOSadfjmnos][ACEOPUaceopu][ABCGLNPRTVYabcglnprtvy]|0x|/|\d[-/.:]\d|[A-Za-z0-9]{8}")


def plain_string(value: str, days: tuple[int, ...] = ()) -> str:
    """A string that holds no JSON, masked: its masked text, or a token-shaped whole value."""
    if len(value) < 20 and _MAYBE_MASKED.search(value) is None:
        return value  # settled by one search ("item-2184", "ok", "t3"): nothing to mask
    return masked_string(value, days)


# ``_MAYBE_MASKED`` split for many short ASCII strings at once (``plain_strings``): its
# alternatives as byte scans, each several times faster than the one regex over the same text.
_MAYBE_MONTH_OR_DAY = re.compile(rb"[ADFJMNOSadfjmnos][ACEOPUaceopu][ABCGLNPRTVYabcglnprtvy]")
_ALNUM_AS_A = bytes(0x61 if chr(c).isascii() and chr(c).isalnum() else 0x2E for c in range(256))
_DIGIT_SEP = bytes(0x64 if chr(c) in "0123456789" else 0x73 if chr(c) in "-.:" else 0x2E for c in range(256))
_SHORT = 20  # below this length a string may be settled by the pre-check alone
_BATCH = 64  # fewer strings than this are checked one by one


def plain_strings(values: list[str], days: tuple[int, ...] = ()) -> list[str]:
    """``[plain_string(v, days) for v in values]``. A named list of 400,000 records has as many
    names, nearly all short and plain: they are checked joined, a few C scans over them all, and
    only a stretch that holds something (halved until it is short) is checked name by name."""
    out = list(values)
    stack = [(0, len(values))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo < _BATCH:
            out[lo:hi] = [plain_string(v, days) for v in values[lo:hi]]
        elif not none_maybe_masked(values[lo:hi]):
            mid = (lo + hi) // 2
            stack.append((mid, hi))
            stack.append((lo, mid))
    return out


def none_maybe_masked(values: list[str]) -> bool:
    """Whether every one of ``values`` is shorter than ``_SHORT`` and ``_MAYBE_MASKED`` finds
    nothing in it. Joined by NUL, which no alternative matches, so no match spans two values;
    ASCII only, where ``\\d`` is 0-9 and the bytes are the characters."""
    if max(map(len, values)) >= _SHORT:
        return False
    joined = "\0".join(values)
    if not joined.isascii():
        return False
    raw = joined.encode("ascii")
    return (
        b"/" not in raw
        and b"0x" not in raw
        and b"aaaaaaaa" not in raw.translate(_ALNUM_AS_A)
        and b"dsd" not in raw.translate(_DIGIT_SEP)
        and _MAYBE_MONTH_OR_DAY.search(raw) is None
    )


@lru_cache(maxsize=256)  # as ``mask_text``'s
def masked_string(value: str, days: tuple[int, ...] = ()) -> str:
    masked = mask_text(value, days)
    if masked == value and looks_minted(value):
        return OPAQUE
    return masked


def decode_base64_text(value: str) -> str | None:
    if len(value) < 4 or len(value) % 4 or not _BASE64_RE.fullmatch(value):
        return None
    try:
        raw = base64.b64decode(value, validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if _CONTROL.search(text):
        return None
    return text


JSON_STARTS = "{[ \t\r\n"  # what a string holding a JSON object or array can start with


def json_text_of(value: str) -> Any:
    """The object or array a string holds, or None (cheaply, for text that cannot be JSON)."""
    return _parse_json_text(value) if value and value[0] in JSON_STARTS else None


def _parse_json_text(value: str) -> Any:
    """The object or array a string holds, or None."""
    stripped = value.strip()
    if len(stripped) < 2 or (stripped[0], stripped[-1]) not in (("{", "}"), ("[", "]")):
        return None
    try:
        parsed = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, (dict, list)) else None
