"""Two long JSON texts that differ, narrowed at text level before either is parsed whole.

One changed leaf in a 50 MiB JSON answer leaves the two texts equal but for a few bytes. Parsing
both and walking them cost seconds and a gigabyte. Here the common prefix and suffix are found at
C speed (slice comparisons, halving the window), and only the containers that enclose the bytes
that differ are read member by member (``json``'s own scanner, one member at a time). Each side
becomes a *skeleton*: the parsed value, except that a member whose bytes lie wholly in the common
prefix or suffix is a ``Slice``, the same object on both sides, parsed only when asked. Equal
bytes parse to strictly equal values, so ``normalize`` takes a shared ``Slice`` as a shared
subtree, exactly as it takes two equal parsed subtrees.

Why a member in the common prefix is the same member on both sides: JSON is read left to right
and a value's end is decided by its own bytes plus one character of lookahead (a number), so a
member that ends before the first differing byte reads the same on both sides. A member in the
common suffix is taken as shared only once the reading of the other side has reached a member
boundary at the same distance from the end: from there on both readings see the same bytes in the
same state.

Anything this reading cannot settle (not JSON, a duplicate key, nesting too deep, a number too long
for ``int``) gives None, and the caller parses both texts whole, as before.

The sizes it reads in (windows, runs) are the ``Limits`` it is given; what one narrowing keeps
(the run of shared items kept parsed) is its own ``_Source``, held by the Slices it makes and
gone with them: nothing is kept by the module.
"""

from __future__ import annotations

import json
import re
from array import array
from bisect import bisect_right
from collections.abc import Callable, Generator, Iterator, Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]  # the C one, as json uses
from typing import Any

from mcp_replay_action.values.limits import Limits

_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # the C scanner json.loads uses: (value, end) at an index
_WS_RE = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, and only it


def _skip_space(text: str, at: int) -> int:
    return _WS_RE.match(text, at).end()  # type: ignore[union-attr]  # it matches the empty string


_CLOSE = {"{": "}", "[": "]"}
_AFTER_VALUE = frozenset(" \t\n\r,]}")
_SPACE = frozenset(" \t\n\r")
MISSING = _MISSING = object()  # a key an object does not have, in ``Slice.ids``


class _Source:
    """The text one narrowing (or one read-ahead) reads shared members from, the sizes it reads
    them in (``Limits``), and the one run of array items kept parsed for the Slices made of them.

    A member is first read from a copy of its next few KiB (``windows``), so that a big one (the
    member that holds the difference, above all) is never parsed whole just to find where it
    ends; the window grows for bigger members, and past the last size the member is walked
    member by member. Shared items of an array are read in runs of about ``run_chars``
    characters, one ``json.loads`` each (the run ends at a comma that a parse proves is between
    items; ``run_tries`` commas are tried), not one scan per item. A list read whole reads its
    items in order, one run at a time, so one run is kept parsed (``item``). Each narrowing makes
    its own, held by the Slices and Stretches it makes: no two comparisons share what is kept, and
    it goes when they go."""

    __slots__ = ("text", "windows", "run_chars", "run_tries", "_kept", "kinds")

    def __init__(self, text: str, limits: Limits) -> None:
        self.text = text
        self.windows = limits.narrow_windows
        self.run_chars = limits.run_chars
        self.run_tries = limits.run_tries
        self._kept: tuple[int, list[Any]] = (-1, [])  # the run kept parsed: where it starts, its items
        # By a run's start, the comma that ends it and the kind of all its items ("{", "[", or
        # "s": scalars), learned from its parse (``_run_values``): the run's Slices are then made
        # without parsing it again (``_items_of``), what a long plain list's stretches take.
        self.kinds: dict[int, tuple[int, str]] = {}

    def item(self, start: int, stop: int, index: int) -> Any:
        """Item ``index`` of the run of array items ``text[start:stop]``, parsed."""
        kept = self._kept  # read once, replaced whole: a start is never paired with another run's items
        if kept[0] != start:
            kept = self._kept = (start, json.loads("[" + self.text[start:stop] + "]"))
        return kept[1][index]

    def reads_as(self, other: _Source) -> bool:
        """Whether ``other`` reads with the same sizes (finds the same runs where this one does)."""
        return (self.windows, self.run_chars, self.run_tries) == (other.windows, other.run_chars, other.run_tries)


class Fallback(Exception):
    """The narrowing cannot settle this pair: parse both texts whole."""


class Slice:
    """A JSON value at ``start`` in the text of ``source`` whose bytes both sides share: parsed
    only when asked (or item ``index`` of the run of array items ``text[start:stop]``, through
    the run ``source`` keeps parsed). ``kind`` is its first character ("{", "[", or "s" for a
    scalar in a run); ``ids`` are the raw values of the identity keys of an object (read when it
    was scanned), so a named list's identities need no second parse."""

    __slots__ = ("source", "start", "stop", "index", "kind", "ids")

    def __init__(
        self, source: _Source, start: int, ids: tuple[Any, ...] | None, stop: int = -1, index: int = -1, kind: str = ""
    ) -> None:
        self.source = source
        self.start = start
        self.stop = stop
        self.index = index
        self.kind = kind or source.text[start]
        self.ids = ids

    def load(self) -> Any:
        """The parsed value."""
        if self.index < 0:
            return _SCAN(self.source.text, self.start)[0]
        return self.source.item(self.start, self.stop, self.index)

    @property
    def is_object(self) -> bool:
        return self.kind == "{"

    @property
    def is_container(self) -> bool:
        return self.kind in "{["

    # Read-only mapping access, meant for the identity keys of an object (``normalize`` reads a
    # named list's identities through these).
    def _raw(self, field: str) -> Any:
        ids = self.ids
        if ids is not None:
            at = _ID_INDEX.get(field)
            if at is not None:
                return ids[at]
        value = self.load()
        return value.get(field, _MISSING) if type(value) is dict else _MISSING

    def get(self, field: str, default: Any = None) -> Any:
        value = self._raw(field)
        return default if value is _MISSING else value

    def __contains__(self, field: object) -> bool:
        return isinstance(field, str) and self._raw(field) is not _MISSING

    def __getitem__(self, field: str) -> Any:
        value = self._raw(field)
        if value is _MISSING:
            raise KeyError(field)
        return value

    def __repr__(self) -> str:
        return f"Slice({self.start})"


# A run of shared array items as read: where its first item starts, the comma after its last,
# how many items it holds, and their Slices when they were made (None once let go).
_Part = tuple[int, int, int, "list[Slice] | None"]


class Stretch:
    """``count`` items in a row of an array whose bytes both sides share: one object on both sides
    of a skeleton in place of a ``Slice`` per item, so that a long list with one changed record
    costs a few objects, not a few per record. ``parts`` are how the narrowing read them (runs,
    and single items as a ``Slice`` each). ``values`` parses them a run at a time (what a named
    list's identities are read from); ``items`` makes their Slices, once, for a comparison that
    needs them one by one (the same objects on both sides). ``memo`` keeps what ``normalize``
    learns of them (their names), for both sides; ``marks``, what the narrowing's ``mark`` made of
    the runs it read (``mark_of``). ``source``: the narrowing's (``_Source``), ``text`` its text."""

    __slots__ = ("source", "text", "parts", "count", "_items", "memo", "marks")

    def __init__(self, source: _Source, parts: list[_Part | Slice], count: int, marks: Marks | None = None) -> None:
        self.source = source
        self.text = source.text
        self.parts = parts
        self.count = count
        self._items: list[Slice] | None = None
        self.memo: dict[Any, Any] = {}
        self.marks = marks if marks is not None else {}

    def mark_of(self, part: _Part | Slice) -> Any:
        """What the narrowing's ``mark`` made of the items of ``part`` (None: nothing)."""
        if type(part) is not tuple:
            return None
        known = self.marks.get(part[0])
        return known[2] if known is not None and known[:2] == part[1:3] else None

    def values(self) -> Iterator[list[Any]]:
        """The items parsed, a run (or one single item) at a time."""
        return map(self.part_values, self.parts)

    def part_values(self, part: _Part | Slice) -> list[Any]:
        """The items of one of ``parts``, parsed."""
        if isinstance(part, Slice):
            return [part.load()]
        at, comma, _, _ = part
        return json.loads("[" + self.text[at:comma] + "]")  # type: ignore[no-any-return]

    def items(self) -> list[Slice]:
        """A ``Slice`` per item, in order (made on first call)."""
        if self._items is None:
            self._items = _items_of(self.source, self.parts)
        return self._items

    def __repr__(self) -> str:
        return f"Stretch({self.count})"


def _items_of(source: _Source, parts: list[_Part | Slice]) -> list[Slice]:
    """A ``Slice`` per item of ``parts`` (runs read again where their Slices were let go)."""
    out: list[Slice] = []
    for part in parts:
        if isinstance(part, Slice):
            out.append(part)
            continue
        at, comma, count, made = part
        known = source.kinds.get(at) if made is None else None
        if known is not None and known[0] == comma:
            # Items of one kind: their Slices need no parse (an object's identities are read
            # through the run kept parsed, when asked).
            kind = known[1]
            made = [Slice(source, at, None, comma, i, kind) for i in range(count)]
        got = made if made is not None else _items_to(source, at, comma)
        if len(got) != count:
            raise ValueError("a run read again holds other items")  # cannot happen
        out.extend(got)
    return out


def _items_to(source: _Source, at: int, comma: int) -> list[Slice]:
    """The Slices of the array items from ``at`` (an item's start) to the comma at ``comma``,
    read as ``_run`` reads them (a run need not end where the first reading's did)."""
    text = source.text
    out: list[Slice] = []
    while True:
        run = _run(source, at, comma + 2)  # a run ending at a comma up to ``comma``
        if run is not None:
            out.extend(run)
            end = run[0].stop
        else:
            got = _fit(text, at, comma, source.windows)
            value, end = got if got is not None else _scan(text, at)
            out.append(Slice(source, at, _ids(value)))
            end = _skip_space(text, end)
        if end >= comma:
            return out
        at = _skip_space(text, end + 1)


def _unmade(part: _Part | Slice) -> _Part | Slice:
    """A run part without its Slices (a single item's Slice as it is)."""
    if isinstance(part, Slice):
        return part
    at, comma, count, _ = part
    return (at, comma, count, None)


class _Shared:
    """The shared members of one container of a skeleton, in a row, as the narrowing reads them
    (an array's in runs and single items): an array's made into one ``Stretch`` when there are
    ``stretch_min`` or more, else (and an object's) a Slice each. A run's Slices are let go as
    soon as the count makes a Stretch certain."""

    __slots__ = ("source", "stretches", "parts", "count", "marks", "stretch_min")

    def __init__(self, source: _Source, stretches: bool, marks: Marks | None, stretch_min: int) -> None:
        self.source = source
        self.stretches = stretches  # an array's: one Stretch may stand for many
        self.marks = marks
        self.stretch_min = stretch_min
        self.parts: list[_Part | Slice] = []
        self.count = 0

    def run(self, at: int, comma: int, count: int, made: list[Slice] | None) -> None:
        self.count += count
        if self.count >= self.stretch_min:
            made = None
            if self.count - count < self.stretch_min:  # the count just got there: let go the earlier Slices
                self.parts = [_unmade(part) for part in self.parts]
        self.parts.append((at, comma, count, made))

    def one(self, item: Slice) -> None:
        self.count += 1
        self.parts.append(item)

    def made(self) -> list[Any]:
        if self.stretches and self.count >= self.stretch_min:
            return [Stretch(self.source, self.parts, self.count, self.marks)]
        return _items_of(self.source, self.parts)


# Identity keys of named things, most specific first (a resource has both ``uri`` and ``name``):
# ``normalize`` keys a named list by the first its items all have; ``Slice.ids`` keeps their raw
# values, so a named list's identities need no second parse.
IDENTITY_KEYS = ("uriTemplate", "uri", "name")
_ID_KEYS = IDENTITY_KEYS
_ID_INDEX = {k: i for i, k in enumerate(_ID_KEYS)}
_MISSINGS = (_MISSING,) * len(_ID_KEYS)


def identity_index(field: str) -> int | None:
    """Where ``Slice.ids`` keeps ``field``'s raw value (None: it does not keep it)."""
    return _ID_INDEX.get(field)


# Texts are compared a window at a time: a slice copies, and slicing two 50 MiB texts whole to
# compare them would hold two more copies of each for a moment.
_WINDOW = 1 << 18


def common_prefix(a: str, b: str, window: int = _WINDOW) -> int:
    """The length of the longest common prefix (the index of the first character where ``a`` and
    ``b`` differ): windows (of ``window`` characters) compared at C speed, then the first
    differing window halved with slice comparisons, where a per-character Python loop over a
    megabyte of text costs a tenth of a second."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n:
        hi = min(lo + window, n)
        if a[lo:hi] != b[lo:hi]:
            break
        lo = hi
    else:
        return n
    # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_suffix(a: str, b: str, limit: int, window: int = _WINDOW) -> int:
    """The length of the longest common suffix, at most ``limit`` (compared as ``common_prefix``
    compares)."""
    la, lb = len(a), len(b)
    lo = 0  # the last lo characters agree
    while lo < limit:
        hi = min(lo + window, limit)
        if a[la - hi : la - lo] != b[lb - hi : lb - lo]:
            break
        lo = hi
    else:
        return limit
    # the last hi characters do not agree
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid
    return lo


class _Cursor:
    """Reading one container's members in order, checking the grammar between them."""

    __slots__ = ("text", "obj", "close", "pos", "done", "end")

    def __init__(self, text: str, opener: int) -> None:
        self.text = text
        self.obj = text[opener] == "{"
        self.close = _CLOSE[text[opener]]
        self.pos = _skip_space(text, opener + 1)
        self.done = text[self.pos] == self.close
        self.end = self.pos + 1 if self.done else -1

    def member(self) -> tuple[str | None, int]:
        """The next member's key (None in an array) and where its value starts."""
        text, pos = self.text, self.pos
        if not self.obj:
            return None, pos
        if text[pos] != '"':
            raise Fallback
        key, pos = scanstring(text, pos + 1, True)
        pos = _skip_space(text, pos)
        if text[pos] != ":":
            raise Fallback
        return key, _skip_space(text, pos + 1)

    def after(self, end: int) -> None:
        """Past the separator that follows a value ending at ``end``."""
        text = self.text
        pos = end
        char = text[pos]
        if char in _SPACE:
            pos = _skip_space(text, pos)
            char = text[pos]
        if char == ",":
            pos += 1
            if text[pos] in _SPACE:
                pos = _skip_space(text, pos)
            if text[pos] == self.close:
                raise Fallback  # a trailing comma: not JSON
            self.pos = pos
        elif char == self.close:
            self.done = True
            self.end = pos + 1
        else:
            raise Fallback


def _scan(text: str, at: int) -> tuple[Any, int]:
    try:
        return _SCAN(text, at)
    except StopIteration:
        raise Fallback from None


def _fit(text: str, at: int, limit: int, sizes: Sequence[int]) -> tuple[Any, int] | None:
    """The value at ``at`` and its end, read from windows of ``text`` of ``sizes`` (growing,
    ``_Source.windows``) that end before ``limit``; None when it does not end (with one character
    of lookahead) inside the largest window."""
    for size in sizes:
        hi = min(at + size, limit)
        window = text[at:hi]
        try:
            value, end = _SCAN(window, 0)
        except (StopIteration, ValueError):
            pass
        else:
            # Only a character that can follow a value in JSON proves the value ended in the
            # window: "1." cut from "1.5" reads as 1.
            if end < len(window) and window[end] in _AFTER_VALUE:
                return value, at + end
        if hi == limit:
            return None
    return None


def _ids(value: Any) -> tuple[Any, ...] | None:
    return tuple(map(value.get, _ID_KEYS, _MISSINGS)) if type(value) is dict else None


def _run_values(source: _Source, at: int, limit: int) -> tuple[int, list[Any]] | None:
    """The items of an array in ``source``'s text from ``at`` (an item's start) up to a comma
    before ``limit`` (and within ``run_chars``), parsed with one ``json.loads``, and that comma;
    None when no comma tried ends a run. A comma inside a string or a nested container cannot end
    one: ``"[" + run + "]"`` would leave a string or a container open. Objects in an array are
    tried at "},{" first."""
    text = source.text
    hi = min(at + source.run_chars, limit)
    opener = text[at]
    marks = ("}," + opener, ",") if opener == "{" else ("],[", ",") if opener == "[" else (",",)
    for mark in marks:
        cut = hi
        for _ in range(source.run_tries):
            cut = text.rfind(mark, at, cut)
            if cut < 0:
                break
            comma = cut + mark.index(",")
            if comma + 1 > hi:
                continue
            try:
                items = json.loads("[" + text[at:comma] + "]")
            except (ValueError, RecursionError):
                continue
            if not items:
                return None
            types = set(map(type, items))
            kind = "{" if types == {dict} else "[" if types == {list} else "" if dict in types or list in types else "s"
            if kind:
                source.kinds[at] = (comma, kind)
            return comma, items
    return None


# What a caller makes of the parsed items of each run of shared array items the narrowing reads
# (``normalize.run_names``: the hashes of their names), kept by the run's start: what it needs of
# them later is then not parsed again, and no object per item is kept.
Mark = Callable[[list[Any]], Any]
Marks = dict[int, tuple[int, int, Any]]  # by a run's start: the comma after it, its count, its mark


def _run_counted(
    source: _Source, at: int, limit: int, mark: Mark | None, marks: Marks | None
) -> tuple[int, int, None] | None:
    """A run (``_run_values``) as the narrowing takes it: the comma that ends it and its count,
    no Slices (a ``Stretch`` needs none; the few items of a shorter row are read again); what
    ``mark`` makes of its items goes into ``marks``."""
    got = _run_values(source, at, limit)
    if got is None:
        return None
    comma, items = got
    if mark is not None and marks is not None:
        marks[at] = (comma, len(items), mark(items))
    return comma, len(items), None


def _run(source: _Source, at: int, limit: int) -> list[Slice] | None:
    """The items of a run (``_run_values``) as ``Slice`` objects."""
    got = _run_values(source, at, limit)
    if got is None:
        return None
    comma, items = got
    return [
        Slice(source, at, _ids(v), comma, i, "{" if type(v) is dict else "[" if type(v) is list else "s")
        for i, v in enumerate(items)
    ]


def _skip(text: str, at: int, windows: Sequence[int]) -> int:
    """Where the value at ``at`` ends, checked as JSON, without holding it whole (read from
    ``windows`` first, as ``_fit`` reads)."""
    got = _fit(text, at, len(text), windows)
    if got is not None:
        return got[1]
    if text[at] not in "{[":
        return _scan(text, at)[1]
    cursor = _Cursor(text, at)
    while not cursor.done:
        _, start = cursor.member()
        cursor.after(_skip(text, start, windows))
    return cursor.end


_READ_AHEAD_DEPTH = 32  # containers entered, at most: the narrowing descends no deeper in practice


def long_json_text(value: Any, min_chars: int) -> str | None:
    """The longest string in a JSON value (an answer, parsed) that may be a JSON text worth
    reading ahead: ``min_chars`` or longer (``Limits.read_ahead_chars``), opening with "{" or
    "[". A few hundred values are looked at, at most, the outer first: an answer with a long text
    holds it near the top."""
    best: str | None = None
    todo = [value]
    for looked, node in enumerate(todo):  # grows as it goes: the values a level down come after
        if looked == 512:
            break
        kind = type(node)
        if kind is str:
            if len(node) >= min_chars and node[0] in _CLOSE and (best is None or len(node) > len(best)):
                best = node
        elif kind is dict:
            todo.extend(node.values())
        elif kind is list:
            todo.extend(node[:64])
    return best


class ReadAhead:
    """The runs of array items of one long recorded JSON text, read before the live answer it is
    compared with has arrived (while the server works on it, one ``step`` at a time), as
    ``_run`` reads them: a narrowing of this text against any other takes each run it would read
    with the same window from here, and reads only the others itself: finding where each run of
    a long list ends is most of the work of narrowing one changed leaf in it. Only where runs end
    and how many items they hold is kept (a few numbers per run, not an object per item). Read
    with the sizes of ``limits`` (``Limits.narrow_windows``, ``run_chars``, ``run_tries``): a
    narrowing that reads with others does not take it. Open until ``close``; handed to
    ``skeletons`` of ``text`` (``prepared.Prepared.ahead``)."""

    def __init__(self, text: str, limits: Limits, mark: Mark | None = None) -> None:
        self.text = text
        self.source = _Source(text, limits)
        # Called on the items of each run read, parsed, in the same step: what it makes of them
        # (``normalize.run_names``: the hashes of their names) is kept in ``marks`` by the run's
        # start, and the items are let go.
        self.mark = mark
        self.marks: dict[int, Any] = {}
        # What _run(text, at, len(text)) gave at each position read, as (the comma after its last
        # item, its count) (None: no run there), and those positions in increasing order (the
        # walk goes left to right).
        self.runs: dict[int, tuple[int, int] | None] = {}
        self.starts = array("q")
        # Where each container entered ends (by where it starts), once read to its end.
        self.ends: dict[int, int] = {}
        self._steps: Iterator[Any] | None = self._container(0, 0) if text[:1] in _CLOSE else None

    def step(self) -> bool:
        """Read one more run or member (about a millisecond); False once all is read, or the
        reading stopped at what it cannot read."""
        if self._steps is None:
            return False
        try:
            next(self._steps)
            return True
        except (StopIteration, Fallback, ValueError, RecursionError, IndexError):
            self._steps = None  # what was read stays right: a run depends only on its own bytes
            return False

    def close(self) -> None:
        """Stop reading."""
        self._steps = None

    def run(self, at: int, limit: int) -> tuple[int, int, None] | None:
        """``_run_counted(self.source, at, limit, ...)``, from what was read ahead when it holds
        that run (read with the same window: ``limit`` does not cut it shorter than the text's end
        did; its Slices are not kept: None)."""
        most = at + self.source.run_chars
        if min(most, limit) == min(most, len(self.text)):
            known = self.runs.get(at, _MISSING)
            if known is not _MISSING:
                return None if known is None else (*known, None)  # type: ignore[misc]
        return _run_counted(self.source, at, limit, None, None)

    def next_start(self, at: int) -> int:
        """The first position after ``at`` where a run was read ahead (-1: none)."""
        starts = self.starts
        i = bisect_right(starts, at)
        return starts[i] if i < len(starts) else -1

    def _container(self, c: int, depth: int) -> Generator[None, None, int]:
        """Read the container at ``c`` as the narrowing reads one: an array's items a run at a
        time from its first, a member that is no run read alone, and a member too long for the
        largest window entered; then past its end (``_Cursor.end``)."""
        text, windows = self.text, self.source.windows
        cursor = _Cursor(text, c)
        while not cursor.done:
            at = cursor.pos
            if not cursor.obj:
                run = _run_values(self.source, at, len(text))
                known = None if run is None else (run[0], len(run[1]))
                if run is not None and self.mark is not None:
                    self.marks[at] = self.mark(run[1])
                del run
                self.runs[at] = known
                self.starts.append(at)
                yield
                if known is not None:
                    cursor.after(known[0])
                    continue
            _, start = cursor.member()
            # A container the smallest window does not hold may hold runs: it is entered, as
            # the narrowing enters the one that holds the difference.
            entered = text[start] in "{[" and depth < _READ_AHEAD_DEPTH
            got = _fit(text, start, len(text), windows[:1] if entered else windows)
            if got is not None:
                end = got[1]
            elif entered:
                end = yield from self._container(start, depth + 1)
                self.ends[start] = end
            else:
                end = _skip(text, start, windows)
            yield
            cursor.after(end)
        return cursor.end


class _Closed:
    """A container that closed before the first differing byte (``end``: just past it)."""

    __slots__ = ("end",)

    def __init__(self, end: int) -> None:
        self.end = end


class _Narrowed:
    __slots__ = ("a", "b", "end_a", "end_b")

    def __init__(self, a: Any, b: Any, end_a: int, end_b: int) -> None:
        self.a, self.b, self.end_a, self.end_b = a, b, end_a, end_b


class _Narrower:
    def __init__(self, a: str, b: str, levels: int, limits: Limits, mark: Mark | None, ahead: ReadAhead | None) -> None:
        self.ta, self.tb = a, b
        # a's shared members, and the one run of them kept parsed: this narrowing's alone.
        self.source = _Source(a, limits)
        taken = ahead is not None and ahead.text is a and ahead.source.reads_as(self.source)
        self.ahead = ahead if taken else None
        if ahead is not None and taken:
            self.source.kinds = ahead.source.kinds  # the runs read ahead, learned there
        self.stretch_min = limits.stretch_min
        self.mark = mark
        self.marks: Marks = {}
        self.p = common_prefix(a, b)
        s = common_suffix(a, b, min(len(a), len(b)) - self.p)
        self.qb = len(b) - s  # b's bytes from qb on are a's from qb - shift on
        self.shift = len(b) - len(a)
        self.levels = levels

    def run_at(self, at: int, limit: int) -> tuple[int, int, None] | None:
        """The run of shared items of ``a`` at ``at`` (``_run_counted``), marked."""
        return _run_counted(self.source, at, limit, self.mark, self.marks)

    def level(self, c: int, level: int) -> _Narrowed | _Closed:
        """The container at ``c`` (before the first differing byte, so at ``c`` on both sides):
        its members wholly before the difference are shared (``_before``), b's next members are
        read until one ends where one of a's does, counted from the end (``_b_until_aligned``),
        and from there on both sides share a's members (``_after``)."""
        ca = _Cursor(self.ta, c)
        before = self._before(ca, level)
        if isinstance(before, _Closed):
            return before
        keys, shared, resume, path = before
        rest = _RestOfA(self.source, ca, path)
        cb = _Cursor(self.tb, c)
        if resume >= 0:
            cb.after(resume)
        b_keys, b_values, tail = self._b_until_aligned(ca, cb, rest, path)
        aligned = tail >= 0
        if not aligned:  # b ran to its end: every member of a left is a's alone
            while not ca.done:
                rest.read()
            tail = len(rest.ends)
        a_values = [
            path[1].a if path is not None and rest.starts[j] == path[0] else _scan(self.ta, rest.starts[j])[0]
            for j in range(tail)
        ]
        suffix = self._after(ca, rest, tail)
        end_b = ca.end + self.shift if aligned else cb.end
        head, after = shared.made(), suffix.made()
        if ca.obj:
            suffix_keys = rest.keys[tail:]
            skel_a = _object(keys, head, rest.keys[:tail], a_values, suffix_keys, after)
            skel_b = _object(keys, head, b_keys, b_values, suffix_keys, after)
            return _Narrowed(skel_a, skel_b, ca.end, end_b)
        return _Narrowed(head + a_values + after, head + b_values + after, ca.end, end_b)

    def _before(
        self, ca: _Cursor, level: int
    ) -> tuple[list[str | None], _Shared, int, tuple[int, _Narrowed] | None] | _Closed:
        """The members of the container ``ca`` reads that lie wholly before the difference
        (shared), read up to the member that holds it: their keys, themselves, just past the last
        of them (-1: none), and the member holding the difference read level by level, if it is
        a container that was (its start, and what it makes on both sides). A container that
        closed before the difference: ``_Closed``."""
        ta, p, source = self.ta, self.p, self.source
        windows = source.windows
        obj = ca.obj
        keys: list[str | None] = []
        shared = _Shared(source, not obj, self.marks, self.stretch_min)
        resume = -1
        while not ca.done:
            at = ca.pos
            if at >= p:
                break
            if not obj and p - at > windows[0]:
                run = self.run_at(at, p) if self.ahead is None else self.ahead.run(at, p)
                if run is not None:
                    shared.run(at, *run)
                    resume = run[0]  # the comma after the run's last item
                    ca.after(resume)
                    continue
            key, start = ca.member()
            if start >= p:
                ca.pos = at
                break
            if self.ahead is not None and self.ahead.ends.get(start, -1) >= p:
                # A container read ahead to its end at or past p: no window that ends before p
                # holds it, so it is entered without trying them (three scans of up to 256 KiB).
                got = None
            else:
                got = _fit(ta, start, p, windows)
            if got is not None:
                value, end = got
            elif ta[start] in "{[" and level + 1 < self.levels:
                inner = self.level(start, level + 1)
                if isinstance(inner, _Narrowed):
                    ca.pos = at
                    return keys, shared, resume, (start, inner)
                value, end = None, inner.end
            else:
                value, end = _scan(ta, start)
            if end >= p:
                ca.pos = at
                break
            keys.append(key)
            shared.one(Slice(source, start, None if obj else _ids(value)))
            resume = end
            ca.after(end)
            if ca.done and ca.end <= p:
                return _Closed(ca.end)
        return keys, shared, resume, None

    def _b_until_aligned(
        self, ca: _Cursor, cb: _Cursor, rest: _RestOfA, path: tuple[int, _Narrowed] | None
    ) -> tuple[list[str | None], list[Any], int]:
        """b's members after the shared ones, parsed, until one ends where one of a's does,
        counted from the end (a's read as far as needed): from there on both sides read the same
        bytes. Their keys, values, and how many of a's members ``rest`` holds before that point
        (-1: b ran to its end first)."""
        b_keys: list[str | None] = []
        b_values: list[Any] = []
        i = 0
        while not cb.done:
            key, start = cb.member()
            if path is not None and start == path[0] and not b_values:
                value, end = path[1].b, path[1].end_b
            else:
                value, end = _scan(self.tb, start)
            b_keys.append(key)
            b_values.append(value)
            if end >= self.qb:
                target = end - self.shift
                ends = rest.ends
                while not ca.done and (not ends or ends[-1] < target):
                    rest.read()
                while i < len(ends) and ends[i] < target:
                    i += 1
                if i < len(ends) and ends[i] == target:
                    return b_keys, b_values, i + 1
            cb.after(end)
        return b_keys, b_values, -1

    def _after(self, ca: _Cursor, rest: _RestOfA, tail: int) -> _Shared:
        """The shared members after the difference: those of ``rest`` from ``tail`` on, then the
        rest of the container ``ca`` reads (an array's in runs, taken from the read-ahead where it
        holds them)."""
        ta, source = self.ta, self.source
        suffix = _Shared(source, not ca.obj, self.marks, self.stretch_min)
        for j in range(tail, len(rest.starts)):
            suffix.one(Slice(source, rest.starts[j], rest.ids[j]))
        ahead = self.ahead
        resync = -1  # where the runs read ahead start again, reached by reading members alone
        while not ca.done:
            if not ca.obj and ca.pos >= resync:
                if ahead is None:
                    run = self.run_at(ca.pos, len(ta))
                elif ca.pos in ahead.runs:
                    run = ahead.run(ca.pos, len(ta))
                else:
                    # The difference ended mid-run: the items up to the next run read ahead
                    # (within a run's length) are read as one run ending there (one parse, not
                    # a scan per item; alone if no comma before it ends one), and from there
                    # the runs are taken.
                    resync = ahead.next_start(ca.pos)
                    near = 0 <= resync - ca.pos <= source.run_chars
                    run = self.run_at(ca.pos, resync + 1 if near else len(ta))
                if run is not None:
                    suffix.run(ca.pos, *run)
                    ca.after(run[0])
                    continue
            rest.read()
            suffix.one(Slice(source, rest.starts[-1], rest.ids[-1]))
        return suffix


class _RestOfA:
    """a's members after the shared ones, read as b's reading needs them: their keys, where each
    starts and ends, and the identities of the objects of an array."""

    __slots__ = ("text", "windows", "cursor", "path", "keys", "starts", "ends", "ids")

    def __init__(self, source: _Source, cursor: _Cursor, path: tuple[int, _Narrowed] | None) -> None:
        self.text = source.text
        self.windows = source.windows
        self.cursor = cursor
        self.path = path  # the member holding the difference, read already
        self.keys: list[str | None] = []
        self.starts = array("q")
        self.ends = array("q")
        self.ids: list[tuple[Any, ...] | None] = []

    def read(self) -> None:
        """The next member."""
        ca = self.cursor
        key, start = ca.member()
        ids = None
        if self.path is not None and start == self.path[0]:
            end = self.path[1].end_a
        else:
            got = _fit(self.text, start, len(self.text), self.windows)
            if got is not None:
                end = got[1]
                ids = None if ca.obj else _ids(got[0])
            else:
                end = _skip(self.text, start, self.windows)
        self.keys.append(key)
        self.starts.append(start)
        self.ends.append(end)
        self.ids.append(ids)
        ca.after(end)


def _object(*parts: list[Any]) -> dict[str, Any]:
    keys1, values1, keys2, values2, keys3, values3 = parts
    out: dict[str, Any] = {}
    for keys, values in ((keys1, values1), (keys2, values2), (keys3, values3)):
        for k, v in zip(keys, values, strict=True):
            if k in out:
                raise Fallback  # a repeated key: json keeps the last one; leave that to it
            out[k] = v  # type: ignore[index]
    return out


def skeletons(
    a: str, b: str, levels: int, limits: Limits, mark: Mark | None = None, ahead: ReadAhead | None = None
) -> tuple[Any, Any] | None:
    """Two differing JSON texts (each an object or an array, nothing around it) as skeletons that
    share a ``Slice`` wherever their bytes agree, descending at most ``levels`` containers; None
    when either is not such a text or the narrowing cannot settle them. ``limits``: the sizes it
    reads in (``Limits.narrow_windows``, ``run_chars``, ``run_tries``), and from how many shared
    array items in a row they are one ``Stretch`` (``stretch_min``); ``mark``: what to keep of each
    run of shared items read (``Stretch.mark_of``); ``ahead``: what was read of ``a`` ahead
    (``ReadAhead``, with the same sizes), taken in place of reading those runs again."""
    if not a or not b or a[0] not in _CLOSE or a[-1] != _CLOSE[a[0]] or b[-1] != _CLOSE.get(b[0]):
        return None
    narrower = _Narrower(a, b, levels, limits, mark, ahead)
    if narrower.p == 0:
        return None
    try:
        top = narrower.level(0, 0)
    except (Fallback, ValueError, RecursionError, IndexError):
        return None
    if not isinstance(top, _Narrowed) or top.end_a != len(a) or top.end_b != len(b):
        return None
    return top.a, top.b
