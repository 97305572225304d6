"""Grading: the weighted score, letters, the missing-response cap and the gate."""

from __future__ import annotations

import pytest

from mcp_replay_action.compare.engine import compare, status_for
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.grade.score import GRADES, grade_letter, meets, score
from mcp_replay_action.model.results import Finding, InteractionResult

pytestmark = pytest.mark.unit

STRUCTURE = Finding("structure-change", "additive", "$.result.echoed", "key 'echoed' added")
VALUE = Finding("value-change", "breaking", "$.result.content[0].text", "value changed")
COSMETIC = Finding("value-change", "cosmetic", "$.result.serverInfo.version", "value changed")
MISSING = Finding("missing-response", "breaking", "$", "no response")


def result(
    seq: int, *findings: Finding, recorded_error: bool = False, live_error: bool | None = False
) -> InteractionResult:
    status = status_for(findings)
    return InteractionResult(
        seq=seq,
        line=seq + 2,
        method="tools/call",
        name="add",
        status=status,
        findings=findings,
        recorded_error=recorded_error,
        live_error=None if status == "missing" else live_error,
    )


def test_seed_example_scores_89_b() -> None:
    # The additive key costs structural stability only; the breaking value change costs match rate.
    results = [result(0), result(1), result(2, STRUCTURE), result(3, VALUE), result(4)]
    s = score(results)
    assert s.score == 89.0
    assert s.grade == "B"
    assert (s.responsiveness, s.match_rate, s.error_parity, s.structural_stability) == (1.0, 0.8, 1.0, 0.8)
    assert s.capped is False


def test_seed_example_from_real_comparisons() -> None:
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "5"}]}}
    echoed = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "5"}], "echoed": {}}}
    six = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "6"}]}}
    pairs = [(ok, ok), (ok, ok), (ok, echoed), (ok, six), (ok, ok)]
    results = [result(i, *compare(a, b)) for i, (a, b) in enumerate(pairs)]
    assert [r.status for r in results] == ["pass", "pass", "fail", "fail", "pass"]
    assert (score(results).score, score(results).grade) == (89.0, "B")


def test_a_release_that_only_adds_fields_grades_a() -> None:
    results = [result(i, STRUCTURE) for i in range(5)]
    s = score(results)
    assert (s.match_rate, s.structural_stability) == (1.0, 0.0)
    assert s.grade == "A", s


def test_a_breaking_change_everywhere_costs_match_rate() -> None:
    s = score([result(i, VALUE) for i in range(5)])
    assert s.match_rate == 0.0 and s.grade == "F", s


def test_all_pass_is_100_a() -> None:
    s = score([result(i) for i in range(3)])
    assert (s.score, s.grade, s.capped) == (100.0, "A", False)


def test_empty_results_score_100_a() -> None:
    s = score([])
    assert (s.score, s.grade, s.capped) == (100.0, "A", False)
    assert (s.responsiveness, s.match_rate, s.error_parity, s.structural_stability) == (1.0, 1.0, 1.0, 1.0)


def test_cosmetic_findings_pass_and_do_not_lower_the_score() -> None:
    r = result(0, COSMETIC)
    assert r.status == "pass"
    assert score([r]).score == 100.0


def test_missing_response_caps_the_grade_at_d_but_keeps_the_score() -> None:
    results = [result(i) for i in range(19)] + [result(19, MISSING)]
    s = score(results)
    # responsiveness 0.95, match 0.95, parity 0.95, stability 1.0
    assert s.score == pytest.approx(95.5)
    assert s.grade == "D"
    assert s.capped is True


def test_missing_response_does_not_lift_an_f() -> None:
    results = [result(0, MISSING), result(1, MISSING), result(2, VALUE)]
    s = score(results)
    assert s.grade == "F" and s.capped is True


def test_error_parity_counts_success_error_class() -> None:
    # recorded an error and got one: parity; recorded success and got an error: no parity
    flip = Finding("error-status-change", "breaking", "$", "a result became an error")
    results = [result(0, recorded_error=True, live_error=True), result(1, flip, recorded_error=False, live_error=True)]
    s = score(results)
    assert s.error_parity == 0.5
    assert s.match_rate == 0.5
    assert s.score == pytest.approx(25 + 22.5 + 10 + 10)


def test_skipped_interactions_do_not_count() -> None:
    skipped = InteractionResult(seq=9, line=11, method="tools/call", name=None, status="skipped")
    assert score([result(0), skipped]).score == 100.0


@pytest.mark.parametrize(
    ("value", "capped", "letter"),
    [
        (100.0, False, "A"),
        (90.0, False, "A"),
        (89.9, False, "B"),
        (80.0, False, "B"),
        (79.99, False, "C"),
        (70.0, False, "C"),
        (60.0, False, "D"),
        (59.9, False, "F"),
        (0.0, False, "F"),
        (100.0, True, "D"),
        (65.0, True, "D"),
        (10.0, True, "F"),
    ],
)
def test_grade_letter(value: float, capped: bool, letter: str) -> None:
    assert grade_letter(value, capped) == letter


def test_meets() -> None:
    assert GRADES == ("A", "B", "C", "D", "F")
    assert meets("A", "B") and meets("B", "B") and not meets("C", "B")
    assert meets("f", "f") and meets("b", "c")
    with pytest.raises(ConfigError, match="invalid minimum grade 'E'"):
        meets("A", "E")
    with pytest.raises(ConfigError):
        meets("", "A")


def test_one_breaking_change_in_nine_is_not_an_a() -> None:
    # The regressed sample twin: 1 breaking and 1 additive finding in 9 answers scores 93.9; the
    # share alone would say A, but an A means nothing breaking.
    results = [result(0, VALUE), result(1, STRUCTURE), *(result(i) for i in range(2, 9))]
    s = score(results)
    assert (s.score, s.grade, s.breaking_capped, s.capped) == (93.9, "B", True, False), s
    assert grade_letter(93.9) == "A" and grade_letter(93.9, breaking=True) == "B"


def test_the_breaking_cap_only_ever_lowers_and_says_so_only_then() -> None:
    s = score([result(0), result(1, VALUE)])  # 77.5: C on its own, the cap changes nothing
    assert (s.grade, s.breaking_capped) == ("C", False), s
    s = score([result(i) for i in range(9)] + [result(9, MISSING)])  # the missing cap is the lower one
    assert (s.grade, s.capped, s.breaking_capped) == ("D", True, False), s
    s = score([result(i, STRUCTURE) for i in range(3)] + [result(3, COSMETIC)])
    assert (s.grade, s.breaking_capped) == ("A", False), s
