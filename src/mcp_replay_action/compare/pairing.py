"""Pairing: two answers normalised side by side (``normalize_pair``), with every subtree they
share at the same place left as one ``Same`` object on both sides, so ``compare`` walks only
where they differ. A long text that differs is narrowed first (``values/narrow.py``: only the
containers around the bytes that differ are parsed), and two long lists share their equal runs as
``Stretch`` objects that are never read. ``normalize.py`` holds the walk both sides share; this
module decides, pair by pair, what may be left out of it.
"""

from __future__ import annotations

import marshal
from array import array
from itertools import compress
from operator import is_not
from typing import TYPE_CHECKING, Any

from mcp_replay_action.compare.masks import json_text_of, mask_text
from mcp_replay_action.compare.normalize import (
    BASE64_KEYS,
    DOCUMENT_KEY,
    DROP,
    MAX_DEPTH,
    JsonText,
    Keyed,
    Normalizer,
    NormalizeRules,
    PartKeyed,
    Same,
    State,
    expand_stretches,
    holds_stretch,
    identity_of,
    is_document,
    loosely_equal,
    materialize,
    normalizer_for,
    run_names,
)
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.minted import is_minted_key
from mcp_replay_action.values.narrow import IDENTITY_KEYS, Slice, Stretch, skeletons

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared

class _Pairer:
    """One ``normalize_pair`` call: the walk."""

    def __init__(self, normalizer: Normalizer, limits: Limits, prepared: Prepared | None = None) -> None:
        self.n = normalizer
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
                if key != "required" and strictly_equal(a, b):
                    same = Same(n, a, states, key, depth)
                    return same, same
                if kind is dict:
                    return self.mapping(a, b, states, depth)
                return self.sequence(a, b, states, key, depth)
            if kind is str and (key is None or not (is_minted_key(key) or key in BASE64_KEYS)):
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
                        return DROP, DROP
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
            return DROP, DROP
        in_a, in_b = self.pair(both[0], both[1], inner, None, depth + 1)
        return JsonText({"{json}": in_a}), JsonText({"{json}": in_b})

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
            if child is not DROP:
                out[k] = child
        return out

    def sequence(self, a: list[Any], b: list[Any], states: State, key: str | None, depth: int) -> tuple[Any, Any]:
        if holds_stretch(a) or holds_stretch(b):
            if not states and depth < MAX_DEPTH:
                done = self.stretched(a, b, depth)
                if done is not None:
                    return done
            a, b = expand_stretches(a), expand_stretches(b)
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
                if items_a[i] is not items_b[j] and identity_of(items_a[i], field) != identity_of(items_b[j], field)
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
            x = a[index] if index < len(a) else DROP
            y = b[index] if index < len(b) else DROP
            sx: State | None = states
            sy: State | None = states
            if states:
                sx = n._step_item(states, index, x) if x is not DROP else None
                sy = n._step_item(states, index, y) if y is not DROP else None
            if x is not DROP and y is not DROP and sx is not None and sx == sy:
                if x is y and type(x) is Slice and x.kind in "{[" and depth < MAX_DEPTH:
                    same = Same(n, x, sx, None, depth + 1)  # what pair() makes of it, inline
                    items_a.append(same)
                    items_b.append(same)
                    continue
                kind = type(x)
                if (kind is dict or kind is list) and kind is type(y) and depth < MAX_DEPTH and strictly_equal(x, y):
                    # What pair() makes of an equal item, without the call: a long list of
                    # equal records is mostly this.
                    same = Same(n, x, sx, None, depth + 1)
                    items_a.append(same)
                    items_b.append(same)
                    continue
                nx, ny = self.pair(x, y, sx, None, depth + 1)
                if nx is not DROP and ny is not DROP and nx is not ny:
                    paired.append((len(items_a), len(items_b)))
            else:
                nx = n.value(x, sx, None, depth + 1) if x is not DROP and sx is not None else DROP
                ny = n.value(y, sy, None, depth + 1) if y is not DROP and sy is not None else DROP
            if nx is not DROP:
                items_a.append(nx)
            if ny is not DROP:
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
        ``Slice`` on both sides, or subtrees strictly equal, under the same ignore rules at
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
            elif (type(x) is dict or type(x) is list) and type(x) is type(y) and strictly_equal(x, y):
                tail.append(Same(n, x, at, None, depth))
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
        if holds_stretch(mid_a) or holds_stretch(mid_b):
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
            if x is not y and identity_of(x, field) != identity_of(y, field):
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
        as_read = not n.ignore_keys and not is_minted_key(field) and field not in BASE64_KEYS
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
            if type(identity_of(first, earlier)) is str:
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
            if type(name) is not str or name != identity_of(items_a[j], field):
                return n.keyed(items_b)
            names.append(name)
        keyed_b = Keyed(field, keyed_a)
        for j, name in zip(moved, names, strict=True):
            keyed_b[name] = items_b[j]
        return keyed_b

_UNSURE = object()  # stretch_hashes: two names of the stretches have one hash


def _named(items: list[Any]) -> bool:
    """Whether the first item has a string under an identity key: unless it has, ``keyed``
    names no list of these items, normalised whole or not (it reads the first item first)."""
    if not items:
        return False
    first = items[0]
    if type(first) is not dict and not (type(first) is Same and first.is_dict):
        return False
    return any(type(identity_of(first, field)) is str for field in IDENTITY_KEYS)


def normalize_pair(
    a: Any, b: Any, options: NormalizeRules | None = None, prepared: Prepared | None = None
) -> tuple[Any, Any]:
    """``normalize(a, options), normalize(b, options)``, with every subtree the two share at the
    same place left as one ``Same`` object on both sides (see above). Comparing the pair finds
    exactly the differences comparing the two full normal forms finds; ``materialize`` turns it
    into those forms."""
    normalizer = normalizer_for(options)
    pairer = _Pairer(normalizer, options.limits if options is not None else Limits.from_env(), prepared)
    na, nb = pairer.pair(a, b, normalizer.start, None, 0)
    return (None if na is DROP else na), (None if nb is DROP else nb)


def strictly_equal(a: Any, b: Any) -> bool:
    """Whether two parsed subtrees are equal beyond ``==`` (which says True == 1 and 1 == 1.0,
    where normalising tells them apart), so one ``Same`` may stand for both: ``==`` rejects nearly
    every differing pair at C speed, and marshal writes every type and every float bit, so equal
    bytes are strictly equal values. Key order counts (a pair in another order is walked into,
    as any unequal pair)."""
    try:
        return loosely_equal(a, b) and marshal.dumps(a, 2) == marshal.dumps(b, 2)
    except (ValueError, TypeError):
        return False  # a value marshal does not write: walked into
