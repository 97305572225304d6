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

import copy
import datetime as dt
import hashlib
import json
from array import array
from collections.abc import Iterator, Sequence
from functools import lru_cache
from operator import itemgetter, methodcaller
from typing import TYPE_CHECKING, Any, Protocol

from mcp_replay_action.compare.masks import (
    JSON_STARTS,
    OPAQUE,
    TIMESTAMP,
    decode_base64_text,
    json_text_of,
    mask_text,
    none_maybe_masked,
    plain_string,
    plain_strings,
    time_key,
    volatile_epoch,
)
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.minted import is_minted_key
from mcp_replay_action.values.narrow import (
    IDENTITY_KEYS,
    MISSING,
    Slice,
    Stretch,
    identity_index,
)
from mcp_replay_action.values.paths import Token, parse_path

if TYPE_CHECKING:
    from mcp_replay_action.compare.options import RuleUse

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
        normalizer: Normalizer,
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


class Aligned(dict):  # type: ignore[type-arg]
    """A list lined up against its counterpart: slot -> item, ``index`` maps slot -> position."""

    __slots__ = ("index",)

    def __init__(self) -> None:
        super().__init__()
        self.index: dict[int, int] = {}


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

DROP = object()  # a node an ignore rule removed
State = tuple[tuple[int, int], ...]  # (pattern index, next token position) pairs still alive


class Normalizer:
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
        # The rules that removed something: the run's ``RuleUse`` (``normalizer_for``), else
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
            if key is not None and (is_minted_key(key) or key in BASE64_KEYS):
                return self.keyed_string(value, states, key, depth)
            return self.string(value, states, depth)
        if kind is dict:
            return _digest(value) if depth > MAX_DEPTH else self.mapping(value, states, depth)
        if kind is list:
            return _digest(value) if depth > MAX_DEPTH else self.sequence(value, states, depth)
        if kind is bool or value is None:
            return value
        if kind is int:
            if key is not None and value >= 1_000_000_000 and (is_minted_key(key) or self.epoch(value, key)):
                return OPAQUE if is_minted_key(key) else TIMESTAMP
            return OPAQUE if key is not None and is_minted_key(key) else value
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
        return time_key(key) and volatile_epoch(value, self.days)

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
            if child is not DROP:
                out[k] = child
        return out

    def sequence(self, value: list[Any], states: State, depth: int) -> Any:
        items: list[Any] = []
        if holds_stretch(value):
            value = expand_stretches(value)
        for index, item in enumerate(value):
            if states:
                child_states = self._step_item(states, index, item)
                if child_states is None:
                    continue
            else:
                child_states = states
            child = self.value(item, child_states, None, depth + 1)
            if child is not DROP:
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
            if type(identity_of(items[0], field)) is not str:
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
        """``identity_of(item, field)`` of every item. A long list of records shared by both sides
        is mostly ``Same`` items under no ignore rule whose identity is a plain string: what
        ``value`` makes of it is ``plain_string``, found here without the walk down to it (for
        all of them at once: ``plain_strings``)."""
        if self.ignore_keys or is_minted_key(field) or field in BASE64_KEYS:
            return [identity_of(item, field) for item in items]
        names: list[Any] = []
        plain: list[int] = []  # where names holds a raw string that plain_string settles
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
                if type(value) is str and (not value or value[0] not in JSON_STARTS):
                    plain.append(len(names))  # string(): no JSON in it
                    names.append(value)
                    continue
            names.append(identity_of(item, field))
        if plain:
            for i, name in zip(plain, plain_strings([names[i] for i in plain], self.days), strict=True):
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
        exact = bool(self.ignore_keys) or is_minted_key(field) or field in BASE64_KEYS
        names: list[Any] = []
        plain: list[int] = []  # where names holds a raw string that plain_string settles
        for value in values:
            if type(value) is not dict:
                return None
            name = value.get(field)
            if not exact and type(name) is str and (not name or name[0] not in JSON_STARTS):
                plain.append(len(names))
            else:
                name = self.identity(value, field, (), depth)
                if type(name) is not str:
                    return None
            names.append(name)
        if len(plain) == len(names):
            return plain_strings(names, self.days)
        for i, name in zip(plain, plain_strings([names[i] for i in plain], self.days), strict=True):
            names[i] = name
        return names

    def keyed_string(self, value: str, states: State, key: str, depth: int) -> Any:
        if is_minted_key(key):
            return OPAQUE
        text = decode_base64_text(value)
        if text is not None:
            return self.box(Base64Text, text, states, depth)
        return value  # a binary payload: compared byte for byte, never masked

    def string(self, value: str, states: State, depth: int) -> Any:
        parsed = json_text_of(value)
        if parsed is not None:
            return self.box(JsonText, parsed, states, depth)
        return plain_string(value, self.days)

    def box(self, cls: type[JsonText] | type[Base64Text], inner: Any, states: State, depth: int) -> Any:
        inner_states = self._step_box(states, cls.tag) if states else states
        if inner_states is None:
            return DROP
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
        return None if value is DROP else value


def identity_of(item: Any, field: str) -> Any:
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

    def __init__(self, normalizer: Normalizer, raw: Any, states: State, key: str | None, depth: int) -> None:
        self._normalizer = normalizer
        self.raw = raw
        self.states = states
        self.key = key
        self.depth = depth
        self._value: Any = DROP
        # The identity last normalised (a named list's items are asked for one field, by both
        # sides): two slots, not a dict per item, in a list of 400,000 records.
        self._id_field: str | None = None
        self._id_name: Any = None

    def value(self) -> Any:
        """The normalised subtree (computed once)."""
        if self._value is DROP:
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
        if self._value is not DROP:
            return self._value.get(field)
        if self._id_field != field:
            self._id_name = self._normalizer.identity(self.raw, field, self.states, self.depth)
            self._id_field = field
        return self._id_name

    def __repr__(self) -> str:
        # What canonical() writes for it: the same object sits at the same place on both sides.
        return "<same>"


def holds_stretch(items: list[Any]) -> bool:
    """Whether a skeleton list holds a ``Stretch`` (at its start or its end, the only places one
    can be)."""
    return bool(items) and (type(items[0]) is Stretch or type(items[-1]) is Stretch)


def expand_stretches(items: list[Any]) -> list[Any]:
    """A skeleton list with each ``Stretch`` read item by item (the same Slices on both sides)."""
    if not holds_stretch(items):
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
) -> Normalizer:
    patterns = tuple(parse_path(p) for p in ignore_paths)
    return Normalizer(patterns, frozenset(ignore_keys), allow_reorder, days, ignore_paths)


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


def normalizer_for(options: NormalizeRules | None) -> Normalizer:
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
            and set(map(itemgetter(0), filter(None, names))).isdisjoint(JSON_STARTS)
            and none_maybe_masked(names)
        ):
            out[field] = array("q", map(hash, names))
    return out


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
    normalizer = normalizer_for(options)
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
            if key is not None and (is_minted_key(key) or key in BASE64_KEYS):
                return is_minted_key(key)  # both <opaque>; a base64 payload is not known
            if len(a) >= _ALIKE_TEXT or len(b) >= _ALIKE_TEXT:
                return False
            parsed_a, parsed_b = json_text_of(a), json_text_of(b)
            if parsed_a is None and parsed_b is None:
                return plain_string(a, self.days) == plain_string(b, self.days)  # as ``string`` makes each
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
    normalizer = normalizer_for(options)
    result = normalizer.value(obj, normalizer.start, None, 0)
    return None if result is DROP else result


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
    if kind is type(b) and kind in WRITTEN_AS_EQUAL:
        return bool(a == b)
    return canonical(a) == canonical(b)


# Types whose equal values json.dumps writes alike, and unequal ones differently (not float: NaN).
WRITTEN_AS_EQUAL = frozenset({str, int, bool, type(None)})
