"""Grading: one 0-100 score and a letter for a set of replayed interactions, and the gate check.

The score weighs four fractions, each over the interactions that were replayed (skipped ones do
not count): responsiveness 25% (a response arrived), match rate 45% (a response arrived and no
finding is ``breaking``), error parity 20% (success/error class as recorded) and structural
stability 10% (no ``structure-change`` finding, additive ones included). So a release that only
adds fields loses structural stability alone and still grades A; a breaking change costs match
rate. Letters: A >= 90, B >= 80, C >= 70, D >= 60, else F.

Two caps keep the letter honest where the score is a share of interactions. A server that
answers at all keeps responsiveness and usually error parity (55 of the 100 points), so one wrong
answer in nine still scores 93.9: the share says little when a single breaking change is what a
client trips on. So an A means "every request answered, nothing breaking": any breaking finding
caps the letter at B (below that the score places it), and any missing response caps it at D,
because a server that stops answering is not "mostly stable". The score itself is left as
computed; ``Score`` says which cap lowered the letter.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model.results import InteractionResult, Score, weighted

GRADES: tuple[str, ...] = ("A", "B", "C", "D", "F")
WEIGHTS = {"responsiveness": 0.25, "match_rate": 0.45, "error_parity": 0.20, "structural_stability": 0.10}
_THRESHOLDS = ((90.0, "A"), (80.0, "B"), (70.0, "C"), (60.0, "D"))
CAP = "D"  # the best letter a run with a missing response can get
BREAKING_CAP = "B"  # the best letter a run with a breaking finding can get


def grade_letter(score: float, capped: bool = False, breaking: bool = False) -> str:
    """The letter for a 0-100 score; never better than D when ``capped`` (a missing response),
    never better than B when ``breaking`` (a breaking finding)."""
    letter = next((grade for floor, grade in _THRESHOLDS if score >= floor), "F")
    for cap, applies in ((CAP, capped), (BREAKING_CAP, breaking)):
        if applies and GRADES.index(letter) < GRADES.index(cap):
            letter = cap
    return letter


def score(results: Iterable[InteractionResult]) -> Score:
    """Score replayed interactions. No interactions at all scores 100 (A): nothing regressed."""
    return weighted_score(weighted(results))


def weighted_score(results: Iterable[tuple[InteractionResult, int]]) -> Score:
    """``score`` of results given as (result, how many count as it) (``results.weighted``)."""
    # One pass, no list: a replay's packed results are counted, not built one by one.
    total = responded = matched = parity = stable = 0
    for r, n in results:
        if r.status == "skipped":
            continue
        total += n
        responded += n * (r.status != "missing")
        matched += n * (r.status != "missing" and not any(f.cls == "breaking" for f in r.findings))
        parity += n * (r.live_error is not None and r.live_error == r.recorded_error)
        stable += n * (not any(f.kind == "structure-change" for f in r.findings))
    if total == 0:
        return Score(
            score=100.0,
            grade="A",
            responsiveness=1.0,
            match_rate=1.0,
            error_parity=1.0,
            structural_stability=1.0,
        )
    fractions = {
        "responsiveness": responded / total,
        "match_rate": matched / total,
        "error_parity": parity / total,
        "structural_stability": stable / total,
    }
    value = round(100.0 * sum(WEIGHTS[name] * fraction for name, fraction in fractions.items()), 1)
    capped = responded < total
    breaking = matched < responded
    grade = grade_letter(value, capped, breaking)
    return Score(
        score=value,
        grade=grade,
        capped=capped,
        breaking_capped=grade != grade_letter(value, capped),
        **{name: round(fraction, 4) for name, fraction in fractions.items()},
    )


def _clean(grade: str, what: str) -> str:
    letter = str(grade).strip().upper()
    if letter not in GRADES:
        raise ConfigError(f"invalid {what} {grade!r}: expected one of {', '.join(GRADES)}")
    return letter


def meets(grade: str, min_grade: str) -> bool:
    """Whether ``grade`` is at least as good as ``min_grade`` (letters, case-insensitive)."""
    return GRADES.index(_clean(grade, "grade")) <= GRADES.index(_clean(min_grade, "minimum grade"))
