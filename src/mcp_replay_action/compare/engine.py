"""Compare a recorded JSON-RPC response with a live one and say what changed, how, and how badly.

``compare(recorded, live, options)`` normalises both sides (``normalize.py``: masks, JSON in
text, base64 text, named lists), takes a fast exit when they are equal, and otherwise lines up
lists, runs DeepDiff and turns every difference into a ``Finding`` with a *kind* and a *class*.

Kinds (worst first): ``missing-response`` (no live response), ``error-status-change`` (a result
became a JSON-RPC error or the reverse, or a tool result's ``isError`` flipped),
``structure-change`` (a key, list item or named item added or removed, or a type changed),
``ordering-change`` (the same items in a different order; a match under ``allow_reorder``),
``value-change`` (a leaf differs, including an error code).

Classes (``breaking``, ``additive``, ``cosmetic``) come from one table, ``classes.py`` (shown in
docs/classes.md): this module decides which row of it a difference meets (``classes.finding``),
and every finding names its row (``Finding.rule``). Two places here prepare for it: tool schemas
spelled another way that accept the same values (``schema_equal.py``) are settled as one
cosmetic finding before the differ sees them, and one change the official Python SDK carries
twice (a dict as ``structuredContent`` and as JSON text in ``content[i].text``) is one finding
that names the other place (``Finding.also``). Only ``status_for`` decides pass/fail from the
classes: cosmetic findings never fail.

Finding paths use the notation ``paths.py`` documents (the one ``--ignore-path`` accepts):
``$.result.tools[name=add].inputSchema.required``.
The envelope's ``jsonrpc`` and ``id`` are never compared; ``id`` keys anywhere else are.
"""

from __future__ import annotations

import difflib
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import is_not
from typing import Any

from mcp_replay_action.compare.classes import finding as _classed
from mcp_replay_action.compare.flips import (
    body_of,
    drop_false_is_error,
    is_error_result,
    result_of,
    rpc_error_flip,
    tool_error_flip,
)
from mcp_replay_action.compare.hints import HINT_DEFAULTS, hint_rule, settle_hints
from mcp_replay_action.compare.listing import (
    description_rule,
    prompt_argument_rule,
    prompt_required_rule,
    required_in,
)
from mcp_replay_action.compare.matchers import unchanged
from mcp_replay_action.compare.normalize import (
    BOX_TYPES,
    WRITTEN_AS_EQUAL,
    Aligned,
    Base64Text,
    JsonText,
    Keyed,
    Same,
    canonical,
    is_document,
    loosely_equal,
    materialize,
    normalized_alike,
    same_canonical,
)
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.compare.pairing import normalize_pair
from mcp_replay_action.compare.render import (
    BRIEF_CAP,
    brief,
    quoted,
    render,
)
from mcp_replay_action.compare.schema_equal import (
    SCHEMA_LISTS,
    SCHEMA_MAPS,
    SUBSCHEMA_KEYS,
    is_property_name,
    validation_form,
    validation_keys,
)
from mcp_replay_action.compare.text_change import text_changed
from mcp_replay_action.compare.twins import merge_twins
from mcp_replay_action.host.gcpause import paused
from mcp_replay_action.model.results import CLASS_ORDER, KIND_ORDER, Finding, Status
from mcp_replay_action.values.paths import box_segment, ident_segment, index_segment, key_segment, path_order
from mcp_replay_action.values.prepared import Prepared

MAX_FINDINGS = 50  # per interaction; the rest are summed up in one last finding

# Keys whose contents are what a tool, resource or prompt returned: a "title" in there is data.
_PAYLOAD_KEYS = frozenset({"content", "structuredContent", "contents", "messages", "error"})
_COSMETIC_KEYS = frozenset({"description", "title"})
_NOUNS = {"tools": "tool", "prompts": "prompt", "resources": "resource", "resourceTemplates": "resource template"}


def status_for(findings: Sequence[Finding]) -> Status:
    """The verdict for one interaction: ``missing`` for a missing response, ``fail`` for any
    non-cosmetic finding, else ``pass``."""
    if any(f.kind == "missing-response" for f in findings):
        return "missing"
    if any(f.cls != "cosmetic" for f in findings):
        return "fail"
    return "pass"


def compare(
    recorded: dict[str, Any] | None,
    live: dict[str, Any] | None,
    options: CompareOptions | None = None,
    prepared: Prepared | None = None,
) -> tuple[Finding, ...]:
    """The differences between a recorded and a live JSON-RPC response, worst first.

    ``live`` None means no response arrived (one ``missing-response`` finding). Empty when the two
    match after normalisation. ``prepared``: what the replay prepared for this answer (what was
    read ahead of the recording's long text, ``prepared.py``); the findings are the same without.
    """
    if unchanged(recorded, live):
        return ()  # the fastest exit
    return differences(recorded, live, options, prepared)


def differences(
    recorded: dict[str, Any] | None,
    live: dict[str, Any] | None,
    options: CompareOptions | None = None,
    prepared: Prepared | None = None,
) -> tuple[Finding, ...]:
    """``compare`` of two answers that ``matchers.unchanged`` already told apart (the replay asks
    it before importing this module): the same findings, without asking it again."""
    options = options or CompareOptions()
    if live is None:
        if recorded is None:
            return ()
        return (_classed("missing-response", "missing-response", "$", "no response", before=render(recorded)),)
    if recorded is None:
        return (
            _classed(
                "response-appeared",
                "structure-change",
                "$",
                "a response arrived where the recording has none",
                after=render(live),
            ),
        )
    flip = rpc_error_flip(recorded, live)
    if flip is not None:
        return (flip,)
    raw_before, raw_after = body_of(recorded), body_of(live)
    flip = tool_error_flip(raw_before, raw_after)
    if flip is not None:
        return (flip,)  # on the raw answers: the live error text as the server wrote it, unmasked
    deadline = None if options.budget is None else time.monotonic() + options.budget
    try:
        if normalized_alike(raw_before, raw_after, options):
            return ()  # what differs is masked alike on both sides (a fresh timestamp, a UUID)
        _in_time(deadline)
        # Both sides at once: what they share is left out as one ``Same`` object on each side.
        with paused():
            pair = normalize_pair(raw_before, raw_after, options, prepared)
            _in_time(deadline)
            return compare_normal(*pair, options, deadline, prepared)
    except _OverBudget:
        return (
            Finding(
                "value-change",
                "breaking",
                "$",
                f"not compared: the comparison did not finish in the request's time ({options.budget:g} s);"
                " the answers differ",
                before=render(recorded),
                after=render(live),
            ),
        )


class _OverBudget(Exception):
    """A comparison went past ``CompareOptions.budget``."""


def _in_time(deadline: float | None) -> None:
    """Stop the comparison (``_OverBudget``) when its time is up."""
    if deadline is not None and time.monotonic() > deadline:
        raise _OverBudget


def compare_normal(
    before: Any, after: Any, options: CompareOptions, deadline: float | None = None, prepared: Prepared | None = None
) -> tuple[Finding, ...]:
    """The differences between two normalised bodies (``normalize`` each, or ``normalize_pair``
    both); ``before`` and ``after`` may be changed in place."""
    drop_false_is_error(before)
    drop_false_is_error(after)
    settle_hints(before, after)  # a hint left to its default and spelled out with it are equal
    if same_canonical(before, after):
        return ()
    flip = tool_error_flip(before, after)
    if flip is not None:
        return (flip,)
    settled = _settle_schemas(before, after)
    if settled and same_canonical(before, after):
        return tuple(settled)
    _in_time(deadline)
    return _Differ(options, settled=settled, error_result=is_error_result(before), prepared=prepared).run(
        before, after
    )


# -- tool schemas spelled another way -----------------------------------------------------------
#
# Before the differ runs, each tool's inputSchema and outputSchema is walked on both sides at once
# (subschema by subschema: properties, items, anyOf, ...). Where a schema's own validation
# keywords differ in spelling but not in what they accept (``schema_equal.validation_form``), the
# live side takes the recorded keywords and one cosmetic finding says what was rewritten; what
# really changed is left to the differ, as before.


def _settle_schemas(before: Any, after: Any) -> list[Finding]:
    """Settle equivalent rewrites in the tool schemas of two normalised answers (``after`` is
    changed in place); the cosmetic findings that say so."""
    tools_a, tools_b = _tools(before), _tools(after)
    if tools_a is None or tools_b is None or tools_a.key != tools_b.key:
        return []
    found: list[Finding] = []
    for name, tool_a in tools_a.items():
        tool_b = tools_b.get(name)
        if type(tool_a) is not dict or type(tool_b) is not dict:
            continue  # one shared ``Same`` (the very same tool), or not a tool definition
        for key in ("inputSchema", "outputSchema"):
            a, b = tool_a.get(key), tool_b.get(key)
            if type(a) is dict and type(b) is dict:
                path = "$.result" + key_segment("tools") + ident_segment(tools_a.key, name) + key_segment(key)
                _settle_schema(a, b, path, found, 0)
    return found


def _tools(body: Any) -> Keyed | None:
    result = result_of(body)
    tools = result.get("tools") if isinstance(result, dict) else None
    return tools if isinstance(tools, Keyed) else None


def _settle_schema(a: dict[str, Any], b: dict[str, Any], path: str, found: list[Finding], depth: int) -> None:
    if depth > 32 or same_canonical(a, b):
        return
    for key in SUBSCHEMA_KEYS & a.keys() & b.keys():
        sub_a, sub_b = a[key], b[key]
        if key in SCHEMA_MAPS and type(sub_a) is dict and type(sub_b) is dict:
            for name in sub_a.keys() & sub_b.keys():
                if type(sub_a[name]) is dict and type(sub_b[name]) is dict:
                    where = path + key_segment(key) + key_segment(name)
                    _settle_schema(sub_a[name], sub_b[name], where, found, depth + 1)
        elif key in SCHEMA_LISTS and type(sub_a) is list and type(sub_b) is list and len(sub_a) == len(sub_b):
            for i, (x, y) in enumerate(zip(sub_a, sub_b, strict=True)):
                if type(x) is dict and type(y) is dict:
                    _settle_schema(x, y, path + key_segment(key) + index_segment(i), found, depth + 1)
        elif type(sub_a) is dict and type(sub_b) is dict:
            _settle_schema(sub_a, sub_b, path + key_segment(key), found, depth + 1)
    own_a, own_b = validation_keys(a, b), validation_keys(b, a)
    was = {k: a[k] for k in own_a}
    now = {k: b[k] for k in own_b}
    if same_canonical(was, now) or validation_form(materialize(was)) != validation_form(materialize(now)):
        return
    for k in own_b:
        del b[k]
    b.update(was)  # the recorded spelling: nothing is left here for the differ to find
    gone = {k: v for k, v in was.items() if k not in now or not same_canonical(v, now[k])}
    came = {k: v for k, v in now.items() if k not in was or not same_canonical(v, was[k])}
    message = f"the same schema spelled another way: {brief(gone)} -> {brief(came)}"
    found.append(
        _classed("schema-equivalent", "structure-change", path, message, before=render(gone), after=render(came))
    )


_MAPPING_TYPES = frozenset({dict, Keyed, JsonText, Base64Text, Aligned})


def _written_apart(path: str, a: Any, b: Any) -> Finding | None:
    """Two scalars ``==`` takes as equal that are written apart (``True`` and ``1``, ``1e16`` and
    ``10000000000000000``): a type change, a changed value, or None when they are written alike."""
    if _json_type(a) != _json_type(b):
        return _type_change(path, a, b)
    if canonical(a) != canonical(b):
        message = f"value changed: {brief(a)} -> {brief(b)}"
        return _classed("value-changed", "value-change", path, message, before=render(a), after=render(b))
    return None


def _type_change(path: str, a: Any, b: Any) -> Finding:
    """A value whose JSON type changed, both sides in their JSON spelling (``2 -> "2"``)."""
    message = f"type changed from {_json_type(a)} to {_json_type(b)}: {brief(a)} -> {brief(b)}"
    return _classed("type-changed", "structure-change", path, message, before=render(a), after=render(b))


def _json_type(value: Any) -> str:
    if isinstance(value, JsonText):
        return "JSON text"
    if isinstance(value, Base64Text):
        return "base64 text"
    if isinstance(value, dict) and not isinstance(value, (Keyed, Aligned)):
        return "object"
    if isinstance(value, (list, Keyed, Aligned)):
        return "array"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if value is None:
        return "null"
    return "string" if isinstance(value, str) else type(value).__name__


def _segment(container: Any, param: Any) -> str:
    if isinstance(container, Keyed):
        return ident_segment(container.key, param)
    if isinstance(container, Aligned):
        return index_segment(container.index.get(param, param))
    if isinstance(container, BOX_TYPES):
        return box_segment(container.tag)
    if isinstance(container, list):
        return index_segment(param)
    return key_segment(param)


@dataclass(frozen=True)
class _Step:
    """One step of a path: the container stepped through and the key, index or identity taken."""

    container: Any
    param: Any

    @property
    def key(self) -> str | None:
        """The dict key taken, if this step went through a plain object."""
        if isinstance(self.container, (Keyed, Aligned, list, *BOX_TYPES)):
            return None
        return str(self.param)


def _locate(root: Any, params: Iterable[Any]) -> tuple[str, list[_Step]]:
    """The rendered path of DeepDiff's ``params`` in ``root``, and the steps taken."""
    steps: list[_Step] = []
    parts = ["$"]
    node = root
    for param in params:
        steps.append(_Step(node, param))
        parts.append(_segment(node, param))
        try:
            node = node[param]
        except (KeyError, IndexError, TypeError):
            node = None
    return "".join(parts), steps


# -- one changed leaf, without DeepDiff ---------------------------------------------------------
#
# Most failing answers differ in one leaf. DeepDiff finds it, but importing DeepDiff costs
# ~130 ms (and pydantic when installed). ``one_leaf`` finds the same one difference, reported as
# DeepDiff reports it, where that is certain: both aligned bodies of the same shape (the same
# container types, the same keys, lists of one length), exactly one pair of scalars differing.
# A list whose items are all scalars on both sides is left to DeepDiff, which lines those up by
# content (difflib) rather than by index; so is anything else. Keys starting with "__" (a
# GraphQL ``__typename``) are data like any other: DeepDiff is told not to skip them either.

_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})
_BASIC_TYPES = (str, bytes, int, float, complex, bool, type(None))  # what DeepDiff aligns by content


def one_leaf(a: Any, b: Any) -> tuple[str, tuple[Any, ...], Any, Any] | None:
    """The one leaf where two aligned bodies differ, as DeepDiff would report it (report type,
    path as a list, before, after); None when they differ in anything else."""
    found: list[tuple[str, tuple[Any, ...], Any, Any]] = []
    try:
        if not _leaves(a, b, [], found) or len(found) != 1:
            return None
    except RecursionError:
        return None
    return found[0]


def _leaves(x: Any, y: Any, path: list[Any], found: list[tuple[str, tuple[Any, ...], Any, Any]]) -> bool:
    """Walk ``x`` and ``y`` together, noting each differing pair of scalars in ``found``; False
    as soon as they differ in another way (or in a second leaf)."""
    if x is y:
        return True
    tx, ty = type(x), type(y)
    if tx in _LEAF_TYPES and ty in _LEAF_TYPES:
        if tx is ty and x == y:
            return True
        found.append(("values_changed" if tx is ty else "type_changes", tuple(path), x, y))
        return len(found) == 1
    if tx is not ty:
        return False
    if tx in _MAPPING_TYPES:
        if x.keys() != y.keys():
            return False
        for k in x:
            path.append(k)
            if not _leaves(x[k], y[k], path, found):
                return False
            path.pop()
        return True
    if tx is list:
        if len(x) != len(y) or (_all_basic(x) and _all_basic(y)):
            return False
        for i in compress(range(len(x)), map(is_not, x, y)):  # the very object on both sides holds no leaf
            path.append(i)
            if not _leaves(x[i], y[i], path, found):
                return False
            path.pop()
        return True
    return False


def _all_basic(items: list[Any]) -> bool:
    return all(isinstance(item, _BASIC_TYPES) for item in items)


def _equal_ends(a: list[Any], b: list[Any]) -> tuple[int, int]:
    """How many items two lists share at their start and at their end (not overlapping): the
    very object on both sides (skipped at C speed, where a long list shares all but a few
    records), or items equal as written (``canonical``)."""
    n = min(len(a), len(b))
    lo = n
    for i in compress(range(n), map(is_not, a, b)):
        if not _written_equal(a[i], b[i]):
            lo = i
            break
    left = n - lo
    hi = left
    for k in compress(range(left), map(is_not, reversed(a), reversed(b))):
        if not _written_equal(a[len(a) - 1 - k], b[len(b) - 1 - k]):
            hi = k
            break
    return lo, hi


def _written_equal(x: Any, y: Any) -> bool:
    return canonical(materialize(x)) == canonical(materialize(y))


# -- the differ -------------------------------------------------------------------------------


class _Differ:
    def __init__(
        self,
        options: CompareOptions,
        *,
        settled: Sequence[Finding] = (),
        error_result: bool = False,
        prepared: Prepared | None = None,
    ) -> None:
        self.options = options
        self.prepared = prepared  # counts the shortcut taken, if given
        self.allow_reorder = options.allow_reorder
        self.settled = tuple(settled)  # equivalent schema rewrites, settled before the differ ran
        self.error_result = error_result  # both answers are tool results with isError true
        self.findings: list[Finding] = list(settled)
        # Scalars ``==`` takes as equal but written apart (True and 1), where a list of scalars is
        # left to DeepDiff, which lines such lists up by ``==`` and so does not see them: noted
        # as the list is lined up, reported beside what DeepDiff finds.
        self.forgiven: list[tuple[str, Any, Any]] = []
        self.before: Any = None

    def run(self, before: Any, after: Any) -> tuple[Finding, ...]:
        self.before = before  # whole: the differing leaf's siblings are left out of ``a`` and ``b``
        a, b = self.align(before, after, "$", None)
        leaf = one_leaf(a, b) if self.options.limits.fast and self.options.limits.one_leaf else None
        if leaf is not None:
            if self.prepared is not None:
                self.prepared.taken["one_leaf"] += 1
            self.findings.append(self.finding(*leaf, a, b))
        else:
            # DeepDiff costs ~100 ms to import: only a replay that found more than one changed
            # leaf pays it.
            from deepdiff import DeepDiff

            # By default DeepDiff skips keys starting with "__" as private attributes; in JSON
            # they are data (a GraphQL ``__typename``), so a change there must be found.
            tree = DeepDiff(
                a, b, view="tree", threshold_to_diff_deeper=0, verbose_level=2, ignore_private_variables=False
            )
            for report_type, levels in tree.items():
                for level in levels:
                    params = level.path(output_format="list", use_t2=report_type.endswith("_added"))
                    self.findings.append(self.finding(report_type, params, level.t1, level.t2, a, b))
        if self.forgiven:
            # What DeepDiff forgave is a difference too, beside whatever else it found (a True
            # that became 1 next to a changed word in the same list): each at its own place,
            # unless DeepDiff told of that place already.
            told = {f.path for f in self.findings}
            found = (_written_apart(*note) for note in self.forgiven if note[0] not in told)
            self.findings.extend(f for f in found if f is not None)
        return _finish(_drop_echoes(self.findings))

    def same(self, a: Any, b: Any) -> bool:
        """Whether two members are equal as written, so DeepDiff need not see them: ``==`` first
        (at C speed, it rejects nearly every differing pair), then what it forgives (True == 1, the
        order of named items) ruled out."""
        if a is b and type(a) is Same:
            return True  # one subtree shared by both sides: normalize_pair checked it strictly
        if type(a) is not type(b) or not loosely_equal(a, b):
            return False
        return type(a) in WRITTEN_AS_EQUAL or same_canonical(a, b)

    # Lists are lined up before DeepDiff sees them: DeepDiff pairs lists of objects by
    # position, so one removed item would read as every later item changed.
    def align(self, a: Any, b: Any, path: str, key: str | None) -> tuple[Any, Any]:
        if type(a) is Same or type(b) is Same:
            # A shared subtree meets itself (and is dropped before this) unless lined up with
            # something else: then it is compared in full.
            a, b = materialize(a), materialize(b)
        if isinstance(a, Keyed) and isinstance(b, Keyed) and a.key == b.key:
            return self.align_keyed(a, b, path)
        if isinstance(a, Keyed) and isinstance(b, (list, Keyed)):
            a = list(a.values())
        if isinstance(b, Keyed) and isinstance(a, list):
            b = list(b.values())
        if type(a) is list and type(b) is list:
            return self.align_list(a, b, path, key)
        if isinstance(a, dict) and type(a) is type(b):
            na, nb = type(a)(), type(b)()
            for k, value in a.items():
                if k in b:
                    # "required" stays: whether an added property is a required one is read there.
                    if k != "required" and self.same(value, b[k]):
                        continue
                    na[k], nb[k] = self.align(value, b[k], path + _segment(a, k), _Step(a, k).key)
                else:
                    na[k] = value
            for k, value in b.items():
                if k not in a:
                    nb[k] = value
            return na, nb
        return a, b

    def align_keyed(self, a: Keyed, b: Keyed, path: str) -> tuple[Keyed, Keyed]:
        names = list(a)
        if len(a) == len(b) and names == list(b):
            # The same names in the same order (a long named list with a few changed records):
            # no ordering finding, and only the items that are not the very object on both sides
            # (one ``Same``, or a subtree ``==`` to itself) can differ.
            na, nb = Keyed(a.key), Keyed(b.key)
            for k in compress(names, map(is_not, a.values(), b.values())):
                if not self.same(a[k], b[k]):
                    na[k], nb[k] = self.align(a[k], b[k], path + ident_segment(a.key, k), None)
            return na, nb
        common = [k for k in a if k in b]
        if not self.allow_reorder and len(common) > 1 and common != [k for k in b if k in a]:
            self.findings.append(
                _classed(
                    "named-reordered",
                    "ordering-change",
                    path,
                    f"{_plural(path)} in a different order (matched by {a.key}; order is not significant)",
                    before=render([k for k in a if k in b]),
                    after=render([k for k in b if k in a]),
                )
            )
        na, nb = Keyed(a.key), Keyed(b.key)
        for k, value in a.items():
            if k in b:
                if self.same(value, b[k]):
                    continue
                na[k], nb[k] = self.align(value, b[k], path + ident_segment(a.key, k), None)
            else:
                na[k] = value
        for k, value in b.items():
            if k not in a:
                nb[k] = value
        return na, nb

    def align_list(self, a: list[Any], b: list[Any], path: str, key: str | None) -> tuple[Any, Any]:
        """Two lists lined up item by item for DeepDiff. The items equal at both ends (the very
        object on both sides, a shared record, or equal as written) are lined up with each other,
        as a line diff does; only the items between are lined up by content (difflib, or any item
        against any when order is not significant), and only they are written out."""
        if len(a) == 1 and len(b) == 1:
            # One item against one pair up whatever they hold (equal ones leave nothing behind).
            return self.align_pair(a, b, path)
        lo, hi = _equal_ends(a, b)
        mid_a = [materialize(x) for x in a[lo : len(a) - hi]]
        mid_b = [materialize(y) for y in b[lo : len(b) - hi]]
        ca = [canonical(x) for x in mid_a]
        # An item that is the very object on both sides (a shared record, normalised once) is
        # spelled once: canonical() is a function of the object alone.
        spelled = {id(x): c for x, c in zip(mid_a, ca, strict=True)}
        cb = [spelled.get(id(y)) or canonical(y) for y in mid_b]
        if ca == cb:
            return a, b
        if sorted(ca) == sorted(cb):
            if not self.allow_reorder:
                self.findings.append(
                    _classed(
                        "required-reordered" if key == "required" else "list-reordered",
                        "ordering-change",
                        path,
                        f"the same {len(a)} items in a different order",
                        before=render(a),
                        after=render(b),
                    )
                )
            return a, a  # reported once here; nothing more for DeepDiff to find
        pairs, removed, added = self.match_unordered(ca, cb) if self.allow_reorder else self.match_ordered(ca, cb)
        if not removed and not added and all(i == j for i, j in pairs):
            return self.align_pair(a, b, path)
        slots_a, slots_b = Aligned(), Aligned()
        slot = 0
        ends = [(i, i) for i in range(lo)] + [(len(a) - k, len(b) - k) for k in range(hi, 0, -1)]
        for i, j in ends:
            if a[i] is not b[j]:  # equal as written, not one object: compared, as any pair is
                slots_a[slot], slots_b[slot] = self.align(a[i], b[j], f"{path}[{i}]", None)
                slots_a.index[slot], slots_b.index[slot] = i, j
                slot += 1
        for i, j in pairs:
            slots_a[slot], slots_b[slot] = self.align(mid_a[i], mid_b[j], f"{path}[{lo + i}]", None)
            slots_a.index[slot], slots_b.index[slot] = lo + i, lo + j
            slot += 1
        for i in removed:
            slots_a[slot], slots_a.index[slot] = mid_a[i], lo + i
            slot += 1
        for j in added:
            slots_b[slot], slots_b.index[slot] = mid_b[j], lo + j
            slot += 1
        return slots_a, slots_b

    def align_pair(self, a: list[Any], b: list[Any], path: str) -> tuple[Any, Any]:
        """Two lists of one length lined up item by item. An item that is the very object on
        both sides (a shared record) holds nothing to find: where there are such, only the other
        places are kept (an ``Aligned`` by their own index, as a named list keeps only its
        changed names), so that DeepDiff does not step through 44k shared records to find one
        changed leaf. A list of scalars stays a list: DeepDiff lines those up itself."""
        moved = list(compress(range(len(a)), map(is_not, a, b)))
        if len(moved) < len(a) and not (_all_basic(a) and _all_basic(b)):
            slots_a, slots_b = Aligned(), Aligned()
            for i in moved:
                slots_a[i], slots_b[i] = self.align(a[i], b[i], f"{path}[{i}]", None)
                slots_a.index[i] = slots_b.index[i] = i
            return slots_a, slots_b
        na, nb = list(a), list(b)
        for i in moved:
            na[i], nb[i] = self.align(a[i], b[i], f"{path}[{i}]", None)
        if _all_basic(a) and _all_basic(b):
            # DeepDiff lines a list of scalars up by ``==``: what that forgives is noted here (one
            # type and not a float: ``==`` is as strict as the writing).
            for i in moved:
                x, y = a[i], b[i]
                if (type(x) is not type(y) or type(x) is float) and x == y:
                    self.forgiven.append((f"{path}[{i}]", x, y))
        return na, nb

    @staticmethod
    def match_ordered(ca: list[str], cb: list[str]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
        pairs: list[tuple[int, int]] = []
        removed: list[int] = []
        added: list[int] = []
        matcher = difflib.SequenceMatcher(None, ca, cb, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal" or op == "replace":
                common = min(i2 - i1, j2 - j1)
                pairs.extend((i1 + k, j1 + k) for k in range(common))
                removed.extend(range(i1 + common, i2))
                added.extend(range(j1 + common, j2))
            elif op == "delete":
                removed.extend(range(i1, i2))
            else:
                added.extend(range(j1, j2))
        return pairs, removed, added

    @staticmethod
    def match_unordered(ca: list[str], cb: list[str]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
        pool: dict[str, list[int]] = {}
        for j, c in enumerate(cb):
            pool.setdefault(c, []).append(j)
        pairs: list[tuple[int, int]] = []
        left_a: list[int] = []
        for i, c in enumerate(ca):
            if pool.get(c):
                pairs.append((i, pool[c].pop(0)))
            else:
                left_a.append(i)
        taken = {j for _, j in pairs}
        left_b = [j for j in range(len(cb)) if j not in taken]
        # What is left is paired in order, so a changed item reads as changed, not as removed + added.
        common = min(len(left_a), len(left_b))
        pairs.extend(zip(left_a[:common], left_b[:common], strict=True))
        return pairs, left_a[common:], left_b[common:]

    # -- one DeepDiff level -> one Finding ---------------------------------------------------

    def finding(self, report_type: str, params: Sequence[Any], t1: Any, t2: Any, a: Any, b: Any) -> Finding:
        """One difference DeepDiff reports (its report type, its path as a list, both values)."""
        path, steps = _locate(b if report_type.endswith("_added") else a, params)
        last = steps[-1] if steps else _Step(None, None)
        if report_type in ("dictionary_item_added", "iterable_item_added"):
            return self.membership(path, steps, last, t2, added=True)
        if report_type in ("dictionary_item_removed", "iterable_item_removed"):
            return self.membership(path, steps, last, t1, added=False)
        if report_type == "type_changes":
            if _is_number(t1) and _is_number(t2):
                return self.changed(path, steps, t1, t2)
            return _type_change(path, t1, t2)
        return self.changed(path, steps, t1, t2)

    def membership(self, path: str, steps: list[_Step], last: _Step, value: Any, added: bool) -> Finding:
        """A key, a named item or a list item that one side alone has (``added``: the live one)."""
        keys = [s.key for s in steps]
        hint = _hint_finding(path, steps, _ABSENT, value) if added else _hint_finding(path, steps, value, _ABSENT)
        if hint is not None:
            return hint
        verb = "added" if added else "removed"
        shown = {"after": render(value)} if added else {"before": render(value)}
        if isinstance(last.container, Keyed):
            rule = prompt_argument_rule(keys, value, added) or _rule_for(steps, f"tool-{verb}", None)
            return _classed(rule, "structure-change", path, f"{_noun(steps)} {quoted(last.param)} {verb}", **shown)
        if isinstance(last.container, (list, Aligned)):
            if keys[-2:-1] == ["required"] and "inputSchema" in keys:
                if added:
                    rule, message = "required-added", f"argument {quoted(value)} became required"
                else:
                    rule, message = "required-dropped", f"argument {quoted(value)} is no longer required"
                return _classed(rule, "structure-change", path, message, **shown)
            return _classed(f"item-{verb}", "structure-change", path, f"list item {verb}", **shown)
        name = str(last.param)
        if flag := prompt_required_rule(keys, None if added else value, value if added else None):
            rule = flag
        elif not added:
            rule = _removed_rule(steps, value)
        elif keys[-2:-1] == ["properties"] and "inputSchema" in keys and required_in(steps, name):
            return _classed(
                "required-added", "structure-change", path, f"required argument {quoted(name)} added", **shown
            )
        else:
            rule = "capability-added" if _in_capabilities(keys) else _rule_for(steps, "key-added", value)
        return _classed(rule, "structure-change", path, f"key {quoted(name)} {verb}", **shown)

    def holder(self, steps: list[_Step]) -> Any:
        """The object in the recorded answer that holds the leaf ``steps`` reach, whole."""
        node = self.before
        for step in steps[:-1]:
            # A lined-up list's slot stands for its item's place in the recorded list.
            param = step.container.index.get(step.param) if isinstance(step.container, Aligned) else step.param
            try:
                node = node[param]
            except (KeyError, IndexError, TypeError):
                return None
        return node

    def changed(self, path: str, steps: list[_Step], t1: Any, t2: Any) -> Finding:
        hint = _hint_finding(path, steps, t1, t2)
        if hint is not None:
            return hint
        rule = self.changed_rule(steps, t1, t2)
        if isinstance(t1, str) and isinstance(t2, str):
            document = bool(steps) and steps[-1].key == "text" and is_document(self.holder(steps))
            if document or len(t1) > BRIEF_CAP or len(t2) > BRIEF_CAP or "\n" in t1 or "\n" in t2:
                return text_changed(path, rule, t1, t2, document)
        message = f"value changed: {brief(t1)} -> {brief(t2)}"
        return _classed(rule, "value-change", path, message, before=render(t1), after=render(t2))

    def changed_rule(self, steps: list[_Step], t1: Any, t2: Any) -> str:
        """The class table's row for a changed leaf: an error's text (a JSON-RPC error's
        ``message`` or a string in its ``data``; the text of a result that is an error on both
        sides) and its ``code`` are told apart from any other value."""
        keys = [s.key for s in steps]
        if keys[:1] == ["error"]:
            if keys == ["error", "code"]:
                return "error-code-changed"
            if isinstance(t1, str) and isinstance(t2, str):
                return "error-text-changed"
        if self.error_result and keys[:2] == ["result", "content"] and isinstance(t1, str) and isinstance(t2, str):
            return "error-text-changed"
        return prompt_required_rule(keys, t1, t2) or _rule_for(steps, "value-changed", t2)


def _hint_finding(path: str, steps: list[_Step], before: Any, after: Any) -> Finding | None:
    """A tool annotation hint that changed (or appeared, or went away), classified by what it
    allows (``hints.hint_rule``), or None when ``steps`` do not lead to a tool's hint that changed."""
    keys = [s.key for s in steps]
    if len(keys) < 3 or keys[-2] != "annotations" or "tools" not in keys or keys[-1] not in HINT_DEFAULTS:
        return None
    hint = str(keys[-1])
    shown = (None if before is _ABSENT else before, None if after is _ABSENT else after)
    rule = hint_rule(hint, *shown)
    if rule is None:
        return None
    message = f"tool annotation {hint}: {brief(shown[0])} -> {brief(shown[1])}"
    if rule == "hint-widened":
        message += " (the tool may now do more)"
    return _classed(rule, "value-change", path, message, before=render(shown[0]), after=render(shown[1]))


_ABSENT = object()


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _plural(path: str) -> str:
    for key, noun in _NOUNS.items():
        if path.endswith("." + key):
            return f"the same {noun}s"
    return "the same named items"


def _noun(steps: list[_Step]) -> str:
    parent_key = steps[-2].key if len(steps) >= 2 else None
    return _NOUNS.get(parent_key or "", "item")


def _rule_for(steps: list[_Step], default: str, after: Any) -> str:
    """The row for metadata text (version, descriptions, titles, instructions), else ``default``;
    ``after`` is the live value (None when it went away). A listed item's description has rows of
    its own (``listing.description_rule``): a model chooses tools by it."""
    keys = [s.key for s in steps]
    if not keys or _in_payload(steps) or is_property_name(keys):
        return default
    if described := description_rule(keys, after):
        return described
    last = keys[-1]
    if last in _COSMETIC_KEYS:
        return "metadata-text"
    # serverInfo sits in the result (initialize) or, from 2026-07-28, under a namespaced _meta key.
    parent = keys[-2] if len(keys) >= 2 else None
    if last == "version" and parent and parent.endswith("serverInfo"):
        return "server-version"
    if keys == ["result", "instructions"]:
        return "metadata-text"
    return default


def _in_payload(steps: list[_Step]) -> bool:
    """Whether ``steps`` lead into what a tool, resource or prompt returned (or into text that
    held JSON or base64): data there is data, whatever its key."""
    return any(isinstance(s.container, BOX_TYPES) or s.key in _PAYLOAD_KEYS for s in steps)


def _in_capabilities(keys: list[str | None]) -> bool:
    """Whether a key path leads into a result's ``capabilities`` (what a server offers)."""
    return len(keys) >= 3 and keys[0] == "result" and keys[1] == "capabilities"


def _removed_rule(steps: list[_Step], value: Any) -> str:
    """The row for a removed key: a capability is breaking, an empty object that declared
    nothing (``capabilities.experimental: {}``) is not, whatever else is the default."""
    keys = [s.key for s in steps]
    empty = type(value) is dict and not value
    if _in_capabilities(keys):
        return "empty-object-removed" if empty and keys[2:] == ["experimental"] else "capability-removed"
    if empty and not _in_payload(steps):
        return "empty-object-removed"
    return _rule_for(steps, "key-removed", None)


def _drop_echoes(findings: list[Finding]) -> list[Finding]:
    """A new required argument shows up twice (in ``properties`` and in ``required``): keep one."""
    new_args = {f.path for f in findings if f.message.startswith("required argument ")}
    if not new_args:
        return findings

    def echo(f: Finding) -> bool:
        if not f.message.endswith(" became required") or ".required[" not in f.path:
            return False
        schema = f.path[: f.path.rindex(".required[")]
        return f"{schema}.properties{key_segment(f.after)}" in new_args

    return [f for f in findings if not echo(f)]


def _finish(findings: list[Finding]) -> tuple[Finding, ...]:
    """Twins merged; worst first, then by path; at most MAX_FINDINGS, the rest summed up in one
    finding."""
    findings = merge_twins(findings)
    findings.sort(key=lambda f: (KIND_ORDER.index(f.kind), CLASS_ORDER.index(f.cls), path_order(f.path)))
    if len(findings) <= MAX_FINDINGS:
        return tuple(findings)
    kept, rest = findings[: MAX_FINDINGS - 1], findings[MAX_FINDINGS - 1 :]
    worst = min(rest, key=lambda f: (CLASS_ORDER.index(f.cls), KIND_ORDER.index(f.kind)))
    summary = Finding(worst.kind, worst.cls, "$", f"{len(rest)} more differences not shown", rule=worst.rule)
    return (*kept, summary)
