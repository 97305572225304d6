"""Coverage: what the live server lists that no cassette calls.

A replay proves the behaviour of what its cassettes call, and says nothing of the rest. The live
server's own listings (``tools/list``, ``prompts/list``, ``resources/templates/list``,
``resources/list``) answered during the replay say what there is; the cassettes' requests
(``tools/call`` by name, ``prompts/get`` by name, ``resources/read`` by URI: a URI counts for a
listed resource it equals and for every listed template it matches) say what was called. Across
every cassette of a run: a tool called in any cassette is covered, whichever cassette listed it.

Only what the data proves is said: a kind no cassette listed has no known coverage (it is named
as such, never guessed from the calls), and a listing whose last page seen offered a further page
(``nextCursor``) the cassettes did not ask for is marked as partial.

The percentage ``--min-coverage`` gates on counts tools, prompts and resource templates (what a
client calls); listed resources are reported beside them but not counted, since a resource list is
the server's content (every file of a filesystem server), not its interface.

Every name here came from a server: ``Listed`` is redacted by the cassette's redactor with the
rest of a result (``replay.redacted_result``), and every sink escapes it as server text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.coverage import CALLED_BY, KINDS, LISTINGS, UNKNOWN_BY, Coverage, KindCoverage, Listed

if TYPE_CHECKING:
    from mcp_replay_action.model.cassette import Interaction
    from mcp_replay_action.model.results import CassetteResult, InteractionResult


class Listings:
    """The live listings of one replay, heard as each answer arrives (``hear``, the replay's
    ``on_live``), unredacted until ``listed()`` is redacted with the result."""

    def __init__(self) -> None:
        self._names: dict[str, dict[str, None]] = {}
        self._more: set[str] = set()

    def hear(self, inter: Interaction, live: JSONObject) -> None:
        """Take the names of a live listing answer; any other answer is passed over."""
        spec = LISTINGS.get(inter.method)
        if spec is None:
            return
        kind, key, name_key = spec
        result = live.get("result")
        items = result.get(key) if isinstance(result, dict) else None
        if not isinstance(items, list):
            return  # an error, or not a listing: says nothing of what there is
        names = self._names.setdefault(kind, {})
        for item in items:
            name = item.get(name_key) if isinstance(item, dict) else None
            if isinstance(name, str):
                names[name] = None
        assert isinstance(result, dict)
        if result.get("nextCursor"):
            self._more.add(kind)
        else:
            self._more.discard(kind)

    def hearing(
        self, also: Callable[[Interaction, JSONObject], None] | None
    ) -> Callable[[Interaction, JSONObject], None]:
        """An ``on_live`` that hears each answer and then hands it to ``also`` (when given)."""
        if also is None:
            return self.hear

        def both(inter: Interaction, live: JSONObject) -> None:
            self.hear(inter, live)
            also(inter, live)

        return both

    def listed(self) -> Listed:
        return Listed(
            tuple((kind, tuple(self._names[kind])) for kind in KINDS if kind in self._names),
            tuple(kind for kind in KINDS if kind in self._more),
        )


def measure(cassettes: Sequence[CassetteResult]) -> Coverage | None:
    """The coverage of a run's cassettes; None when none was replayed against a live server (a
    ``diff`` of two cassettes, a report from before coverage)."""
    live = [c for c in cassettes if c.listed is not None]
    if not live:
        return None
    listed: dict[str, dict[str, None]] = {}
    complete: set[str] = set()  # kinds some cassette listed to the last page
    for cassette in live:
        assert cassette.listed is not None
        for kind, names in cassette.listed.kinds:
            listed.setdefault(kind, {}).update(dict.fromkeys(names))
            if kind not in cassette.listed.more:
                complete.add(kind)
    calls: dict[str, set[str]] = {}  # method -> subjects called
    for cassette in cassettes:
        for method, name in _subjects(cassette.results):
            if name is not None:
                calls.setdefault(method, set()).add(name)
    kinds = []
    for kind in KINDS:
        if kind not in listed:
            continue
        called = calls.get(CALLED_BY[kind], set())
        if kind == "resource templates":
            called = {t for t in listed[kind] if any(matches(t, uri) for uri in called)}
        uncovered = tuple(name for name in listed[kind] if name not in called)
        kinds.append(KindCoverage(kind, len(listed[kind]), uncovered, kind not in complete))
    # What cassettes call that no live listing says anything of: named, not guessed.
    unknown = tuple(
        noun
        for noun, method in UNKNOWN_BY.items()
        if calls.get(method) and not any(kind in listed for kind, by in CALLED_BY.items() if by == method)
    )
    return Coverage(
        kinds=tuple(kinds),
        unknown=unknown,
        cassettes=len(cassettes),
        listing=sum(1 for c in live if c.listed is not None and c.listed.kinds),
    )


def _subjects(results: Sequence[InteractionResult]) -> Iterable[tuple[str, str | None]]:
    from mcp_replay_action.model.results import ResultList

    if isinstance(results, ResultList):
        return results.labels()  # each distinct one once, read without building a result
    return {(r.method, r.name) for r in results}


# RFC 6570 expressions, by operator: what characters a value may hold, and whether it may be
# empty (an operator's prefix, such as ``/`` or ``?``, is among what it may hold). A simple
# ``{var}`` percent-encodes every reserved character, so it never holds ``/``, ``?`` or ``#``.
_ONE_OR_MORE_EXCEPT = "/?#"


@lru_cache(maxsize=256)
def _compiled(template: str) -> tuple[tuple[str, str | None, bool], ...]:
    """``template`` as a list of steps: ``(char, None, False)`` a literal character;
    ``("", excluded, star)`` a character not in ``excluded`` (``star``: any number of them)."""
    steps: list[tuple[str, str | None, bool]] = []
    at = 0
    while at < len(template):
        start = template.find("{", at)
        end = template.find("}", start) if start >= 0 else -1
        if start < 0 or end < 0:
            steps.extend((c, None, False) for c in template[at:])
            break
        steps.extend((c, None, False) for c in template[at:start])
        operator = template[start + 1 : start + 2]
        if operator in ("+", "#", "/", ";", "?", "&"):
            steps.append(("", "", True))  # reserved expansion, a path, a query: anything, or nothing
        elif operator == ".":
            steps.append(("", "/?#", True))
        else:
            steps.append(("", _ONE_OR_MORE_EXCEPT, False))  # at least one character
            steps.append(("", _ONE_OR_MORE_EXCEPT, True))
        at = end + 1
    return tuple(steps)


def matches(template: str, uri: str) -> bool:
    """Whether ``uri`` is an expansion of the RFC 6570 URI template ``template`` (a value of a
    simple ``{var}`` is one or more characters other than ``/``, ``?`` and ``#``; one of ``{+var}``,
    ``{#var}``, ``{/var}``, ``{?var}`` and the like is any text). Linear in ``uri``'s length: a
    set of positions in the template is carried along it, never a backtracking regex."""
    steps = _compiled(template)
    if all(excluded is None for _, excluded, _ in steps):
        return template == uri
    last = len(steps)

    def closure(states: Iterable[int]) -> set[int]:
        out: set[int] = set()
        todo = list(states)
        while todo:
            i = todo.pop()
            if i in out:
                continue
            out.add(i)
            if i < last and steps[i][2]:
                todo.append(i + 1)  # a starred step may match nothing
        return out

    states = closure((0,))
    for ch in uri:
        after: set[int] = set()
        for i in states:
            if i == last:
                continue
            char, excluded, star = steps[i]
            if excluded is None:
                if char == ch:
                    after.add(i + 1)
            elif ch not in excluded:
                after.add(i if star else i + 1)
        if not after:
            return False
        states = closure(after)
    return last in states
