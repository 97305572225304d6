"""Normalisation: turn one JSON response into the canonical form that ``compare`` diffs.

Both sides of a comparison go through exactly the same steps, so whatever is masked or reshaped
here can never show up as a difference:

* **Masks.** Dates and times (ISO-8601, RFC 2822, ``date(1)``, US and European numeric dates,
  "November 29, 2026", clock times with seconds or AM/PM, a value that is just a weekday name)
  become ``<timestamp>``, also inside longer text; UUIDs become ``<uuid>``; runs of 16 or more hex
  characters holding a digit and a letter become ``<hex>``. A value under a key that carries a
  server-minted token (``requestState``, ``nextCursor``, ``cursor``, ``taskId``, ``sessionId``,
  ``progressToken``, ...) or a whole value that looks like a random token becomes ``<opaque>``.
* **JSON in text.** A string that parses as a JSON object or array is replaced by a
  ``JsonText`` box holding the parsed (and normalised) value, so it is compared structurally.
* **Base64 text.** A ``blob`` or ``data`` string that is base64 of printable UTF-8 text is replaced
  by a ``Base64Text`` box holding that text (normalised like any other string). Binary payloads
  (images, audio) stay as they are, so a changed image is still caught.
* **Named lists.** A list of objects that all carry a unique string ``uri``, ``uriTemplate`` or
  ``name`` (tools, prompts, resources, templates) becomes a ``Keyed`` mapping from that identity
  to the item, in the original order, so a removed tool is one difference and not a cascade.
* **Numbers** compare by value: an integral float becomes an int (``1.0 -> 1``); booleans stay
  booleans. Dict keys are sorted, so key order never matters.
* **Ignore rules.** Keys named in ``ignore_keys`` are dropped at any depth; nodes matched by an
  ``ignore_paths`` pattern are dropped. Both reach into JSON-in-text and base64 text.

Ignore-path notation (the same one findings use, see ``compare``): rooted at the JSON-RPC message,
with or without a leading ``$``: ``result.content[0].text``, ``$.result.content[].text``
(``[]`` and ``[*]`` match any index, ``.*`` any key), ``result.tools[name=add].description``
(an item by identity), ``['odd.key']`` for keys that are not plain words. Boxes are transparent,
so ``result.content[].text.requestId`` reaches ``requestId`` inside JSON text; ``{json}`` and
``{base64}`` may also be written explicitly (``result.content[0].text{json}.requestId``).
"""

from __future__ import annotations

import base64
import binascii
import copy
import datetime as dt
import hashlib
import json
import marshal
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import lru_cache
from itertools import compress
from operator import is_not, itemgetter, methodcaller
from typing import TYPE_CHECKING, Any, Protocol

from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.minted import is_minted_key, looks_minted
from mcp_replay_action.values.narrow import (
    IDENTITY_KEYS,
    MISSING,
    Slice,
    Stretch,
    identity_index,
    skeletons,
)
from mcp_replay_action.values.paths import Token, parse_path

if TYPE_CHECKING:
    from mcp_replay_action.compare.options import RuleUse
    from mcp_replay_action.values.prepared import Prepared

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

# Keys whose string values are base64 payloads in MCP (resource ``blob``, image/audio ``data``).
BASE64_KEYS = frozenset({"blob", "data"})
# Identity keys of named things (``IDENTITY_KEYS``, most specific first: a resource has both
# ``uri`` and ``name``) are defined in narrow.py, whose ``Slice`` keeps their raw values.
# Deeper than this, a subtree is compared by a digest of its canonical JSON: a hostile response
# must not exhaust the stack, and a difference down there is still caught.
MAX_DEPTH = 128

# An MCP App (a ``ui://`` resource, ``text/html;profile=mcp-app``) or any text/html this long is a
# document: masked (a page stamped when rendered), never parsed or cached, compared whole (size,
# digest, the changed region: ``compare``). ``DOCUMENT_KEY`` stands for its ``text`` in the walk.
DOCUMENT_MIN_CHARS = 1 << 20
DOCUMENT_KEY = "\x00document"


def is_document(item: Any) -> bool:
    """Whether ``item`` (a resource's contents) holds a document (``DOCUMENT_MIN_CHARS``)."""
    if not isinstance(item, dict) or not isinstance(item.get("text"), str):
        return False
    mime, uri = item.get("mimeType"), item.get("uri")
    mime = mime.lower().replace(" ", "") if isinstance(mime, str) else ""
    if "profile=mcp-app" in mime or (isinstance(uri, str) and uri.startswith("ui://")):
        return True
    return mime.startswith("text/html") and len(item["text"]) >= DOCUMENT_MIN_CHARS


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


# -- boxes: dict subclasses, so they stay plain JSON to json.dumps and DeepDiff ---------------


class Keyed(dict):  # type: ignore[type-arg]
    """A list of named things, as ``{identity: item}`` in the original order. ``key`` names the field."""

    __slots__ = ("key",)

    def __init__(self, key: str, items: Any = ()) -> None:
        super().__init__(items)
        self.key = key


class PartKeyed(Keyed):
    """A named list of which only the items outside its stretches are held (``normalize_pair``
    of two long lists that share ``head`` and ``tail``, ``narrow.Stretch``): the stretches' items
    are the same on both sides of the pair, so ``compare`` never looks at them; ``whole`` (and so
    ``materialize``) reads them in, where one side is needed whole."""

    __slots__ = ("head", "tail", "normalizer", "depth")

    def __init__(
        self,
        key: str,
        items: Any,
        head: Stretch | None,
        tail: Stretch | None,
        normalizer: _Normalizer,
        depth: int,
    ) -> None:
        super().__init__(key, items)
        self.head, self.tail = head, tail
        self.normalizer = normalizer
        self.depth = depth  # of the items

    def whole(self) -> Keyed:
        """The named list, every item normalised, as ``normalize`` makes it."""
        n, field = self.normalizer, self.key
        pairs: list[tuple[str, Any]] = []
        if self.head is not None:
            pairs.extend(n.stretch_items(self.head, field, self.depth))
        pairs.extend((k, materialize(v, self.depth)) for k, v in self.items())
        if self.tail is not None:
            pairs.extend(n.stretch_items(self.tail, field, self.depth))
        if n.allow_reorder:
            pairs.sort(key=lambda p: p[0])
        return Keyed(field, pairs)


class JsonText(dict):  # type: ignore[type-arg]
    """A string that held JSON: ``{"{json}": parsed}``."""

    __slots__ = ()
    tag = "json"


class Base64Text(dict):  # type: ignore[type-arg]
    """A base64 payload that decoded to text: ``{"{base64}": text}``."""

    __slots__ = ()
    tag = "base64"


BOX_TYPES = (JsonText, Base64Text)


class NormalizeRules(Protocol):
    """What normalisation needs from ``compare.CompareOptions``."""

    @property
    def ignore_paths(self) -> Sequence[str]: ...
    @property
    def ignore_keys(self) -> Sequence[str]: ...
    @property
    def allow_reorder(self) -> bool: ...
    @property
    def moments(self) -> Sequence[float]: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def rule_use(self) -> RuleUse: ...


# The ignore-path notation lives in paths.py (parse and render, documented once).


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


def _time_key(key: str) -> bool:
    """Whether a key names a moment (``createdAt``, ``updated_at``, ``timestamp_ms``, ``epoch``)."""
    words = [w.lower() for w in _KEY_WORD.findall(key)]
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


def _volatile_epoch(value: float, days: tuple[int, ...]) -> bool:
    day = _epoch_day(value)
    return day is not None and _near(day, days)


# Caches sized for the values that recur (names, tags, enum words): a bigger one fills with
# one-off values (every live timestamp) and grows a long replay's memory for nothing.
@lru_cache(maxsize=2048)
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
        if not _time_key(match.group("key")) or not _volatile_epoch(float(match.group("num")), days):
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


_opaque_key = is_minted_key


# What a short string must hold for ``_plain_string`` to change it: each mask in ``mask_text`` is
# tried only on a text holding one of these (three letters that could spell "day" or a month,
# as in a weekday, a month name or "datetime."; an address; a path; a digit-separator-digit date
# or clock; 8 letters or digits in a row for a UUID, an epoch or a hex id), and ``looks_minted``
# needs the 8 in a row below 20 characters. Letter classes, not words: the search stays cheap.
_MAYBE_MASKED = re.compile(r"[ADFJMNOSadfjmnos][ACEOPUaceopu][ABCGLNPRTVYabcglnprtvy]|0x|/|\d[-/.:]\d|[A-Za-z0-9]{8}")


def _plain_string(value: str, days: tuple[int, ...] = ()) -> str:
    """A string that holds no JSON, masked: its masked text, or a token-shaped whole value."""
    if len(value) < 20 and _MAYBE_MASKED.search(value) is None:
        return value  # settled by one search ("item-2184", "ok", "t3"): nothing to mask
    return _masked_string(value, days)


# ``_MAYBE_MASKED`` split for many short ASCII strings at once (``_plain_strings``): its
# alternatives as byte scans, each several times faster than the one regex over the same text.
_MAYBE_MONTH_OR_DAY = re.compile(rb"[ADFJMNOSadfjmnos][ACEOPUaceopu][ABCGLNPRTVYabcglnprtvy]")
_ALNUM_AS_A = bytes(0x61 if chr(c).isascii() and chr(c).isalnum() else 0x2E for c in range(256))
_DIGIT_SEP = bytes(0x64 if chr(c) in "0123456789" else 0x73 if chr(c) in "-.:" else 0x2E for c in range(256))
_SHORT = 20  # below this length a string may be settled by the pre-check alone
_BATCH = 64  # fewer strings than this are checked one by one


def _plain_strings(values: list[str], days: tuple[int, ...] = ()) -> list[str]:
    """``[_plain_string(v, days) for v in values]``. A named list of 400,000 records has as many
    names, nearly all short and plain: they are checked joined, a few C scans over them all, and
    only a stretch that holds something (halved until it is short) is checked name by name."""
    out = list(values)
    stack = [(0, len(values))]
    while stack:
        lo, hi = stack.pop()
        if hi - lo < _BATCH:
            out[lo:hi] = [_plain_string(v, days) for v in values[lo:hi]]
        elif not _none_maybe_masked(values[lo:hi]):
            mid = (lo + hi) // 2
            stack.append((mid, hi))
            stack.append((lo, mid))
    return out


def _none_maybe_masked(values: list[str]) -> bool:
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


@lru_cache(maxsize=4096)
def _masked_string(value: str, days: tuple[int, ...] = ()) -> str:
    masked = mask_text(value, days)
    if masked == value and looks_minted(value):
        return OPAQUE
    return masked


def _decode_base64_text(value: str) -> str | None:
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


_JSON_STARTS = "{[ \t\r\n"  # what a string holding a JSON object or array can start with


def json_text_of(value: str) -> Any:
    """The object or array a string holds, or None (cheaply, for text that cannot be JSON)."""
    return _parse_json_text(value) if value and value[0] in _JSON_STARTS else None


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


def _digest(value: Any) -> str:
    """A placeholder naming a subtree by a hash of its content, computed without recursion."""
    sha = hashlib.sha256()
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            sha.update(b"{")
            stack.append(_CLOSE_OBJECT)
            for key in sorted(item, key=str, reverse=True):
                stack.append(item[key])
                stack.append(_Key(key))
        elif isinstance(item, (list, tuple)):
            sha.update(b"[")
            stack.append(_CLOSE_ARRAY)
            stack.extend(reversed(item))
        elif isinstance(item, _Key):
            sha.update(b"k" + json.dumps(str(item.name)).encode() + b":")
        elif item is _CLOSE_OBJECT:
            sha.update(b"}")
        elif item is _CLOSE_ARRAY:
            sha.update(b"]")
        else:
            if isinstance(item, float) and item.is_integer() and abs(item) < 2**53:
                item = int(item)
            sha.update(json.dumps(item, default=repr).encode("utf-8", "replace") + b",")
    return "<too deep: " + sha.hexdigest()[:16] + ">"


class _Key:
    __slots__ = ("name",)

    def __init__(self, name: Any) -> None:
        self.name = name


_CLOSE_OBJECT = object()
_CLOSE_ARRAY = object()


# -- the walk ---------------------------------------------------------------------------------

_DROP = object()  # a node an ignore rule removed
State = tuple[tuple[int, int], ...]  # (pattern index, next token position) pairs still alive


class _Normalizer:
    def __init__(
        self,
        patterns: tuple[tuple[Token, ...], ...],
        ignore_keys: frozenset[str],
        allow_reorder: bool,
        days: tuple[int, ...] = (),
        names: tuple[str, ...] = (),
    ):
        self.days = days
        self.names = names  # the ignore paths as written, for the record of rules that matched
        self.patterns = patterns
        self.ignore_keys = ignore_keys
        self.allow_reorder = allow_reorder
        self.start: State = tuple((i, 0) for i in range(len(patterns)))
        # The rules that removed something: the run's ``RuleUse`` (``_normalizer_for``), else
        # a set nobody reads.
        self.matched: set[tuple[str, str]] = set()

    # Each step returns the surviving states, or None when a pattern matched the node completely.
    def _step(self, states: State, match: Any) -> State | None:
        out = []
        for pi, pos in states:
            if match(self.patterns[pi][pos]):
                if pos + 1 == len(self.patterns[pi]):
                    if pi < len(self.names):
                        self.matched.add(("--ignore-path", self.names[pi]))
                    return None
                out.append((pi, pos + 1))
        return tuple(out)

    def _step_key(self, states: State, key: str) -> State | None:
        return self._step(states, lambda t: (t[0] == "key" and t[1] == key) or t[0] == "anykey")

    def _step_item(self, states: State, index: int, item: Any) -> State | None:
        def match(t: Token) -> bool:
            if t[0] == "any":
                return True
            if t[0] == "index":
                return bool(t[1] == index)
            if t[0] == "ident":
                # A Slice of an object answers get() from the identities it kept, else it is read.
                if not (isinstance(item, dict) or (type(item) is Slice and item.kind == "{")):
                    return False
                field = item.get(t[1])
                return str(field.load() if type(field) is Slice else field) == t[2]
            return False

        return self._step(states, match)

    def _step_box(self, states: State, tag: str) -> State | None:
        # Boxes are transparent: a pattern may name them ({json}) or step straight through.
        stepped = self._step(states, lambda t: t == ("box", tag))
        if stepped is None:
            return None
        return tuple(dict.fromkeys(states + stepped))

    def value(self, value: Any, states: State, key: str | None, depth: int) -> Any:
        # Dispatch on the exact type first: this walk runs twice per replayed interaction.
        kind = type(value)
        if kind is str:
            if key is DOCUMENT_KEY:
                return mask_text.__wrapped__(value, self.days)
            if key is not None and (_opaque_key(key) or key in BASE64_KEYS):
                return self.keyed_string(value, states, key, depth)
            return self.string(value, states, depth)
        if kind is dict:
            return _digest(value) if depth > MAX_DEPTH else self.mapping(value, states, depth)
        if kind is list:
            return _digest(value) if depth > MAX_DEPTH else self.sequence(value, states, depth)
        if kind is bool or value is None:
            return value
        if kind is int:
            if key is not None and value >= 1_000_000_000 and (_opaque_key(key) or self.epoch(value, key)):
                return OPAQUE if _opaque_key(key) else TIMESTAMP
            return OPAQUE if key is not None and _opaque_key(key) else value
        if kind is float:
            if key is not None and value >= 1e9 and self.epoch(value, key):
                return TIMESTAMP
            return int(value) if value.is_integer() and abs(value) < 2**53 else value
        if kind is Slice:  # a subtree both sides of a narrowed pair share, read now
            return self.value(value.load(), states, key, depth)
        # Subclasses and other sequences (only from Python callers, never from JSON).
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, str):
            return self.value(str(value), states, key, depth)
        if isinstance(value, int):
            return self.value(int(value), states, key, depth)
        if isinstance(value, float):
            return self.value(float(value), states, key, depth)
        if isinstance(value, dict):
            return self.value(dict(value), states, key, depth)
        if isinstance(value, (list, tuple)):
            return self.value(list(value), states, key, depth)
        return value

    def epoch(self, value: float, key: str) -> bool:
        """An epoch in seconds or milliseconds under a time-named key, near a reference moment."""
        return _time_key(key) and _volatile_epoch(value, self.days)

    def mapping(self, value: dict[str, Any], states: State, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        ignore_keys = self.ignore_keys
        try:
            keys = sorted(value)
        except TypeError:
            keys = sorted(value, key=str)
        for k in keys:
            if ignore_keys and k in ignore_keys:
                self.matched.add(("--ignore-key", k))
                continue
            if states:
                child_states = self._step_key(states, k)
                if child_states is None:
                    continue
            else:
                child_states = states
            child = self.value(
                value[k], child_states, DOCUMENT_KEY if k == "text" and is_document(value) else k, depth + 1
            )
            if child is not _DROP:
                out[k] = child
        return out

    def sequence(self, value: list[Any], states: State, depth: int) -> Any:
        items: list[Any] = []
        if _stretched(value):
            value = _expanded(value)
        for index, item in enumerate(value):
            if states:
                child_states = self._step_item(states, index, item)
                if child_states is None:
                    continue
            else:
                child_states = states
            child = self.value(item, child_states, None, depth + 1)
            if child is not _DROP:
                items.append(child)
        return self.keyed(items) or items

    def keyed(self, items: list[Any]) -> Keyed | None:
        if not items:
            return None
        plain = True
        for item in items:
            if type(item) is not dict:
                if type(item) is not Same:
                    return None
                raw = item.raw  # Same.is_dict, written out: this runs once per item
                if not (type(raw) is dict or (type(raw) is Slice and raw.kind == "{")):
                    return None
                if item.depth > MAX_DEPTH:
                    return None
                plain = False
        for field in IDENTITY_KEYS:
            if type(_identity(items[0], field)) is not str:
                continue  # settled by the first item, without a pass over every item
            names = [item.get(field) for item in items] if plain else self.identities(items, field)
            if set(map(type, names)) == {str}:
                keyed = Keyed(field, zip(names, items, strict=True))
                if len(keyed) == len(names):  # every name once: the mapping lost no item
                    if self.allow_reorder:
                        return Keyed(field, sorted(keyed.items(), key=lambda p: p[0]))
                    return keyed
        return None

    def identities(self, items: list[Any], field: str) -> list[Any]:
        """``_identity(item, field)`` of every item. A long list of records shared by both sides
        is mostly ``Same`` items under no ignore rule whose identity is a plain string: what
        ``value`` makes of it is ``_plain_string``, found here without the walk down to it (for
        all of them at once: ``_plain_strings``)."""
        if self.ignore_keys or _opaque_key(field) or field in BASE64_KEYS:
            return [_identity(item, field) for item in items]
        names: list[Any] = []
        plain: list[int] = []  # where names holds a raw string that _plain_string settles
        at = identity_index(field)  # where a Slice keeps the field's raw value, if it does
        for item in items:
            raw = item.raw if type(item) is Same and not item.states else None
            if type(raw) is dict or (type(raw) is Slice and raw.kind == "{"):
                if item._id_field == field:  # the other side of the pair holds the same object
                    names.append(item._id_name)
                    continue
                if isinstance(raw, Slice) and raw.ids is not None and at is not None:
                    value = raw.ids[at]  # Slice.get, written out
                    if value is MISSING:
                        value = None
                else:
                    value = raw.get(field)
                if type(value) is str and (not value or value[0] not in _JSON_STARTS):
                    plain.append(len(names))  # string(): no JSON in it
                    names.append(value)
                    continue
            names.append(_identity(item, field))
        if plain:
            for i, name in zip(plain, _plain_strings([names[i] for i in plain], self.days), strict=True):
                names[i] = name
                item = items[i]
                item._id_field = field
                item._id_name = name
        return names

    def stretch_items(self, stretch: Stretch, field: str, depth: int) -> Iterator[tuple[str, Any]]:
        """The items of a stretch of a named list (``depth`` down, under no ignore path), normalised,
        each with its name under ``field`` (``PartKeyed.whole``)."""
        for values in stretch.values():
            names = self.raw_identities(values, field, depth)
            if names is None:
                raise ValueError("a stretch read again is not what it was")  # cannot happen
            for name, value in zip(names, values, strict=True):
                yield name, self.value(value, (), None, depth)

    def raw_identities(self, values: list[Any], field: str, depth: int) -> list[str] | None:
        """What ``identities`` gives for items both sides share, under no ignore path: the
        ``Same`` of each of ``values`` (parsed items, ``depth`` down). None unless every one is an
        object with a string name under ``field``."""
        exact = bool(self.ignore_keys) or _opaque_key(field) or field in BASE64_KEYS
        names: list[Any] = []
        plain: list[int] = []  # where names holds a raw string that _plain_string settles
        for value in values:
            if type(value) is not dict:
                return None
            name = value.get(field)
            if not exact and type(name) is str and (not name or name[0] not in _JSON_STARTS):
                plain.append(len(names))
            else:
                name = self.identity(value, field, (), depth)
                if type(name) is not str:
                    return None
            names.append(name)
        if len(plain) == len(names):
            return _plain_strings(names, self.days)
        for i, name in zip(plain, _plain_strings([names[i] for i in plain], self.days), strict=True):
            names[i] = name
        return names

    def keyed_string(self, value: str, states: State, key: str, depth: int) -> Any:
        if _opaque_key(key):
            return OPAQUE
        text = _decode_base64_text(value)
        if text is not None:
            return self.box(Base64Text, text, states, depth)
        return value  # a binary payload: compared byte for byte, never masked

    def string(self, value: str, states: State, depth: int) -> Any:
        parsed = json_text_of(value)
        if parsed is not None:
            return self.box(JsonText, parsed, states, depth)
        return _plain_string(value, self.days)

    def box(self, cls: type[JsonText] | type[Base64Text], inner: Any, states: State, depth: int) -> Any:
        inner_states = self._step_box(states, cls.tag) if states else states
        if inner_states is None:
            return _DROP
        if depth > MAX_DEPTH:
            return _digest(inner)
        normalized = self.value(inner, inner_states, None, depth + 1)
        return cls({"{" + cls.tag + "}": normalized})

    def identity(self, raw: dict[str, Any], field: str, states: State, depth: int) -> Any:
        """What ``mapping(raw, states, depth)`` would hold under ``field``, normalising only that."""
        if field not in raw or (self.ignore_keys and field in self.ignore_keys):
            return None
        child = self._step_key(states, field) if states else states
        if child is None:
            return None
        value = self.value(raw[field], child, field, depth + 1)
        return None if value is _DROP else value


def _identity(item: Any, field: str) -> Any:
    return item.identity(field) if type(item) is Same else item.get(field)


# -- both sides at once -----------------------------------------------------------------------
#
# ``normalize_pair`` normalises a recorded and a live answer together and leaves out what they
# share: normalising is a function of a node, its path (the ignore rules still alive there), its
# key and its depth, so two strictly equal subtrees at the same place normalise alike, and one
# ``Same`` object stands for both. ``compare`` drops a ``Same`` as soon as it meets it on both
# sides; anything that needs its content (a rendering, a plain list lined up item by item)
# asks for it, and only then is it normalised. A 50 MiB answer with one changed leaf costs the
# walk down to that leaf, not two walks of 50 MiB.


class Same:
    """A subtree equal on both sides of a comparison, normalised only when asked (``value()``)."""

    __slots__ = ("_normalizer", "raw", "states", "key", "depth", "_value", "_id_field", "_id_name")

    def __init__(self, normalizer: _Normalizer, raw: Any, states: State, key: str | None, depth: int) -> None:
        self._normalizer = normalizer
        self.raw = raw
        self.states = states
        self.key = key
        self.depth = depth
        self._value: Any = _DROP
        # The identity last normalised (a named list's items are asked for one field, by both
        # sides): two slots, not a dict per item, in a list of 400,000 records.
        self._id_field: str | None = None
        self._id_name: Any = None

    def value(self) -> Any:
        """The normalised subtree (computed once)."""
        if self._value is _DROP:
            self._value = self._normalizer.value(self.raw, self.states, self.key, self.depth)
        return self._value

    @property
    def raw_is_dict(self) -> bool:
        """Whether the raw subtree is an object (parsed, or a ``Slice`` of one: both are read
        with ``get`` and ``in``)."""
        raw = self.raw
        return type(raw) is dict or (type(raw) is Slice and raw.is_object)

    @property
    def is_dict(self) -> bool:
        """Whether the normalised subtree is a plain object (what a named list's items must be)."""
        return self.raw_is_dict and self.depth <= MAX_DEPTH

    def identity(self, field: str) -> Any:
        """The normalised value under ``field`` (an identity key), without normalising the rest."""
        if self._value is not _DROP:
            return self._value.get(field)
        if self._id_field != field:
            self._id_name = self._normalizer.identity(self.raw, field, self.states, self.depth)
            self._id_field = field
        return self._id_name

    def __repr__(self) -> str:
        # What canonical() writes for it: the same object sits at the same place on both sides.
        return "<same>"


class _Pairer:
    """One ``normalize_pair`` call: the walk, and every pair of subtrees it took as equal."""

    def __init__(self, normalizer: _Normalizer, limits: Limits, prepared: Prepared | None = None) -> None:
        self.n = normalizer
        self.equal: list[tuple[Any, Any]] = []
        self.limits = limits
        # Texts this long are narrowed (never, with the fast paths off).
        self.narrow_from = limits.narrow_min_chars if limits.fast else -1
        self.prepared = prepared  # what was read ahead of the recorded text, if anything

    def pair(self, a: Any, b: Any, states: State, key: str | None, depth: int) -> tuple[Any, Any]:
        n = self.n
        kind = type(a)
        if kind is Slice or type(b) is Slice:
            return self.slices(a, b, states, key, depth)
        if kind is type(b) and depth <= MAX_DEPTH:
            if kind is dict or kind is list:
                # "required" is read whole when an added property is classified: never left out.
                if key != "required" and loosely_equal(a, b):
                    same = self.shared(a, b, states, key, depth)
                    return same, same
                if kind is dict:
                    return self.mapping(a, b, states, depth)
                return self.sequence(a, b, states, key, depth)
            if kind is str and (key is None or not (_opaque_key(key) or key in BASE64_KEYS)):
                if a == b:
                    if json_text_of(a) is None:
                        value = n.value(a, states, key, depth)
                        return value, value
                    same = Same(n, a, states, key, depth)
                    return same, same
                if 0 <= self.narrow_from <= min(len(a), len(b)):
                    narrowed = self.narrowed(a, b, states, depth)
                    if narrowed is not None:
                        return narrowed
                parsed_a, parsed_b = json_text_of(a), json_text_of(b)
                if parsed_a is not None and parsed_b is not None:
                    inner = n._step_box(states, JsonText.tag) if states else states
                    if inner is None:
                        return _DROP, _DROP
                    in_a, in_b = self.pair(parsed_a, parsed_b, inner, None, depth + 1)
                    return JsonText({"{json}": in_a}), JsonText({"{json}": in_b})
        return n.value(a, states, key, depth), n.value(b, states, key, depth)

    def slices(self, a: Any, b: Any, states: State, key: str | None, depth: int) -> tuple[Any, Any]:
        """``pair`` where a side is a ``Slice``: one shared slice of an object or array is what
        ``pair`` makes of two strictly equal subtrees, one ``Same``; anything else is read."""
        if a is b and a.is_container and key != "required" and depth <= MAX_DEPTH:
            same = Same(self.n, a, states, key, depth)
            return same, same
        return self.pair(a.load() if type(a) is Slice else a, b.load() if type(b) is Slice else b, states, key, depth)

    def narrowed(self, a: str, b: str, states: State, depth: int) -> tuple[Any, Any] | None:
        """What ``pair`` makes of two differing JSON texts, from their skeletons (``narrow.py``):
        None when the narrowing cannot settle them."""
        levels = MAX_DEPTH - depth - 8  # every skeleton container stays well above MAX_DEPTH
        if levels < 1:
            return None
        prepared = self.prepared
        ahead = prepared.ahead_of(a) if prepared is not None else None
        both = skeletons(a, b, levels, self.limits, run_names, ahead)
        if both is None:
            return None
        if prepared is not None:
            prepared.taken["narrow"] += 1
        inner = self.n._step_box(states, JsonText.tag) if states else states
        if inner is None:
            return _DROP, _DROP
        in_a, in_b = self.pair(both[0], both[1], inner, None, depth + 1)
        return JsonText({"{json}": in_a}), JsonText({"{json}": in_b})

    def shared(self, a: Any, b: Any, states: State, key: str | None, depth: int) -> Same:
        """The one ``Same`` standing for two subtrees ``==`` found equal (``strict`` checks them)."""
        self.equal.append((a, b))
        return Same(self.n, a, states, key, depth)

    def mapping(self, a: dict[str, Any], b: dict[str, Any], states: State, depth: int) -> tuple[Any, Any]:
        n = self.n
        paired: dict[str, tuple[Any, Any]] = {}
        for k in a:
            if k in b:
                if n.ignore_keys and k in n.ignore_keys:
                    continue
                child = n._step_key(states, k) if states else states
                if child is None:
                    continue
                if k == "text" and is_document(a) and is_document(b):
                    paired[k] = mask_text.__wrapped__(a[k], n.days), mask_text.__wrapped__(b[k], n.days)
                else:
                    paired[k] = self.pair(a[k], b[k], child, k, depth + 1)
        return self.side(a, paired, 0, states, depth), self.side(b, paired, 1, states, depth)

    def side(
        self, value: dict[str, Any], paired: dict[str, tuple[Any, Any]], which: int, states: State, depth: int
    ) -> dict[str, Any]:
        """One side's normalised object: the paired members, the rest normalised alone."""
        n = self.n
        out: dict[str, Any] = {}
        try:
            keys = sorted(value)
        except TypeError:
            keys = sorted(value, key=str)
        for k in keys:
            if k in paired:
                child = paired[k][which]
            elif n.ignore_keys and k in n.ignore_keys:
                n.matched.add(("--ignore-key", k))
                continue
            else:
                child_states = n._step_key(states, k) if states else states
                if child_states is None:
                    continue
                child = n.value(
                    value[k], child_states, DOCUMENT_KEY if k == "text" and is_document(value) else k, depth + 1
                )
            if child is not _DROP:
                out[k] = child
        return out

    def sequence(self, a: list[Any], b: list[Any], states: State, key: str | None, depth: int) -> tuple[Any, Any]:
        if _stretched(a) or _stretched(b):
            if not states and depth < MAX_DEPTH:
                done = self.stretched(a, b, depth)
                if done is not None:
                    return done
            a, b = _expanded(a), _expanded(b)
        n = self.n
        items_a, items_b, paired = self.walk(a, b, states, depth)
        # ``keyed`` names a list by its first item's identity: a first item with none settles
        # it without a pass over every item.
        keyed_a = n.keyed(items_a) if _named(items_a) else None
        keyed_b = self.keyed_beside(keyed_a, items_a, items_b) if _named(items_b) else None
        if keyed_a is not None and keyed_b is not None and keyed_a.key == keyed_b.key:
            # Lined up by identity, as compare lines them up. Items walked as a pair under two
            # identities meet other partners there: they must not share anything with each other.
            field = keyed_a.key
            apart = [
                (i, j)
                for i, j in paired
                if items_a[i] is not items_b[j] and _identity(items_a[i], field) != _identity(items_b[j], field)
            ]
            if not apart:
                return keyed_a, keyed_b
            for i, j in apart:
                items_a[i], items_b[j] = materialize(items_a[i]), materialize(items_b[j])
            return n.keyed(items_a) or items_a, n.keyed(items_b) or items_b
        if len(items_a) == 1 and len(items_b) == 1:
            # One item against one: lined up with each other, whatever they hold.
            return keyed_a or items_a, keyed_b or items_b
        if keyed_a is None and keyed_b is None and not _named(items_a) and not _named(items_b):
            # Lined up by content (``compare``'s ``align_list``), which lines up the items equal
            # at both ends with each other and writes out only those between: a shared record
            # stays one ``Same``, never normalised.
            return items_a, items_b
        # One side named and the other not: lined up by content, every item needed whole.
        items_a = [materialize(x) for x in items_a]
        items_b = [materialize(y) for y in items_b]
        return n.keyed(items_a) or items_a, n.keyed(items_b) or items_b

    def walk(
        self, a: list[Any], b: list[Any], states: State, depth: int
    ) -> tuple[list[Any], list[Any], list[tuple[int, int]]]:
        """Each side's items normalised, and the positions walked as a pair into two different
        objects. Items are walked in pairs by place, except that the items two lists of different
        lengths share at their ends are paired from the end: a record inserted near the start
        leaves every later one the same object on both sides, not a pair of differing
        neighbours."""
        if len(a) != len(b) and depth < MAX_DEPTH:
            tail = self.shared_tail(a, b, states, depth + 1)
            if tail:
                head = self.walk(a[: len(a) - len(tail)], b[: len(b) - len(tail)], states, depth)
                head[0].extend(tail)
                head[1].extend(tail)
                return head
        n = self.n
        items_a: list[Any] = []
        items_b: list[Any] = []
        # Positions in items_a, items_b walked as a pair into two different objects (one shared
        # ``Same`` is never apart from itself, so those are not noted).
        paired: list[tuple[int, int]] = []
        # Under no ignore rule, the items both sides share (a long list read from skeletons is
        # mostly one shared Slice after another) are made in one pass, and taken a stretch at a
        # time: what the walk below makes of each, without its tests per item.
        shared: list[Same | None] = []
        if not states and depth < MAX_DEPTH:
            shared = self.shared_items(a, b, states, depth + 1)
        index = -1
        end = max(len(a), len(b))
        while index + 1 < end:
            index += 1
            if index < len(shared) and shared[index] is not None:
                try:
                    stop = shared.index(None, index)
                except ValueError:
                    stop = len(shared)
                stretch = shared[index:stop]
                items_a.extend(stretch)
                items_b.extend(stretch)
                index = stop - 1
                continue
            x = a[index] if index < len(a) else _DROP
            y = b[index] if index < len(b) else _DROP
            sx: State | None = states
            sy: State | None = states
            if states:
                sx = n._step_item(states, index, x) if x is not _DROP else None
                sy = n._step_item(states, index, y) if y is not _DROP else None
            if x is not _DROP and y is not _DROP and sx is not None and sx == sy:
                if x is y and type(x) is Slice and x.kind in "{[" and depth < MAX_DEPTH:
                    same = Same(n, x, sx, None, depth + 1)  # what pair() makes of it, inline
                    items_a.append(same)
                    items_b.append(same)
                    continue
                kind = type(x)
                if (kind is dict or kind is list) and kind is type(y) and depth < MAX_DEPTH and loosely_equal(x, y):
                    # What pair() makes of an equal item, without the call: a long list of
                    # equal records is mostly this.
                    same = self.shared(x, y, sx, None, depth + 1)
                    items_a.append(same)
                    items_b.append(same)
                    continue
                nx, ny = self.pair(x, y, sx, None, depth + 1)
                if nx is not _DROP and ny is not _DROP and nx is not ny:
                    paired.append((len(items_a), len(items_b)))
            else:
                nx = n.value(x, sx, None, depth + 1) if x is not _DROP and sx is not None else _DROP
                ny = n.value(y, sy, None, depth + 1) if y is not _DROP and sy is not None else _DROP
            if nx is not _DROP:
                items_a.append(nx)
            if ny is not _DROP:
                items_b.append(ny)
        return items_a, items_b, paired

    def shared_items(self, a: list[Any], b: list[Any], states: State, depth: int) -> list[Same | None]:
        """For each place of ``a`` and ``b`` (as far as both go), the ``Same`` standing for an
        object or array both share there (one ``Slice``), else None."""
        n = self.n
        return [
            Same(n, x, states, None, depth) if x is y and type(x) is Slice and x.kind in "{[" else None
            for x, y in zip(a, b, strict=False)
        ]

    def shared_tail(self, a: list[Any], b: list[Any], states: State, depth: int) -> list[Same]:
        """The objects and arrays two lists share at their ends, counted from the end (one
        ``Slice`` on both sides, or subtrees ``==`` found equal, under the same ignore rules at
        their two places), one ``Same`` each, in order."""
        n = self.n
        tail: list[Same] = []
        i, j = len(a), len(b)
        for x, y in zip(reversed(a), reversed(b), strict=False):
            i, j = i - 1, j - 1
            at = states
            if states:
                step = n._step_item(states, i, x)
                if step is None or step != n._step_item(states, j, y):
                    break
                at = step
            if x is y and type(x) is Slice and x.kind in "{[":
                tail.append(Same(n, x, at, None, depth))
            elif (type(x) is dict or type(x) is list) and type(x) is type(y) and loosely_equal(x, y):
                tail.append(self.shared(x, y, at, None, depth))
            else:
                break
        tail.reverse()
        return tail

    def stretched(self, a: list[Any], b: list[Any], depth: int) -> tuple[Keyed, Keyed] | None:
        """``sequence`` of two skeleton lists that hold a ``Stretch`` (shared items, many) at the
        start or the end, the same on both sides, when both are named lists: what ``sequence``
        makes of the lists with the stretches read item by item, less the stretches' items, which
        are the very same object on both sides there (``Same``), and are all ``compare`` would
        drop. Their names are read (to know the lists are named, and by which field) without an
        object per item. None when that cannot be settled so: the caller reads the stretches item
        by item, as before (a plain list, an identity that may repeat, items in another order)."""
        head = a[0] if type(a[0]) is Stretch else None
        tail = a[-1] if type(a[-1]) is Stretch else None
        if (b[0] if type(b[0]) is Stretch else None) is not head or (
            b[-1] if type(b[-1]) is Stretch else None
        ) is not tail:
            return None
        if head is tail or depth + 1 > MAX_DEPTH:
            return None  # one stretch both ends: a list that is all shared is never narrowed
        stretches = [x for x in (head, tail) if x is not None]
        mid_a = a[1 if head else 0 : len(a) - (1 if tail else 0)]
        mid_b = b[1 if head else 0 : len(b) - (1 if tail else 0)]
        if _stretched(mid_a) or _stretched(mid_b):
            return None
        items_a, items_b, paired = self.walk(mid_a, mid_b, (), depth)
        named_a = self.stretch_names(stretches, items_a, depth + 1)
        named_b = self.stretch_names(stretches, items_b, depth + 1)
        if named_a is None or named_b is None or named_a[0] != named_b[0]:
            return None
        field = named_a[0]
        pairs_a = list(zip(named_a[1], items_a, strict=True))
        pairs_b = list(zip(named_b[1], items_b, strict=True))
        if self.n.allow_reorder:
            pairs_a.sort(key=lambda p: p[0])
            pairs_b.sort(key=lambda p: p[0])
        keyed_a = PartKeyed(field, pairs_a, head, tail, self.n, depth + 1)
        keyed_b = PartKeyed(field, pairs_b, head, tail, self.n, depth + 1)
        if not self.n.allow_reorder:
            common = [k for k in keyed_a if k in keyed_b]
            if common != [k for k in keyed_b if k in keyed_a]:
                return None  # an ordering change is reported with every name: read them all
        for i, j in paired:
            x, y = items_a[i], items_b[j]
            if x is not y and _identity(x, field) != _identity(y, field):
                # Walked as a pair, lined up by name apart: they must share nothing.
                keyed_a[named_a[1][i]] = materialize(x)
                keyed_b[named_b[1][j]] = materialize(y)
        return keyed_a, keyed_b

    def stretch_names(self, stretches: list[Stretch], items: list[Any], depth: int) -> tuple[str, list[str]] | None:
        """The field ``keyed`` names a list by, and the names of ``items`` (normalised, one side's
        items other than the stretches'), when the whole list (the stretches' items, which are
        ``depth`` down, and ``items``) is a named list: every item an object with a string name
        under that field, every name once. None when it is not, or that is not certain (two names
        of the stretches with one hash, or one of ``items`` with the hash of one of theirs)."""
        n = self.n
        for item in items:
            if type(item) is not dict and not (type(item) is Same and item.is_dict):
                return None
        for field in IDENTITY_KEYS:
            hashes = self.stretch_hashes(stretches, field, depth)
            if hashes is None:
                continue  # an item of the stretches has no string name under it
            if hashes is _UNSURE:
                return None
            names = n.identities(items, field) if items else []
            if any(type(name) is not str for name in names) or len(set(names)) != len(names):
                continue
            for name in names:
                code = hash(name)
                if code in hashes[code & (len(hashes) - 1)]:
                    return None  # a name of the stretches too, or one with its hash: read them all
            return field, names
        return None

    def stretch_hashes(self, stretches: list[Stretch], field: str, depth: int) -> Any:
        """The hashes of the names under ``field`` of every item of ``stretches``, in buckets by
        their low bits (``array``s, a power of two of them, ~64 names each: 8 bytes a name, where
        a set of them or a sorted list costs ~70): None when an item is not an object with a
        string name there; ``_UNSURE`` when two hashes are equal. Learned once per stretch pair,
        for both sides; the runs a read-ahead of the text named (``run_names``) are not read
        again."""
        n = self.n
        memo = stretches[0].memo
        key = (field, n, depth, tuple(map(id, stretches)))
        if key in memo:
            return memo[key]
        mask = (1 << (sum(stretch.count for stretch in stretches) // 64).bit_length()) - 1
        buckets = [array("q") for _ in range(mask + 1)]
        as_read = not n.ignore_keys and not _opaque_key(field) and field not in BASE64_KEYS
        for stretch in stretches:
            ahead = self.prepared.ahead_of(stretch.text) if as_read and self.prepared is not None else None
            for part in stretch.parts:
                codes: Any = None
                if as_read:  # marked as the narrowing read it (``run_names``)
                    codes = (stretch.mark_of(part) or {}).get(field)
                if codes is None and ahead is not None and type(part) is tuple and ahead.runs.get(part[0]) == part[1:3]:
                    codes = ahead.marks.get(part[0], {}).get(field)
                    if codes is not None:
                        self.prepared.taken["read_ahead"] += 1  # type: ignore[union-attr]
                if codes is None:
                    names = n.raw_identities(stretch.part_values(part), field, depth)
                    if names is None:
                        memo[key] = None
                        return None
                    codes = map(hash, names)
                for code in codes:
                    buckets[code & mask].append(code)
        found: Any = _UNSURE if any(len(set(bucket)) < len(bucket) for bucket in buckets) else buckets
        memo[key] = found
        return found

    def keyed_beside(self, keyed_a: Keyed | None, items_a: list[Any], items_b: list[Any]) -> Keyed | None:
        """``n.keyed(items_b)``, where ``keyed_a`` is ``n.keyed(items_a)``. A long named list with
        one changed record holds, at every other place, the very object ``items_a`` holds there
        (one ``Same``): when every other place names its item as ``items_a``'s does, the two have
        the same identities in the same order, and ``keyed_a`` copied with those items swapped in
        is the answer, without a pass over the shared ones."""
        n = self.n
        if keyed_a is None or len(items_b) != len(items_a) or items_b[0] is not items_a[0]:
            return n.keyed(items_b)
        field = keyed_a.key
        first = items_a[0]
        for earlier in IDENTITY_KEYS[: IDENTITY_KEYS.index(field)]:
            if type(_identity(first, earlier)) is str:
                return n.keyed(items_b)  # a field keyed() tries first might name items_b's
        moved = list(compress(range(len(items_a)), map(is_not, items_a, items_b)))
        if len(moved) > len(items_a) // 8:
            return n.keyed(items_b)  # mostly different: copying saves nothing
        names = []
        for j in moved:
            y = items_b[j]
            if type(y) is not dict and not (type(y) is Same and y.is_dict):
                return n.keyed(items_b)
            name = n.identities([y], field)[0]
            if type(name) is not str or name != _identity(items_a[j], field):
                return n.keyed(items_b)
            names.append(name)
        keyed_b = Keyed(field, keyed_a)
        for j, name in zip(moved, names, strict=True):
            keyed_b[name] = items_b[j]
        return keyed_b

    def strict(self) -> bool:
        """Whether every pair taken as equal is equal beyond ``==`` (which says True == 1 and
        1 == 1.0, where normalising tells them apart); key order aside, since it never matters."""
        if not self.equal:
            return True
        try:
            # marshal writes every type and every float bit: equal bytes are strictly equal values.
            return marshal.dumps([x for x, _ in self.equal], 2) == marshal.dumps([y for _, y in self.equal], 2)
        except (ValueError, TypeError):
            return False


_UNSURE = object()  # stretch_hashes: two names of the stretches have one hash


def _named(items: list[Any]) -> bool:
    """Whether the first item has a string under an identity key: unless it has, ``keyed``
    names no list of these items, normalised whole or not (it reads the first item first)."""
    if not items:
        return False
    first = items[0]
    if type(first) is not dict and not (type(first) is Same and first.is_dict):
        return False
    return any(type(_identity(first, field)) is str for field in IDENTITY_KEYS)


def _stretched(items: list[Any]) -> bool:
    """Whether a skeleton list holds a ``Stretch`` (at its start or its end, the only places one
    can be)."""
    return bool(items) and (type(items[0]) is Stretch or type(items[-1]) is Stretch)


def _expanded(items: list[Any]) -> list[Any]:
    """A skeleton list with each ``Stretch`` read item by item (the same Slices on both sides)."""
    if not _stretched(items):
        return items
    out: list[Any] = []
    for item in items:
        if type(item) is Stretch:
            out.extend(item.items())
        else:
            out.append(item)
    return out


def materialize(value: Any, depth: int = 0) -> Any:
    """``value`` with every ``Same`` in it normalised, as ``normalize`` would have made it."""
    if type(value) is Same:
        return value.value()
    if depth > MAX_DEPTH + 8:
        return value
    if type(value) is PartKeyed:
        return value.whole()
    if isinstance(value, Keyed):
        return Keyed(value.key, ((k, materialize(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, dict):
        return type(value)((k, materialize(v, depth + 1)) for k, v in value.items())
    if isinstance(value, list):
        return [materialize(v, depth + 1) for v in value]
    return value


def loosely_equal(a: Any, b: Any) -> bool:
    """``a == b`` (so True == 1), and False rather than a RecursionError on hostile nesting."""
    try:
        return bool(a == b)
    except RecursionError:  # hostile nesting: let the depth-limited normaliser decide
        return False


@lru_cache(maxsize=64)
def _normalizer(
    ignore_paths: tuple[str, ...], ignore_keys: tuple[str, ...], allow_reorder: bool, days: tuple[int, ...]
) -> _Normalizer:
    patterns = tuple(parse_path(p) for p in ignore_paths)
    return _Normalizer(patterns, frozenset(ignore_keys), allow_reorder, days, ignore_paths)


def unused_rules(options: NormalizeRules) -> list[tuple[str, str]]:
    """The ``--ignore-path`` / ``--ignore-key`` rules of ``options`` that have matched nothing in
    any normalisation under these options (or a copy ``at`` made: they share one ``RuleUse``),
    as (flag, rule)."""
    return options.rule_use.unused(options.ignore_paths, options.ignore_keys)


def reference_days(moments: Sequence[float] = ()) -> tuple[int, ...]:
    """The reference moments (epoch seconds: the recording) plus today (the replay), as day ordinals."""
    days = {dt.date.today().toordinal()}
    for moment in moments:
        try:
            days.add(dt.datetime.fromtimestamp(moment, dt.UTC).date().toordinal())
        except (OverflowError, OSError, ValueError):
            continue
    return tuple(sorted(days))


def _normalizer_for(options: NormalizeRules | None) -> _Normalizer:
    """The (cached) normaliser for ``options``; with ignore rules, a copy of it that records the
    rules that matched in ``options.rule_use``."""
    if options is None:
        return _normalizer((), (), False, reference_days())
    normalizer = _normalizer(
        tuple(options.ignore_paths),
        tuple(options.ignore_keys),
        bool(options.allow_reorder),
        reference_days(tuple(getattr(options, "moments", ()))),
    )
    if not (normalizer.patterns or normalizer.ignore_keys):
        return normalizer  # no rule to record
    normalizer = copy.copy(normalizer)
    normalizer.matched = options.rule_use.matched
    return normalizer


def run_names(run: list[Any]) -> dict[str, array[int]]:
    """What the narrowing (``narrow.skeletons``) or a read-ahead (``narrow.ReadAhead``) keeps of a
    run of array items it parsed: by identity key, the hashes of the items' names under it, where
    every item is an object whose name there is a string that is its own normal form whatever the
    options (no ignore key): short, nothing ``_MAYBE_MASKED`` finds in it, no JSON.
    ``stretch_hashes`` takes them as it would have made them. C-speed passes (``map``), not a
    Python step per item: a list of 400,000 records is read so."""
    out: dict[str, array[int]] = {}
    if not run or set(map(type, run)) != {dict}:
        return out  # not all objects
    for field in IDENTITY_KEYS:
        if type(run[0].get(field)) is not str:
            continue  # settled by the first item
        names = list(map(methodcaller("get", field), run))
        if (
            set(map(type, names)) == {str}
            and set(map(itemgetter(0), filter(None, names))).isdisjoint(_JSON_STARTS)
            and _none_maybe_masked(names)
        ):
            out[field] = array("q", map(hash, names))
    return out


def normalize_pair(
    a: Any, b: Any, options: NormalizeRules | None = None, prepared: Prepared | None = None
) -> tuple[Any, Any]:
    """``normalize(a, options), normalize(b, options)``, with every subtree the two share at the
    same place left as one ``Same`` object on both sides (see above). Comparing the pair finds
    exactly the differences comparing the two full normal forms finds; ``materialize`` turns it
    into those forms."""
    normalizer = _normalizer_for(options)
    pairer = _Pairer(normalizer, options.limits if options is not None else Limits.from_env(), prepared)
    na, nb = pairer.pair(a, b, normalizer.start, None, 0)
    if not pairer.strict():
        # Something ``==`` forgave was taken as shared: normalise both sides in full.
        return normalize(a, options), normalize(b, options)
    return (None if na is _DROP else na), (None if nb is _DROP else nb)


def normalized_alike(a: Any, b: Any, options: NormalizeRules | None = None) -> bool:
    """Whether ``normalize(a, options)`` and ``normalize(b, options)`` are certainly equal, found
    without building either: True only when the two have the same shape (the same types, keys and
    lengths) and every pair of leaves that differ are strings that normalise alike where they
    stand (a fresh timestamp or UUID in a text, JSON in text holding one, a value under a minted
    key). False means not known, and the caller normalises: under an ignore rule, for any other
    differing leaf, and past a small answer's bounds (``_ALIKE_NODES`` values, ``_ALIKE_TEXT``
    characters in a differing text, depth ``_ALIKE_DEPTH``), where comparing the long way is what
    a failed look would have cost again.

    Normalising is a function of a node's own value, its key, its depth and the ignore rules still
    alive at its place, and a container's normal form is made from its children's alone (objects
    sorted by key, named lists keyed by their normalised names); so two trees of one shape whose
    leaves normalise alike pairwise normalise alike, and compare finds nothing between them."""
    normalizer = _normalizer_for(options)
    if normalizer.patterns or normalizer.ignore_keys:
        return False  # rules step along paths (an identity is read raw) and record what they matched
    try:
        return _Alike(normalizer.days).alike(a, b, None, 0)
    except RecursionError:
        return False


# ``normalized_alike``'s bounds: the values it looks at, the length of a differing string it masks
# or parses, the depth it goes to (``MAX_DEPTH`` is far below: never a digest).
_ALIKE_NODES = 512
_ALIKE_TEXT = 4096
_ALIKE_DEPTH = 32


class _Alike:
    """One ``normalized_alike`` look: the reference days, and how many more values it may visit."""

    __slots__ = ("days", "left")

    def __init__(self, days: tuple[int, ...]) -> None:
        self.days = days
        self.left = _ALIKE_NODES

    def alike(self, a: Any, b: Any, key: str | None, depth: int) -> bool:
        self.left -= 1
        kind = type(a)
        if self.left < 0 or depth > _ALIKE_DEPTH or kind is not type(b):
            return False  # True and 1, 1 and 1.0: normalised apart, or not known
        if kind is str:
            if a == b:
                return True
            if key is DOCUMENT_KEY:
                return False  # a document is compared as it is
            if key is not None and (_opaque_key(key) or key in BASE64_KEYS):
                return _opaque_key(key)  # both <opaque>; a base64 payload is not known
            if len(a) >= _ALIKE_TEXT or len(b) >= _ALIKE_TEXT:
                return False
            parsed_a, parsed_b = json_text_of(a), json_text_of(b)
            if parsed_a is None and parsed_b is None:
                return _plain_string(a, self.days) == _plain_string(b, self.days)  # as ``string`` makes each
            if parsed_a is None or parsed_b is None:
                return False
            return self.alike(parsed_a, parsed_b, None, depth + 1)  # inside one JsonText box each
        if kind is dict:
            if len(a) != len(b):
                return False
            document = "text" in a and is_document(a)
            for k, v in a.items():
                key = DOCUMENT_KEY if document and k == "text" else k
                if type(k) is not str or k not in b or not self.alike(v, b[k], key, depth + 1):
                    return False
            return True
        if kind is list:
            if len(a) != len(b):
                return False
            for x, y in zip(a, b, strict=True):
                if not self.alike(x, y, None, depth + 1):
                    return False
            return True
        if kind is int or kind is float or kind is bool or a is None:
            # One type, one value (NaN is not equal to itself: not known): the same normal form.
            return bool(a == b)
        return False  # anything JSON does not make


def normalize(obj: Any, options: NormalizeRules | None = None) -> Any:
    """The canonical form of a JSON value: masked, boxed, keyed, with ignored nodes removed.

    Pure: ``obj`` is not modified. The result is still plain JSON (boxes are dicts), so
    ``json.dumps`` of two normalised values is equal exactly when they compare equal.
    """
    normalizer = _normalizer_for(options)
    result = normalizer.value(obj, normalizer.start, None, 0)
    return None if result is _DROP else result


def canonical(obj: Any) -> str:
    """A string equal for two normalised values exactly when they are equal (order-sensitive lists)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), default=str)


def same_canonical(a: Any, b: Any) -> bool:
    """``canonical(a) == canonical(b)``, without writing out what the two share: a subtree at the
    same place on both sides (a ``Same`` from ``normalize_pair``) is equal to itself at once, where
    writing a 44k-record named list out twice cost ~0.6 s and ~80 MiB at 50 MiB. Objects
    (``Keyed`` and the boxes are dicts) and lists are walked; strings, ints, booleans and null of
    one type are equal as written exactly when ``==``; anything else is written out and compared."""
    try:
        return _same_canonical(a, b)
    except RecursionError:  # deeper than a walk in Python goes: as written
        return canonical(a) == canonical(b)


def _same_canonical(a: Any, b: Any) -> bool:
    if a is b:
        return True
    kind = type(a)
    if isinstance(a, dict) and isinstance(b, dict):
        if len(a) != len(b):
            return False
        for (key_a, value_a), (key_b, value_b) in zip(a.items(), b.items(), strict=True):
            if type(key_a) is not str or type(key_b) is not str:
                return canonical(a) == canonical(b)  # json.dumps spells such keys its own way
            if key_a != key_b or not _same_canonical(value_a, value_b):
                return False
        return True
    if kind is list and type(b) is list:
        if len(a) != len(b):
            return False
        for x, y in zip(a, b, strict=True):
            if not _same_canonical(x, y):
                return False
        return True
    if kind is type(b) and kind in _WRITTEN_AS_EQUAL:
        return bool(a == b)
    return canonical(a) == canonical(b)


# Types whose equal values json.dumps writes alike, and unequal ones differently (not float: NaN).
_WRITTEN_AS_EQUAL = frozenset({str, int, bool, type(None)})
