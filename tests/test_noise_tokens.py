"""Noise at the token: what the confirmation pass learns covers only the tokens that varied; and
an MCP App page is masked like any text.

The end-to-end cases run ``tests/servers/clause_server.py`` (official SDK), whose answer quotes an
id minted afresh by every start inside prose (``Created note n_<hex> (groceries).``), recorded with
the SDK client through ``mcp-replay record``: a build that drops the clause next to the id, or
changes a word beside it, still fails under ``--fail-on any``, while an unchanged replay passes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import SERVERS, python_server, record_through_proxy, replay
from mcp_replay_action.compare.engine import compare
from mcp_replay_action.compare.longtext import first_unexplained
from mcp_replay_action.compare.noise import learn, split
from mcp_replay_action.compare.tokens import first_unfit, text_pattern

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

CLAUSE = python_server(SERVERS / "clause_server.py")
PAGE = "ui://clause/page.html"


def said(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}


def fits(pattern: str, text: str) -> bool:
    return re.fullmatch(pattern, text, re.DOTALL) is not None


def test_a_minted_id_is_one_word_and_the_clause_beside_it_is_not() -> None:
    lives = ["Created note n_9e37c05a.", "Created note n_5f7d6ccd."]
    pattern = text_pattern(lives).pattern
    assert all(fits(pattern, t) for t in lives)
    assert fits(pattern, "Created note n_00aa.")
    assert not fits(pattern, "Created note n_00aa (groceries).")  # the clause the build dropped
    assert not fits(pattern, "Made note n_00aa.")  # a word changed
    # Through learn and split, as the confirmation pass runs them: the recording keeps failing.
    recorded = said("Created note n_1b2c3d4e (groceries).")
    kept, noise = split(compare(recorded, said(lives[0])), learn([said(t) for t in lives]), recorded)
    assert [f.path for f in kept] == ["$.result.content[0].text"] and noise == ()


@pytest.mark.parametrize(
    ("lives", "still_noise", "still_fails"),
    [
        (
            ["Created note n_9e37c05a (groceries).", "Created note n_5f7d6ccd (groceries)."],
            ["Created note n_77 (groceries)."],
            ["Created note n_77.", "Created note n_77 (chores).", "Created note n_77 (groceries, milk)."],
        ),
        (
            ["worker pid 4242 ready after 12.5 ms; 3 jobs queued", "worker pid 977 ready after 8 ms; 3 jobs queued"],
            ["worker pid 31 ready after 40 ms; 3 jobs queued"],
            ["worker pid 31 ready after 40 ms; 4 jobs queued", "worker pid x31 ready after 40 ms; 3 jobs queued"],
        ),
        (
            ["took 3 s", "took 1 min 2 s"],  # a run of another length: within a line, up to " s"
            ["took 5 s", "took 5 h s"],
            ["took 5 s extra", "took 5\nh s"],
        ),
        (
            ["tok A_b-c end", "tok Zq end"],  # within a word
            ["tok Q end"],
            ["tok Q R end"],
        ),
    ],
)
def test_only_the_tokens_that_varied_are_wildcards(
    lives: list[str], still_noise: list[str], still_fails: list[str]
) -> None:
    pattern = text_pattern(lives).pattern
    assert all(fits(pattern, t) for t in lives), pattern
    assert all(fits(pattern, t) for t in still_noise), pattern
    assert not any(fits(pattern, t) for t in still_fails), pattern


def test_a_pattern_never_backtracks_over_a_long_text() -> None:
    """Every wildcard is possessive and stops where the next literal starts: a megabyte that
    almost fits is refused in one pass (a lazy ``.*?`` pattern takes quadratic time here)."""
    pattern = text_pattern(["a x1 b y1 c z1 d", "a x2 b y2 c z2 d q r"]).pattern
    hostile = "a " + "x b " * 200_000 + "y"
    assert re.fullmatch(pattern, hostile) is None  # bounded by pytest's timeout if it backtracked


async def notes_session(client: Client) -> dict[str, Any]:
    made = await client.call_tool("create_note", {"title": "groceries"})
    note_id = made.content[0].text.split()[2].rstrip(".")  # type: ignore[union-attr]
    assert not (await client.call_tool("get_note", {"id": note_id})).is_error
    await client.read_resource(PAGE)
    return {}


@pytest.fixture(scope="module")
def clause_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cassette = tmp_path_factory.mktemp("clause") / "clause.jsonl"
    record_through_proxy(CLAUSE, cassette, notes_session)
    return cassette


def _paths(run: Any, method: str) -> set[str]:
    return {f["path"] for i in run.interactions() if i["method"] == method for f in i["findings"]}


def test_an_unchanged_replay_passes_under_fail_on_any(clause_cassette: Path) -> None:
    run = replay(CLAUSE, clause_cassette, "--fail-on", "any", report=clause_cassette.with_name("same.json"), gate=False)
    assert run.code == 0, run.describe()
    assert run.findings() == [], run.describe()


@pytest.mark.parametrize("variant", ["clause", "word"])
def test_a_change_next_to_a_minted_id_fails(clause_cassette: Path, variant: str) -> None:
    run = replay(
        CLAUSE,
        clause_cassette,
        "--fail-on",
        "any",
        "--env",
        f"CLAUSE_SERVER_VARIANT={variant}",
        report=clause_cassette.with_name(f"{variant}.json"),
        gate=False,
    )
    assert run.code == 1, run.describe()
    created = [i for i in run.interactions() if i["method"] == "tools/call"][0]
    assert created["status"] == "fail", run.describe()
    assert any(f["path"].endswith("content[0].text") or ".structuredContent" in f["path"] for f in created["findings"])


def test_a_page_stamped_with_its_render_time_fails_only_on_a_changed_byte(clause_cassette: Path) -> None:
    """The MCP App page carries the ISO time and a UUID of its render (masked) and the PID that
    served it (learned in its window by the confirmation pass): the unchanged replay above passes;
    a build that changes one byte deep inside it fails, with where the texts first differ."""
    run = replay(
        CLAUSE,
        clause_cassette,
        "--env",
        "CLAUSE_SERVER_VARIANT=byte",
        report=clause_cassette.with_name("byte.json"),
        gate=False,
    )
    assert run.code == 1, run.describe()
    read = [i for i in run.interactions() if i["method"] == "resources/read"][0]
    [finding] = read["findings"]
    assert finding["message"].startswith("document changed: "), finding
    assert "first difference at character" in finding["message"] and "sha256" in finding["message"], finding
    assert read["noise"] == [], read  # the PID's window does not explain a byte changed elsewhere
    # ... and the finding is told at that byte, not at the PID the window holds above it.
    assert "hello world" in finding["before"] and "hello dlrow" in finding["after"], finding
    assert "[-world-]{+dlrow+}" in finding["diff"] and "pid" not in finding["diff"], finding


def _page(pid: int, cell: str = "world", far: str = "") -> dict[str, Any]:
    rows = [f"<tr><td>{i:06d}</td><td>hello {cell if i == 3000 else 'world'}</td></tr>\n" for i in range(6000)]
    rows.insert(100, f"<p>served by worker pid {pid}</p>\n")
    text = "<html><body>" + "".join(rows) + f"<footer>{far}</footer></body></html>"
    return {"jsonrpc": "2.0", "id": 2, "result": {"contents": [{"uri": "ui://a/page.html", "text": text}]}}


def test_a_long_text_learns_only_the_window_where_its_live_copies_differ() -> None:
    """A page of 200 KB: the PID that varies between the live runs is learned in its window, so a
    third PID is noise; a changed byte far from it, or a word changed beside it, still fails."""
    rules = learn([_page(4242), _page(977)])
    [rule] = rules
    assert rule.head is not None and rule.tail is not None and rule.evidence == ("4242", "977"), rule
    live = _page(4242)
    for recorded, noisy in (
        (_page(31), True),
        (_page(31, cell="dlrow"), False),  # a changed byte 3,000 rows away
        (_page(31, far="x"), False),
    ):
        kept, noise = split(compare(recorded, live), rules, recorded, None, live)
        assert (kept == () and len(noise) == 1) if noisy else (len(kept) == 1 and noise == ()), recorded
    worded = _page(31)
    page = worded["result"]["contents"][0]
    page["text"] = page["text"].replace("served by worker pid", "served by server pid")
    kept, noise = split(compare(worded, live), rules, worded, None, live)
    assert len(kept) == 1 and noise == ()
    # Without the live text beside it, a window cannot be placed: it explains nothing.
    assert split(compare(_page(31), live), rules, _page(31))[1] == ()
    from mcp_replay_action.compare.noise import NoiseRule

    assert NoiseRule.from_json(rule.to_json()) == rule


def test_a_long_text_that_varies_in_two_far_places_is_not_learned() -> None:
    assert learn([_page(4242, far="a"), _page(977, far="b")]) == []


def test_a_page_that_still_fails_is_shown_at_the_change_not_at_the_pid_learned_above_it() -> None:
    """The PID near the top varied between the live runs and a cell 2,900 rows further changed:
    the finding gates, and its first difference (message, renderings, word diff) is the cell's,
    placed in each text (the PIDs' lengths differ, so the positions do)."""
    rules = learn([_page(4242), _page(977)])
    recorded, live = _page(31), _page(4242, cell="dlrow")
    [naive] = compare(recorded, live)
    text = recorded["result"]["contents"][0]["text"]
    assert f"first difference at character {text.index('31</p>')}" in naive.message  # the PID
    [kept], noise = split(compare(recorded, live), rules, recorded, None, live)
    at = text.index("<td>hello world", text.index("003000")) + len("<td>hello ")
    assert noise == () and kept.message.endswith(f"first difference at character {at}"), kept
    assert "hello world" in str(kept.before) and "hello dlrow" in str(kept.after), kept
    assert "[-world-]{+dlrow+}" in kept.diff and "4242" not in kept.diff, kept.diff
    assert (kept.path, kept.rule, kept.cls) == (naive.path, naive.rule, naive.cls)


def test_the_first_difference_no_window_explains() -> None:
    a = "<p>pid 31</p>" + "x" * 50 + "<b>world</b>"
    b = "<p>pid 4242</p>" + "x" * 50 + "<b>dlrow</b>"
    number = r"\d++(?:\.\d++)?+"
    assert first_unexplained(a, b, []) == (7, 7)  # no noise: the PID is the first difference
    assert first_unexplained(a, b, [(7, number)]) == (a.index("world"), b.index("dlrow"))
    # A change before the window stands; one inside it is where the window stops fitting.
    assert first_unexplained("<P>" + a[3:], b, [(7, number)]) == (1, 1)
    assert first_unexplained(a.replace("31", "3x"), b, [(7, number)]) == (8, 11)
    assert first_unexplained(a.replace("31", "x1"), b, [(7, number)]) == (7, 7)  # fits neither
    # Nothing differs past the window: what differs is in it, shown where it starts.
    assert first_unexplained(a, a.replace("31", "977"), [(7, number)]) == (7, 7)
    # Two windows, the second placed past what the first shifted.
    c, d = "id 5 and 6 then end", "id 777 and 8888 then END"
    assert first_unexplained(c, d, [(3, number), (9, number)]) == (c.index("end"), d.index("END"))


@pytest.mark.parametrize("joint", ["\n", " "], ids=["lines", "one-line"])
def test_a_long_text_that_still_fails_is_shown_past_its_learned_window(joint: str) -> None:
    """Not only a document: a 40 KB log (lines, or one long line) whose worker PID varies near
    its top and whose last entry changed is told at that entry."""

    def log(pid: int, last: str = "done") -> dict[str, Any]:
        entries = [f"worker pid {pid} started", *(f"step {i:05d} ok" for i in range(3000)), f"job {last}"]
        return said(joint.join(entries))

    rules = learn([log(4242), log(977)])
    assert [(r.head is not None, r.evidence) for r in rules] == [(True, ("4242", "977"))], rules
    recorded, live = log(31), log(4242, last="failed")
    [kept], noise = split(compare(recorded, live), rules, recorded, None, live)
    text = recorded["result"]["content"][0]["text"]
    assert noise == () and f" at character {text.index('job done') + 4}" in kept.message, kept
    assert "job done" in str(kept.before) and "job failed" in str(kept.after), kept
    if joint == "\n":  # the unified diff starts above the entry too, not at the PID 3,000 lines up
        assert kept.diff.startswith("(from line 3000)\n") and "+job failed" in kept.diff, kept.diff
        assert "pid" not in kept.diff, kept.diff


def _small_page(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 2, "result": {"contents": [{"uri": "ui://a/small.html", "text": text}]}}


@pytest.mark.parametrize("wrap", [said, _small_page], ids=["prose", "small-document"])
def test_a_short_text_that_still_fails_is_shown_past_its_learned_tokens(wrap: Any) -> None:
    """A text under the window's size is learned whole (one pattern, a wildcard per varying
    token): the first difference shown is the first one that pattern does not allow."""
    line = "<p>worker pid {pid} ready after {ms} ms; 3 jobs queued for the {when} build</p>"
    rules = learn(
        [wrap(line.format(pid=4242, ms=12.5, when="nightly")), wrap(line.format(pid=977, ms=8, when="nightly"))]
    )
    assert [r.head for r in rules] == [None], rules
    recorded = wrap(line.format(pid=31, ms=40, when="nightly"))
    live = wrap(line.format(pid=4242, ms=12.5, when="weekly"))
    [naive] = compare(recorded, live)
    assert naive.message.startswith(("value changed at character 14:", "document changed: ")), naive  # the PID
    assert naive.message.startswith("value") or naive.message.endswith("first difference at character 14")
    [kept], noise = split(compare(recorded, live), rules, recorded, None, live)
    text = line.format(pid=31, ms=40, when="nightly")
    assert noise == () and f" at character {text.index('nightly')}" in kept.message, kept
    assert "nightly" in str(kept.before) and "weekly" in str(kept.after), kept
    assert "[-nightly-]{+weekly+}" in kept.diff, kept.diff


def test_first_unfit_is_none_when_the_recording_does_not_fit_or_no_one_change_breaks_it() -> None:
    pattern = text_pattern(["pid 4242 ok", "pid 977 ok"]).pattern
    assert first_unfit("pid 31 ok", "pid 4242 no", pattern) == (7, 9)
    assert first_unfit("pid x ok!", "pid 4242 ok", pattern) is None  # the recording does not fit
    assert first_unfit("pid 31 ok", "pid 4242 ok", pattern) is None  # every difference fits


def test_a_recorded_id_the_mask_took_for_minted_is_explained_where_the_live_ids_varied() -> None:
    """``j_5bc04ace`` looks minted to the mask (``<opaque>``); ``j_2ffdfad2`` and ``j_99fdfad2``,
    with two digits each, do not: a value that varies between the live runs there is noise all
    the same, and a word changed beside it still fails."""

    def job(value: str, state: str = "done") -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"job": value, "state": state}}}

    rules = learn([job("j_2ffdfad2"), job("j_99fdfad2")])
    recorded, live = job("j_5bc04ace"), job("j_2ffdfad2")
    assert [f.before for f in compare(recorded, live)] == ["<opaque>"]
    assert split(compare(recorded, live), rules, recorded, None, live)[0] == ()
    failed = job("j_2ffdfad2", "failed")
    kept, noise = split(compare(recorded, failed), rules, recorded, None, failed)
    assert [f.path for f in kept] == ["$.result.structuredContent.state"] and len(noise) == 1
