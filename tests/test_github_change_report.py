"""The refresh pull request body (change_report.py + templates/refresh.md) on hand-built reports:
counts per class, worst changes first, hostile text inert, and always within GitHub's limit."""

from __future__ import annotations

import pytest

from mcp_replay_action.github.change_report import MAX_BODY_CHARS, Rewritten, render_change_report
from mcp_replay_action.github.template import MARGIN, Links
from mcp_replay_action.model.results import CassetteResult, Finding, InteractionResult, Report
from report_fixtures import HOSTILE, healthy_cassette, regressed_cassette, score
from test_github_main import check_markdown

pytestmark = pytest.mark.unit

LINKS = Links(server_url="https://github.com", repository="octo/demo", sha="a" * 40, run_url="https://x/runs/1")


def report(*cassettes: CassetteResult) -> Report:
    return Report(cassettes=cassettes, score=score(80.0, "B"), target="python -m srv --api-key=s3cr3t")


def test_only_rewritten_cassettes_are_listed_with_their_classified_changes() -> None:
    body = render_change_report(
        report(healthy_cassette(), regressed_cassette()),
        [Rewritten("cassettes/healthy.jsonl", 0, 0), Rewritten("cassettes/regressed.jsonl", 2, 1)],
        links=LINKS,
    )
    check_markdown(body)
    assert "cassettes/healthy.jsonl" not in body
    assert "#### cassettes/regressed.jsonl" in body
    assert "1 of 2 cassettes re-recorded" in body and "s3cr3t" not in body
    assert body.index("| breaking |") < body.index("| additive |")  # worst first
    assert "https://github.com/octo/demo/blob/" + "a" * 40 + "/cassettes/regressed.jsonl#L" in body
    assert "1 interaction got no answer" in body  # kept responses are called out


def test_a_huge_or_hostile_change_set_fits_and_stays_inert() -> None:
    finding = Finding(
        "value-change", "breaking", "$.result." + HOSTILE, HOSTILE * 3, HOSTILE, HOSTILE * 50, diff=HOSTILE * 40
    )
    results = tuple(
        InteractionResult(seq=i, line=i + 2, method="tools/call", name=HOSTILE, status="fail", findings=(finding,))
        for i in range(400)
    )
    cassettes = tuple(
        CassetteResult(path=f"cassettes/{HOSTILE[:20]}{n}.jsonl", results=results, score=score(10.0, "F"))
        for n in range(5)
    )
    body = render_change_report(report(*cassettes), [Rewritten(c.path, 400, 0) for c in cassettes], links=LINKS)
    assert len(body) <= MAX_BODY_CHARS - MARGIN
    check_markdown(body)
    assert "more change" in body or "Cut to fit" in body
