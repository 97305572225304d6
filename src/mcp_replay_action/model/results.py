"""The plain data a replay produces and every report renders: findings, per-interaction results,
per-cassette results, the score and the whole report. Frozen dataclasses, no behaviour beyond
simple derived properties."""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.coverage import Coverage, Listed
from mcp_replay_action.model.gate import Gate

# Regression kinds, worst first (the order annotations and summaries sort by).
FindingKind = Literal[
    "missing-response",
    "error-status-change",
    "structure-change",
    "ordering-change",
    "value-change",
    "output-schema",
    "latency",
    "size",
]
KIND_ORDER: tuple[str, ...] = (
    "missing-response",
    "error-status-change",
    "structure-change",
    "ordering-change",
    "value-change",
    "output-schema",  # the live result against the live tool's outputSchema (output_schema.py)
    "latency",  # only with --max-slowdown: the answer came, the same, but much slower
    "size",  # only with --max-growth: the answer came, much larger than recorded
)
# Impact classes, worst first.
FindingClass = Literal["breaking", "additive", "cosmetic"]
CLASS_ORDER: tuple[str, ...] = ("breaking", "additive", "cosmetic")
Status = Literal["pass", "fail", "missing", "skipped"]

REPORT_SCHEMA = "mcp-replay/report@1"


@dataclass(frozen=True)
class Finding:
    """One difference between a recorded and a live response.

    ``path`` is JSONPath-like (``$.result.tools[name=add].inputSchema.required``);
    ``before``/``after`` are short renderings (capped, never multi-kilobyte); ``diff`` is a capped
    unified diff for long text changes, else empty. ``rule`` is the row of the class table
    (``classes.py``) that gave ``cls``; ``also`` names other places the very same change was
    found (the official Python SDK sends a dict both as ``structuredContent`` and as JSON text in
    ``content[0].text``): one change, one finding.
    """

    kind: FindingKind
    cls: FindingClass
    path: str
    message: str
    before: JSON = None
    after: JSON = None
    diff: str = ""
    rule: str = ""
    also: tuple[str, ...] = ()

    def to_json(self) -> JSONObject:
        out = {
            "kind": self.kind,
            "class": self.cls,
            "path": self.path,
            "message": self.message,
            "before": self.before,
            "after": self.after,
        }
        if self.diff:
            out["diff"] = self.diff
        if self.rule:
            out["rule"] = self.rule
        if self.also:
            out["also"] = list(self.also)
        return out


@dataclass(frozen=True)
class Substitution:
    """A threaded value (``carry.py``): one the live server minted afresh, sent in place of the
    recorded one, or shown on the answer that minted it."""

    recorded: str
    live: str


@dataclass(frozen=True)
class InteractionResult:
    """The verdict for one recorded request."""

    seq: int
    line: int
    method: str
    name: str | None
    status: Status
    findings: tuple[Finding, ...] = ()
    latency_ms: float | None = None  # the live answer's
    recorded_latency_ms: float | None = None  # the cassette's, when it kept one
    recorded_error: bool = False
    live_error: bool | None = None  # None when no live response arrived
    substitutions: tuple[Substitution, ...] = ()  # what was sent in place of recorded values
    # Differences that also differ between two live runs of the same build (``noise.py``):
    # reported, never gating.
    noise: tuple[Finding, ...] = ()
    # The answer's size, the UTF-8 bytes of its compact JSON (``replay.answer_bytes``): the
    # recording's and the live one's; None when there was none.
    recorded_bytes: int | None = None
    live_bytes: int | None = None

    @property
    def grew(self) -> bool:
        """Whether the live answer is larger than its recording."""
        return self.live_bytes is not None and self.recorded_bytes is not None and self.live_bytes > self.recorded_bytes

    @property
    def label(self) -> str:
        return label_of(self.method, self.name)

    @property
    def kind(self) -> str | None:
        """The worst finding kind, or None."""
        kinds = [f.kind for f in self.findings if f.cls != "cosmetic"] or [f.kind for f in self.findings]
        return min(kinds, key=KIND_ORDER.index) if kinds else None

    @property
    def cls(self) -> str | None:
        """The worst finding class, or None."""
        classes = [f.cls for f in self.findings]
        return min(classes, key=CLASS_ORDER.index) if classes else None


def label_of(method: str, name: str | None) -> str:
    """How a result is named in reports: the method, and the tool's (or prompt's) name."""
    return f"{method} {name}" if name else method


_STATUSES: tuple[Status, ...] = ("pass", "fail", "missing", "skipped")
_LIVE_ERROR: tuple[bool | None, ...] = (None, False, True)
_I32 = -(2**31)  # the least 32-bit number: seq and line numbers fit, or the list widens
_new = object.__new__


class ResultList(Sequence[InteractionResult]):
    """One cassette's results in recorded order, held compactly: a result with no findings, noise
    or substitutions (nearly every one of a passing replay) is a few packed numbers, not an
    object, so a replay's memory does not grow by an object per interaction. Reading an item
    gives an ``InteractionResult`` equal to the one appended."""

    def __init__(self, results: Iterable[InteractionResult] = ()) -> None:
        self._numbers = array("i")  # seq, line per result (widened if one does not fit)
        # live, recorded per result, in whole microseconds (``_NONE``: none): a latency is kept to
        # the microsecond (``round(ms, 3)``); one that is not (a cassette's own figure) widens it
        # to milliseconds as doubles (NaN: none)
        self._latency: array[Any] = array("i")
        self._sizes = array("i")  # recorded, live answer bytes per result (-1: none; widened past 2 GiB)
        self._codes = array("I")  # label index << 6 | live error << 3 | recorded error << 2 | status
        self._labels: dict[tuple[str, str | None], int] = {}
        self._label_list: list[tuple[str, str | None]] = []
        self._whole: dict[int, InteractionResult] = {}  # results with anything more, by position
        for result in results:
            self.append(result)

    def append(self, result: InteractionResult) -> None:
        """Add ``result`` at the end."""
        if result.findings or result.noise or result.substitutions:
            self._whole[len(self._codes)] = result
        self.append_plain(
            result.seq,
            result.line,
            result.method,
            result.name,
            result.status,
            latency_ms=result.latency_ms,
            recorded_latency_ms=result.recorded_latency_ms,
            recorded_error=result.recorded_error,
            live_error=result.live_error,
            recorded_bytes=result.recorded_bytes,
            live_bytes=result.live_bytes,
        )

    def append_plain(
        self,
        seq: int,
        line: int,
        method: str,
        name: str | None,
        status: Status,
        *,
        latency_ms: float | None,
        recorded_latency_ms: float | None,
        recorded_error: bool,
        live_error: bool | None,
        recorded_bytes: int | None = None,
        live_bytes: int | None = None,
    ) -> None:
        """Add the result with these fields and no findings, noise or substitutions, without
        building it (``verdict.pass_into``: most of a replay's results)."""
        label = (method, name)
        number = self._labels.get(label)
        if number is None:
            number = self._labels[label] = len(self._label_list)
            self._label_list.append(label)
        if self._numbers.typecode == "i" and not (_I32 <= seq < -_I32 and _I32 <= line < -_I32):
            self._numbers = array("q", self._numbers)
        self._numbers.extend((seq, line))
        if self._latency.typecode == "i":
            live, recorded = _micros(latency_ms), _micros(recorded_latency_ms)
            if live is not None and recorded is not None:
                self._latency.extend((live, recorded))
            else:
                self._latency = array("d", map(self._latency_at, range(len(self._latency))))
        if self._latency.typecode == "d":
            self._latency.extend((_packed(latency_ms), _packed(recorded_latency_ms)))
        recorded_size = -1 if recorded_bytes is None else recorded_bytes
        live_size = -1 if live_bytes is None else live_bytes
        if self._sizes.typecode == "i" and (recorded_size >= -_I32 or live_size >= -_I32):
            self._sizes = array("q", self._sizes)
        self._sizes.extend((recorded_size, live_size))
        code = number << 6 | _LIVE_ERROR.index(live_error) << 3 | int(recorded_error) << 2
        self._codes.append(code | _STATUSES.index(status))

    def with_whole(self, change: Callable[[InteractionResult], InteractionResult]) -> ResultList:
        """A copy with ``change`` applied to every result held as an object (the packed ones, which
        carry no text, are shared with this list, which must not grow any more)."""
        copy = ResultList()
        copy._numbers, copy._latency, copy._codes = self._numbers, self._latency, self._codes
        copy._sizes = self._sizes
        copy._labels, copy._label_list = self._labels, self._label_list
        copy._whole = {i: change(r) for i, r in self._whole.items()}
        return copy

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, index: int) -> InteractionResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[InteractionResult]: ...
    def __getitem__(self, index: int | slice) -> InteractionResult | list[InteractionResult]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("result index out of range")
        return self._item(index)

    def __iter__(self) -> Iterator[InteractionResult]:
        return (self._item(i) for i in range(len(self)))

    def labels(self) -> list[tuple[str, str | None]]:
        """Each distinct (method, name) of the results, read without building any."""
        return list(self._label_list)

    def rows(self) -> Iterator[tuple[int, Status, str, InteractionResult | None]]:
        """Each result's seq, status and label in order, and the result itself when it is held
        whole (it has findings, noise or substitutions) or its answer grew, else None: all a
        listing of the others shows, read without building them."""
        labels = [label_of(method, name) for method, name in self._label_list]
        numbers, whole, sizes = self._numbers, self._whole, self._sizes
        for index, code in enumerate(self._codes):
            held = whole.get(index)
            if held is None and sizes[2 * index + 1] > sizes[2 * index] >= 0:
                held = self._item(index)  # an answer that grew says so on its row
            yield numbers[2 * index], _STATUSES[code & 3], labels[code >> 6], held

    def differing(self) -> frozenset[int]:
        """The seqs of the results that were answered and differ from their recording: a finding,
        failing or cosmetic (what a confirmation pass re-checks), read without building the others."""
        return frozenset(r.seq for r in self._whole.values() if r.findings and r.status in ("fail", "pass"))

    def statuses(self) -> Counter[str]:
        """How many results have each status, read from the packed codes (no result is built)."""
        out: Counter[str] = Counter()
        for code, n in Counter(self._codes).items():  # counted at C speed; few distinct codes
            out[_STATUSES[code & 3]] += n
        return out

    def weighted(self) -> Iterator[tuple[InteractionResult, int]]:
        """What counting the results needs (``grade.score``, ``gate.evaluate_gate``): each result
        held whole once, and of the packed ones (no findings, noise or substitutions) one for each
        status and error flags, with how many share them. Nothing is built per interaction."""
        whole = self._whole
        counts = Counter(self._codes)
        for index in whole:
            counts[self._codes[index]] -= 1
        groups: dict[int, list[int]] = {}  # status and error bits -> [count, a packed index]
        for code, n in counts.items():
            if n <= 0:
                continue
            index = self._codes.index(code)
            while index in whole:
                index = self._codes.index(code, index + 1)
            group = groups.setdefault(code & 63, [0, index])
            group[0] += n
        for n, index in groups.values():
            yield self._item(index), n
        for result in whole.values():
            yield result, 1

    def _item(self, index: int) -> InteractionResult:
        whole = self._whole.get(index)
        if whole is not None:
            return whole
        code = self._codes[index]
        method, name = self._label_list[code >> 6]
        live_ms, recorded_ms = self._latency_at(2 * index), self._latency_at(2 * index + 1)
        recorded_bytes, live_bytes = self._sizes[2 * index], self._sizes[2 * index + 1]
        # Built without the frozen dataclass's __init__ (one object.__setattr__ per field, four
        # times the cost): a report reads every result several times (score, gate, totals,
        # console, JSON), which for a 10,000-call replay was a third of its CPU. Every field is
        # set, so the object equals the one appended.
        item: InteractionResult = _new(InteractionResult)
        item.__dict__.update(
            seq=self._numbers[2 * index],
            line=self._numbers[2 * index + 1],
            method=method,
            name=name,
            status=_STATUSES[code & 3],
            findings=(),
            latency_ms=None if live_ms != live_ms else live_ms,  # NaN (none) is the one != itself
            recorded_latency_ms=None if recorded_ms != recorded_ms else recorded_ms,
            recorded_error=bool(code >> 2 & 1),
            live_error=_LIVE_ERROR[code >> 3 & 7],
            substitutions=(),
            noise=(),
            recorded_bytes=None if recorded_bytes < 0 else recorded_bytes,
            live_bytes=None if live_bytes < 0 else live_bytes,
        )
        return item

    def _latency_at(self, at: int) -> float:
        """A latency in milliseconds as appended (NaN: none)."""
        value = self._latency[at]
        if self._latency.typecode == "d":
            return value
        return math.nan if value == _NONE else value / 1000

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"ResultList({list(self)!r})"


def _packed(value: float | None) -> float:
    return math.nan if value is None else value


_NONE = _I32  # no latency, in a list of microseconds


def _micros(value: float | None) -> int | None:
    """``value`` (milliseconds) in whole microseconds, when that reads back as the very same
    float (``round(ms, 3)``, as the replay keeps it); ``_NONE`` for none; None when it cannot."""
    if value is None:
        return _NONE
    try:
        micros = round(value * 1000)
    except (ValueError, OverflowError):  # NaN, infinity
        return None
    if 0 <= micros < -_I32 and micros / 1000 == value and math.copysign(1.0, value) > 0:
        return micros
    return None


@dataclass(frozen=True)
class Score:
    """The 0-100 score and its four dimensions, each a fraction in [0, 1]."""

    score: float
    grade: str
    responsiveness: float
    match_rate: float
    error_parity: float
    structural_stability: float
    capped: bool = False  # True when a missing response capped the grade at D
    breaking_capped: bool = False  # True when a breaking finding lowered the letter to B (``grade.py``)


@dataclass(frozen=True)
class CassetteResult:
    """Everything one cassette's replay produced."""

    path: str
    results: Sequence[InteractionResult]  # a tuple, or a ResultList from a replay
    score: Score
    era: str = ""
    protocol_version: str = ""
    # Sent in another era than recorded (``--era``): that era, and the requests it has no method
    # for, not sent ("ping (seq 13): not in the 2026-07-28 revision").
    replayed_era: str = ""
    era_skipped: tuple[str, ...] = ()
    duration_s: float = 0.0
    error: str = ""  # an infrastructure failure that stopped the replay early (one line)
    stderr_tail: str = ""
    non_json_lines: int = 0
    # What the live server listed during the replay (``coverage.py``); None when no live server
    # was replayed against (a ``diff``, a report from before coverage).
    listed: Listed | None = None
    # What this replay could not tell apart, and the step that would (``replay/advice.py``).
    notes: tuple[str, ...] = ()

    @property
    def passed(self) -> int:
        return status_counts(self.results)["pass"]

    @property
    def failed(self) -> int:
        return status_counts(self.results)["fail"]

    @property
    def missing(self) -> int:
        return status_counts(self.results)["missing"]


def weighted(results: Iterable[InteractionResult]) -> Iterator[tuple[InteractionResult, int]]:
    """``results`` as (result, how many count as it): a ``ResultList`` without building a result
    per interaction (``ResultList.weighted``), any other iterable one by one."""
    if isinstance(results, ResultList):
        return results.weighted()
    return ((r, 1) for r in results)


def status_counts(results: Sequence[InteractionResult]) -> Counter[str]:
    """How many of ``results`` have each status (a ``ResultList`` counts without building any)."""
    if isinstance(results, ResultList):
        return results.statuses()
    return Counter(r.status for r in results)


@dataclass(frozen=True)
class Report:
    """A finished replay over one or more cassettes. Reports render this and never re-compute it."""

    cassettes: tuple[CassetteResult, ...]
    score: Score
    target: str = ""
    tool_version: str = ""
    gate: Gate = field(default_factory=Gate)
    coverage: Coverage | None = None  # what the live server listed that no cassette calls
    # The command that accepts this run's changes (``accept_command``; the pytest plugin's own),
    # set by the edge that ran it; the console and Markdown reports name it when something changed.
    accept: str = ""

    @property
    def passed(self) -> int:
        return sum(c.passed for c in self.cassettes)

    @property
    def failed(self) -> int:
        return sum(c.failed for c in self.cassettes)

    @property
    def missing(self) -> int:
        return sum(c.missing for c in self.cassettes)

    @property
    def total(self) -> int:
        return sum(len(c.results) for c in self.cassettes)
