"""Coverage's data: what the live server listed during a replay (``Listed``, per cassette) and
what a run's cassettes leave uncalled of it (``Coverage``, per report), with their JSON forms and
the words for each kind. Measuring it is ``grade/coverage.py``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mcp_replay_action.model import JSON, JSONObject

# The listings a replay reads, by method: the kind, the result's list key, each item's name key.
LISTINGS: dict[str, tuple[str, str, str]] = {
    "tools/list": ("tools", "tools", "name"),
    "prompts/list": ("prompts", "prompts", "name"),
    "resources/templates/list": ("resource templates", "resourceTemplates", "uriTemplate"),
    "resources/list": ("resources", "resources", "uri"),
}
KINDS: tuple[str, ...] = ("tools", "prompts", "resource templates", "resources")
GATED: tuple[str, ...] = ("tools", "prompts", "resource templates")  # what ``--min-coverage`` counts
# The request that calls each kind, and the listing that says what there is of it.
CALLED_BY: dict[str, str] = {
    "tools": "tools/call",
    "prompts": "prompts/get",
    "resource templates": "resources/read",
    "resources": "resources/read",
}
LISTED_BY: dict[str, str] = {kind: method for method, (kind, _, _) in LISTINGS.items()}
# How a call no listing covers is named: a read is known once either resource listing was given.
UNKNOWN_BY: dict[str, str] = {"tools": "tools/call", "prompts": "prompts/get", "resources": "resources/read"}


@dataclass(frozen=True)
class Listed:
    """What the live server listed during one cassette's replay: names by kind, in the order first
    listed (a kind the cassette never listed is absent), and the kinds whose last page seen said
    more followed (``nextCursor``) that the cassette never asked for."""

    kinds: tuple[tuple[str, tuple[str, ...]], ...] = ()
    more: tuple[str, ...] = ()

    def names(self, kind: str) -> tuple[str, ...] | None:
        """The names listed of ``kind``, None when the cassette never listed it."""
        return next((names for k, names in self.kinds if k == kind), None)

    def redacted(self, apply: Callable[[str], object]) -> Listed:
        """Every name passed through ``apply`` (the cassette's redactor)."""
        return Listed(tuple((kind, tuple(str(apply(n)) for n in names)) for kind, names in self.kinds), self.more)

    def to_json(self) -> JSONObject:
        return {kind: {"names": list(names), "more": kind in self.more} for kind, names in self.kinds}

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Listed:
        """From a report's ``listed`` object (already checked against the report schema)."""
        kinds = tuple((str(k), tuple(str(n) for n in v.get("names") or ())) for k, v in data.items() if k in KINDS)
        return cls(kinds, tuple(str(k) for k, v in data.items() if k in KINDS and v.get("more")))


@dataclass(frozen=True)
class KindCoverage:
    """One kind across a run: how many the live server listed, those no cassette called (in the
    order listed), and whether a listing was left partial."""

    kind: str
    listed: int
    uncovered: tuple[str, ...]
    partial: bool = False

    @property
    def called(self) -> int:
        return self.listed - len(self.uncovered)

    def to_json(self) -> JSONObject:
        return {
            "kind": self.kind,
            "listed": self.listed,
            "called": self.called,
            "uncovered": list(self.uncovered),
            "partial": self.partial,
        }


@dataclass(frozen=True)
class Coverage:
    """Coverage across a run: each kind some cassette's live server listed; the kinds cassettes
    call that no cassette listed (``unknown``: their coverage cannot be said); how many cassettes
    gave a listing of the ``cassettes`` replayed."""

    kinds: tuple[KindCoverage, ...] = ()
    unknown: tuple[str, ...] = ()
    cassettes: int = 0
    listing: int = 0

    @property
    def percent(self) -> float | None:
        """Called of listed tools, prompts and resource templates, in percent (None: none listed)."""
        gated = [k for k in self.kinds if k.kind in GATED]
        listed = sum(k.listed for k in gated)
        if not listed:
            return None
        return 100.0 * sum(k.called for k in gated) / listed

    def to_json(self) -> JSONObject:
        percent = self.percent
        return {
            "percent": None if percent is None else round(percent, 2),
            "kinds": [k.to_json() for k in self.kinds],
            "unknown": list(self.unknown),
            "cassettes": self.cassettes,
            "listing_cassettes": self.listing,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Coverage:
        """From a report's ``coverage`` object (already checked against the report schema)."""
        return cls(
            kinds=tuple(
                KindCoverage(
                    str(k["kind"]), int(k["listed"]), tuple(str(n) for n in k["uncovered"]), bool(k.get("partial"))
                )
                for k in data.get("kinds") or ()
            ),
            unknown=tuple(str(k) for k in data.get("unknown") or ()),
            cassettes=int(data.get("cassettes") or 0),
            listing=int(data.get("listing_cassettes") or 0),
        )


def percent_text(percent: float) -> str:
    """``74.9%``: one decimal, rounded down, so a coverage shown as meeting a minimum does."""
    import math

    return f"{math.floor(percent * 10) / 10:.1f}%"
