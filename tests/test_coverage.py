"""Coverage (``coverage.py``): the tools, prompts and resource templates the live server lists
that no cassette calls, in every report, and the ``--min-coverage`` gate. Recorded from real
servers (npm server-everything, a server on the official ``mcp`` SDK whose tool names a report must
show as inert text) and replayed through the CLI."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from e2e_helpers import NODE_BIN, PYTHON, SERVERS, command, record_through_proxy, replay, run_cli
from fakegithub import FakeGitHub
from github_action_run import make_workspace, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK
from mcp_replay_action.grade.coverage import matches
from mcp_replay_action.model.coverage import Coverage, KindCoverage

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

EVERYTHING = NODE_BIN / "mcp-server-everything"
NAMED = SERVERS / "named_server.py"
HOSTILE = ("@someone", "#1", "::warning::x", "plain")
REPO = "octo/demo"
SHA = "abc1234" + "0" * 33

needs_node = pytest.mark.skipif(
    not EVERYTHING.exists() or shutil.which("node") is None, reason="npm test servers not installed (tests/run.sh)"
)


# ---------------------------------------------------------------------------------------------
# URI templates: what a resources/read URI covers
# ---------------------------------------------------------------------------------------------


def test_a_uri_matches_the_templates_it_expands() -> None:
    assert matches("notes://{day}/entry", "notes://monday/entry")
    assert not matches("notes://{day}/entry", "notes://a/b/entry")  # a simple value holds no "/"
    assert not matches("notes://{day}/entry", "notes:///entry")  # nor is it empty
    assert matches("file:///{+path}", "file:///a/b/c.txt")
    assert matches("test://static/resource/{id}", "test://static/resource/7")
    assert not matches("test://static/resource/{id}", "test://static/resource/7/more")
    assert matches("search://q{?query,limit}", "search://q?query=x&limit=3")
    assert matches("search://q{?query,limit}", "search://q")
    assert matches("plain://literal", "plain://literal") and not matches("plain://literal", "plain://other")


def test_matching_a_long_hostile_uri_is_decided_without_backtracking() -> None:
    # A backtracking regex over "{a}x{b}x{c}y" on "x" * n tries O(n^3) splits; the position set
    # carried along the URI decides it in one pass (a bounded number of positions per character).
    uri = "s://" + "x" * 200_000
    assert not matches("s://{a}x{b}x{c}y", uri)
    assert matches("s://{a}x{b}x{c}", uri)


def test_the_percentage_counts_tools_prompts_and_templates_not_resources() -> None:
    coverage = Coverage(
        kinds=(
            KindCoverage("tools", 4, ("b",)),
            KindCoverage("prompts", 0, ()),
            KindCoverage("resources", 100, tuple(map(str, range(99)))),
        )
    )
    assert coverage.percent == 75.0
    assert Coverage().percent is None


# ---------------------------------------------------------------------------------------------
# A real server listing many tools: server-everything
# ---------------------------------------------------------------------------------------------


async def everything_session(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.list_prompts()
    templates = (await client.list_resource_templates()).resource_templates
    await client.call_tool("echo", {"message": "covered"})
    await client.call_tool("get-sum", {"a": 1, "b": 2})
    return {"templates": [t.uri_template for t in templates]}


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not EVERYTHING.exists():
        pytest.skip("npm test servers not installed (tests/run.sh)")
    path = tmp_path_factory.mktemp("everything") / "everything.jsonl"
    record_through_proxy(str(EVERYTHING), path, everything_session)
    return path


def recorded_names(cassette: Path, method: str, key: str, name: str) -> list[str]:
    """The names the recording's own listing answer gave: the live server's, from another source."""
    for line in cassette.read_text("utf-8").splitlines()[1:]:
        inter = json.loads(line)
        if inter["message"].get("method") == method:
            return [item[name] for item in inter["response"]["result"][key]]
    raise AssertionError(f"no {method} in {cassette}")


def kind_of(report: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(k for k in report["coverage"]["kinds"] if k["kind"] == kind)


@needs_node
def test_everything_lists_more_tools_than_the_cassette_calls(everything: Path, tmp_path: Path) -> None:
    run = replay(str(EVERYTHING), everything, report=tmp_path / "r.json", gate=False)
    assert run.code == 0, run.describe()
    names = recorded_names(everything, "tools/list", "tools", "name")
    assert len(names) > 5 and {"echo", "get-sum"} <= set(names)
    tools = kind_of(run.report, "tools")
    assert tools["listed"] == len(names) and tools["called"] == 2, tools
    assert tools["uncovered"] == [n for n in names if n not in ("echo", "get-sum")]
    prompts = kind_of(run.report, "prompts")
    assert prompts["called"] == 0 and prompts["listed"] == len(
        recorded_names(everything, "prompts/list", "prompts", "name")
    )
    listed = sum(k["listed"] for k in run.report["coverage"]["kinds"] if k["kind"] != "resources")
    assert run.report["coverage"]["percent"] == pytest.approx(100 * 2 / listed, abs=0.01)
    assert f"coverage: {len(names) - 2} of {len(names)} tools have no recorded call: " in run.stdout, run.describe()
    assert run.report["coverage"]["unknown"] == []


@needs_node
def test_min_coverage_fails_below_and_names_what_is_never_called(everything: Path, tmp_path: Path) -> None:
    names = recorded_names(everything, "tools/list", "tools", "name")
    failed = replay(str(EVERYTHING), everything, "--min-coverage", "90", report=tmp_path / "f.json", gate=False)
    assert failed.code == 1, failed.describe()
    (reason,) = failed.report["gate"]["reasons"]
    assert "is below the minimum 90%" in reason and "echo" not in reason.split("never called:")[1], reason
    uncalled = [n for n in names if n not in ("echo", "get-sum")]
    assert all(n in reason for n in uncalled[:10]), reason
    assert failed.report["gate"]["coverage_held"] is False and failed.report["gate"]["min_coverage"] == 90
    assert "gate FAILED (fail on breaking, min coverage 90%): coverage " in failed.stdout, failed.describe()
    held = replay(str(EVERYTHING), everything, "--min-coverage", "1", report=tmp_path / "p.json", gate=False)
    assert held.code == 0, held.describe()
    assert held.report["gate"]["coverage_held"] is True and held.report["gate"]["reasons"] == []


# ---------------------------------------------------------------------------------------------
# Across cassettes, a cassette that never lists, and names that must stay text
# ---------------------------------------------------------------------------------------------


def named(*names: str) -> str:
    return command(PYTHON, NAMED, *names)


async def list_and_call(client: Client) -> dict[str, Any]:
    await client.list_tools()
    await client.list_prompts()
    await client.list_resource_templates()
    await client.call_tool("plain", {"text": "x"})
    return {}


async def call_only(client: Client) -> dict[str, Any]:
    # No listing: the SDK lists tools itself before a call_tool, not before these.
    await client.get_prompt("brief", {"topic": "coverage"})
    await client.read_resource("notes://monday/entry")
    return {}


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("named")
    lists, calls = folder / "a-lists.jsonl", folder / "b-calls.jsonl"
    record_through_proxy(named(*HOSTILE), lists, list_and_call)
    record_through_proxy(named(*HOSTILE), calls, call_only)
    return lists, calls


def test_a_call_in_one_cassette_covers_what_another_listed(pair: tuple[Path, Path], tmp_path: Path) -> None:
    lists, calls = pair
    run = run_cli(
        "replay", "--server", named(*HOSTILE), "--cassette", str(lists), "--cassette", str(calls),
        report=tmp_path / "r.json",
    )  # fmt: skip
    assert run.code == 0, run.describe()
    coverage = run.report["coverage"]
    assert kind_of(run.report, "tools")["uncovered"] == ["@someone", "#1", "::warning::x"]
    templates = kind_of(run.report, "resource templates")
    assert templates["called"] == 1 and templates["uncovered"] == [], templates  # read in the other cassette
    assert kind_of(run.report, "prompts") == {
        "kind": "prompts",
        "listed": 1,
        "called": 1,
        "uncovered": [],
        "partial": False,
    }
    assert coverage["listing_cassettes"] == 1 and coverage["cassettes"] == 2
    assert "listings from 1 of 2 cassettes" in run.stdout
    # Only the listing cassette's JSON holds the names; merge recomputes from them.
    by_path = {Path(c["path"]).name: c for c in run.report["cassettes"]}
    assert by_path["b-calls.jsonl"]["listed"] == {}, by_path["b-calls.jsonl"]


def test_a_cassette_that_never_lists_gives_no_coverage_and_says_so(pair: tuple[Path, Path], tmp_path: Path) -> None:
    _, calls = pair
    run = replay(named(*HOSTILE), calls, report=tmp_path / "r.json", gate=False)
    assert run.code == 0, run.describe()
    coverage = run.report["coverage"]
    assert coverage["kinds"] == [] and coverage["percent"] is None
    assert coverage["unknown"] == ["prompts", "resources"], coverage
    assert "prompts: called (prompts/get), but no cassette lists them (prompts/list): coverage unknown" in run.stdout
    gated = replay(named(*HOSTILE), calls, "--min-coverage", "10", report=tmp_path / "g.json", gate=False)
    assert gated.code == 1, gated.describe()
    assert gated.report["gate"]["reasons"][0].startswith("coverage unknown (min 10%)"), gated.report["gate"]


def test_server_names_stay_inert_in_every_sink(pair: tuple[Path, Path], tmp_path: Path) -> None:
    lists, _ = pair
    md = tmp_path / "r.md"
    run = replay(
        named(*HOSTILE), lists, "--min-coverage", "100", "--markdown", str(md), report=tmp_path / "r.json", gate=False
    )
    assert run.code == 1, run.describe()
    # The console (the job log in the action) never starts a workflow command.
    for line in run.stdout.splitlines():
        assert not line.lstrip().startswith("::"), line
    assert "tools have no recorded call: @someone, #1, " in run.stdout
    text = md.read_text("utf-8")
    assert "3 of 4 tools have no recorded call" in text
    # No mention outside code; the accept command (a fenced code block, where GitHub makes no
    # mention) repeats the user's own --server words as typed, so that it can be pasted.
    prose = re.sub(r"(?ms)^(`{3,})[^\n]*\n.*?^\1[ \t]*$", "", text)
    assert "@someone" not in prose and "@\u200dsomeone" in prose  # no mention
    assert "#1" not in prose.replace("#\u200d1", "")  # no issue link
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())


# ---------------------------------------------------------------------------------------------
# The action: job summary, sticky comment and the gate, against the fake GitHub API
# ---------------------------------------------------------------------------------------------


def test_the_action_summary_and_comment_name_what_no_cassette_calls(
    pair: tuple[Path, Path], tmp_path: Path, fake: FakeGitHub
) -> None:
    lists, _ = pair
    ws = make_workspace(tmp_path, {"cassettes/lists.jsonl": lists})
    inputs = {"server": named(*HOSTILE), "github-token": "app-token", "min-coverage": "50"}
    run = run_action(ws, event_name="pull_request", event=pull_request(7, SHA), inputs=inputs, api_url=fake.url)
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    gate = [c for c in run.annotations("error") if c.properties.get("title") == "mcp-replay gate"]
    assert len(gate) == 1 and "coverage 16.6% is below the minimum 50%" in gate[0].data, gate
    (body,) = [c["body"] for c in fake.comments[(REPO, 7)]]
    for text in (run.summary, body):
        assert "❌ min-coverage: 50%" in text
        assert "<details><summary>3 of 4 tools have no recorded call</summary>" in text
        names = text.split("3 of 4 tools have no recorded call</summary>", 1)[1].split("</details>", 1)[0]
        assert names.strip() == "@\u200dsomeone, &#35;\u200d1, &#58;:warning::x"  # no mention, link or command
        assert not any(line.startswith("::") for line in text.splitlines())
    # The job log: a server name inside the gate's annotation starts no workflow command.
    assert not [c for c in run.commands if c.name == "warning"], run.stdout
    held = run_action(
        ws,
        event_name="pull_request",
        event=pull_request(7, SHA),
        inputs={**inputs, "min-coverage": "10%"},
        api_url=fake.url,
    )
    assert held.returncode == EXIT_OK, held.stdout + held.stderr
    (body,) = [c["body"] for c in fake.comments[(REPO, 7)]]  # the same comment, edited
    assert "✅ min-coverage: 10%: met" in body and "3 of 4 tools have no recorded call" in body


def test_merged_shards_cover_as_one_run_does(pair: tuple[Path, Path], tmp_path: Path) -> None:
    lists, calls = pair
    shards = []
    for i, cassette in enumerate(pair):
        shard = replay(named(*HOSTILE), cassette, "--min-coverage", "60", report=tmp_path / f"s{i}.json", gate=False)
        shards.append(tmp_path / f"s{i}.json")
        assert shard.report is not None and "coverage" in shard.report, shard.describe()
    merged = run_cli("merge", *map(str, shards), report=tmp_path / "m.json")
    whole = run_cli(
        "replay", "--server", named(*HOSTILE), "--cassette", str(lists), "--cassette", str(calls),
        "--min-coverage", "60", report=tmp_path / "w.json",
    )  # fmt: skip
    assert merged.report is not None and whole.report is not None, merged.describe()
    assert merged.report["coverage"] == whole.report["coverage"], (merged.report["coverage"], whole.report["coverage"])
    assert merged.report["gate"] == whole.report["gate"] and whole.code == merged.code == 1
