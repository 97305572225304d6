"""MCP App documents compared as documents, and set-order noise in prose.

* A ``ui://`` resource, ``text/html;profile=mcp-app``, or any text/html of a megabyte or more is a
  document: a change is one finding with both sizes, both digests and a word diff of the changed
  region; it is masked as any text is (a page stamped with the time it was rendered is the same
  page), and a changed byte still fails.
* A text built from a set, in a new order in each live run, is learned as "the same items in
  another order": a third order is noise, an item added or a word changed still gates.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_replay_action.compare.engine import compare
from mcp_replay_action.compare.noise import NoiseRule, in_order, learn, split
from mcp_replay_action.compare.normalize import DOCUMENT_MIN_CHARS, is_document

pytestmark = pytest.mark.unit


def resource(text: str, uri: str = "ui://viewer/app.html", mime: str = "text/html;profile=mcp-app") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 3, "result": {"contents": [{"uri": uri, "mimeType": mime, "text": text}]}}


def bundle(marker: str, size: int = 2 * DOCUMENT_MIN_CHARS) -> str:
    # Minified JavaScript's shape: long runs of word characters, one line, a marker in the middle.
    half = "function a0b1c2(){return e_f_g_h}" * (size // 68)
    return "<!doctype html><script>" + half + marker + half + "</script>"


def test_a_changed_app_bundle_is_one_document_finding() -> None:
    findings = compare(resource(bundle("v=1;")), resource(bundle("v=22;")))
    assert len(findings) == 1, findings
    finding = findings[0]
    assert finding.kind == "value-change" and finding.cls == "breaking"
    assert finding.message.startswith("document changed: ")
    assert "sha256 " in finding.message and "first difference at character" in finding.message
    assert "[-1-]{+22+}" in (finding.diff or "") and len(finding.diff or "") < 1000


def test_an_unchanged_bundle_is_clean() -> None:
    assert compare(resource(bundle("v=1;")), resource(bundle("v=1;"))) == ()


def test_an_app_is_masked_as_text_and_a_changed_byte_still_fails() -> None:
    a = '<div data-id="6f1c9a52-7a1e-4d55-9c2b-0d9e1f0a2b3c">rendered 2026-11-30T10:00:00.123Z</div>'
    b = '<div data-id="0b8e4f11-2c3d-4e5f-8a9b-1c2d3e4f5a6b">rendered 2026-11-30T10:00:04.9Z</div>'
    assert compare(resource(a), resource(b)) == ()  # a page stamped with its render: same page
    changed = compare(resource(a), resource(b.replace("rendered", "rendred")))
    assert [f.message.split(":")[0] for f in changed] == ["document changed"]
    assert "[-rendered-]{+rendred+}" in (changed[0].diff or ""), changed


def test_a_changed_word_far_below_a_masked_render_time_is_the_first_difference() -> None:
    """The time differs at the top and a word near the end: the finding is told at the word (a
    position in the masked recorded text), not at the time."""
    body = "<tr><td>steady</td><td>ledger</td></tr>\n" * 30_000
    a = f'<meta name="rendered" content="2026-11-30T10:00:00.123Z">{body}<p>All rows reconciled.</p>'
    b = a.replace("10:00:00.123Z", "10:00:04.9Z").replace("reconciled", "rejected")
    [finding] = compare(resource(a), resource(b))
    at = a.replace("2026-11-30T10:00:00.123Z", "<timestamp>").index("reconciled") + len("re")
    assert finding.message.endswith(f"first difference at character {at}"), finding
    assert "reconciled" in str(finding.before) and "rejected" in str(finding.after), finding
    assert "[-reconciled-]{+rejected+}" in (finding.diff or ""), finding


def test_which_contents_are_documents() -> None:
    assert is_document({"uri": "ui://a/b.html", "text": "<p>"})
    assert is_document({"uri": "https://x", "mimeType": "text/html; profile=mcp-app", "text": "<p>"})
    assert is_document({"uri": "file:///x.html", "mimeType": "text/html", "text": "x" * DOCUMENT_MIN_CHARS})
    assert not is_document({"uri": "file:///x.html", "mimeType": "text/html", "text": "<p>short</p>"})
    assert not is_document({"uri": "ui://a/b.html", "blob": "AAAA"})


# -- set order in prose -----------------------------------------------------------------------

DESCRIPTION = (
    "Allows command (CLI) execution in the directory: /work\n\n"
    "Available commands: {commands}\nAvailable flags: {flags}\n\n"
    "Shell operators (&&, ||, |, >, >>, <, <<, ;) are not supported."
)


def tools(commands: str, flags: str = "-l, -a, --help") -> dict[str, Any]:
    tool = {"name": "run_command", "description": DESCRIPTION.format(commands=commands, flags=flags), "inputSchema": {}}
    return {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}


LIVE_A = tools("head, sort, wc, ls", "-l, -a, --help")
LIVE_B = tools("wc, ls, head, sort", "--help, -l, -a")


def _split(recorded: dict[str, Any]) -> tuple[Any, Any]:
    rules = learn([LIVE_A, LIVE_B], seq=1)
    return split(compare(recorded, LIVE_A), rules, recorded)


def test_a_third_order_of_the_same_items_is_noise() -> None:
    rules = learn([LIVE_A, LIVE_B], seq=1)
    assert [r.order for r in rules] == [", "]
    kept, noise = _split(tools("sort, head, ls, wc", "-a, --help, -l"))
    assert kept == () and len(noise) == 1


def test_an_item_added_or_a_word_changed_is_still_a_finding() -> None:
    # Not noise: still found (a tool's description reworded is a cosmetic finding, docs/classes.md).
    for recorded in (
        tools("sort, head, ls, wc, rm"),
        tools("sort, head, ls"),
        tools("sort, cat, ls, wc"),
        tools("sort, head, ls, wc").copy()
        | {"result": {"tools": [{**LIVE_A["result"]["tools"][0], "description": "x"}]}},
    ):
        kept, noise = _split(recorded)
        assert len(kept) == 1 and noise == (), recorded


def test_an_order_rule_round_trips_through_the_cassette_header() -> None:
    rule = learn([LIVE_A, LIVE_B], seq=1)[0]
    assert NoiseRule.from_json(rule.to_json()) == rule


def test_in_order_sorts_each_list_and_leaves_the_rest() -> None:
    assert in_order("Available: c, a, b\nThen: z, y", ", ") == "Available: a, b, c\nThen: y, z"
    assert in_order("no list here", ", ") == "no list here"


# -- the comparison's own bound ----------------------------------------------------------------


def test_a_comparison_past_its_budget_is_one_finding_that_says_so() -> None:
    from mcp_replay_action.compare.engine import CompareOptions

    recorded, live = (
        resource(bundle("v=1;", 1 << 16), "file:///a.txt", "text/plain"),
        resource(bundle("v=2;", 1 << 16), "file:///a.txt", "text/plain"),
    )
    (finding,) = compare(recorded, live, CompareOptions(budget=0))
    assert finding.kind == "value-change" and finding.cls == "breaking" and finding.path == "$"
    assert finding.message.startswith("not compared: the comparison did not finish in the request's time (0 s)")
    # With time to finish, the same pair is compared as usual.
    (finding,) = compare(recorded, live, CompareOptions(budget=60))
    assert finding.message.startswith("value changed at character")
