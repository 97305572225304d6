"""The way over from mcp-recorder, walked with the real mcp-recorder 0.5.0 (test extra) and a real
server nobody here wrote (npm ``@modelcontextprotocol/server-everything``):

- a scenarios file written in mcp-recorder's format (its README's stdio target, ``${VAR:-default}``
  interpolation, a ``redact`` block) records with ``mcp-replay record-scenarios`` unchanged, and
  the cassettes replay;
- ``mcp-replay convert x.jsonl x.json`` writes a file the real mcp-recorder loads and whose
  ``mcp-recorder verify`` passes against the same server (before: ``response_status: null``, which
  its model refuses);
- ``mcp-replay replay --update`` on a file mcp-recorder itself wrote adds no key to it;
- ``mcp-replay replay`` reads mcp-recorder's JSON cassettes as they are;
- mcp-recorder's own demo ``scenarios.yml`` and the Scenarios example its 0.5.0 package ships
  (README), and two real projects' files (tavily-mcp's, unchanged; firecrawl-mcp-server's) record,
  replay and pass the real ``mcp-recorder verify``, against local stand-ins of their servers
  (tests/servers/recorder_demo_server.py, tests/servers/tavily_build/): an HTTP file changes only
  its target's scheme and host.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from e2e_helpers import MCP_REPLAY, SERVERS, VENV_BIN
from http_helpers import free_port, running

EVERYTHING = SERVERS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
RECORDER = VENV_BIN / "mcp-recorder"
TIMEOUT = 180

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

SCENARIOS = """\
schema_version: "1.0"

target:
  command: "node"
  args: ["{server}"]
  env:
    EVERYTHING_GREETING: "${{EVERYTHING_GREETING:-hello}}"

redact:
  server_url: true
  env:
    - EVERYTHING_TOKEN

scenarios:
  tools_and_schemas:
    description: "Discover tools and call the simple ones"
    actions:
      - list_tools
      - call_tool:
          name: echo
          arguments:
            message: "hello from the migration test"
      - call_tool:
          name: get-sum
          arguments:
            a: 2
            b: 3
  prompts:
    description: "List the prompts"
    actions:
      - list_prompts
"""


@pytest.fixture(scope="module")
def tools() -> None:
    if not EVERYTHING.exists() or shutil.which("node") is None:
        pytest.skip("the npm test servers are not installed: npm ci --prefix tests/servers")
    if not RECORDER.exists():
        pytest.skip("mcp-recorder is not installed: pip install -e '.[test]'")


def run(*argv: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT, check=False,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture(scope="module")
def recorded(tools: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """mcp-recorder's scenarios format, recorded by us."""
    work = tmp_path_factory.mktemp("migration")
    (work / "scenarios.yml").write_text(SCENARIOS.format(server=EVERYTHING), encoding="utf-8")
    result = run(MCP_REPLAY, "record-scenarios", "scenarios.yml", "-o", "cassettes", cwd=work)
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(p.name for p in (work / "cassettes").iterdir()) == ["prompts.jsonl", "tools_and_schemas.jsonl"]
    return work


def test_recorder_scenarios_record_and_replay_unchanged(recorded: Path) -> None:
    result = run(MCP_REPLAY, "replay", "--server", f"node {EVERYTHING}", "--cassette", "cassettes/*.jsonl",
                 cwd=recorded)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed, 0 failed, 0 missing" in result.stdout


def test_converted_cassettes_pass_the_real_mcp_recorder_verify(recorded: Path) -> None:
    for name in ("tools_and_schemas", "prompts"):
        converted = run(MCP_REPLAY, "convert", f"cassettes/{name}.jsonl", f"{name}.json", cwd=recorded)
        assert converted.returncode == 0, converted.stderr
        doc = json.loads((recorded / f"{name}.json").read_text(encoding="utf-8"))
        for item in doc["interactions"]:
            assert isinstance(item["response_status"], int) and isinstance(item["latency_ms"], int), item
        verified = run(RECORDER, "verify", "--cassette", f"{name}.json", "--target-stdio", f"node {EVERYTHING}",
                       cwd=recorded)  # fmt: skip
        assert verified.returncode == 0, verified.stdout + verified.stderr
        assert " 0 failed" in verified.stdout + verified.stderr
    # And mcp-replay reads the converted files back as cassettes of their own.
    replayed = run(MCP_REPLAY, "replay", "--server", f"node {EVERYTHING}", "--cassette", "*.json", cwd=recorded)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def keys_of(doc: dict[str, Any]) -> tuple[set[str], set[str], set[str]]:
    items = doc["interactions"]
    return set(doc), set(doc.get("metadata") or {}), set().union(*(set(i) for i in items))


def test_update_on_a_file_mcp_recorder_wrote_adds_no_keys(recorded: Path, tmp_path: Path) -> None:
    work = tmp_path
    assert (
        run(MCP_REPLAY, "convert", recorded / "cassettes" / "tools_and_schemas.jsonl", "c.json", cwd=work).returncode
        == 0
    )
    # The same file as mcp-recorder writes it: only its own keys (its --update rewrites nothing
    # when nothing changed, so the extension is taken off here).
    theirs = json.loads((work / "c.json").read_text(encoding="utf-8"))
    theirs.pop("x_mcp_replay")
    for item in theirs["interactions"]:
        item.pop("x_mcp_replay")
    # An intended change: the recorded echo differs from what the server says now.
    for item in theirs["interactions"]:
        if (item.get("request") or {}).get("params", {}).get("name") == "echo":
            item["response"]["result"]["content"][0]["text"] = "Echo: an older answer"
    (work / "c.json").write_text(json.dumps(theirs, indent=2) + "\n", encoding="utf-8")
    before = keys_of(theirs)

    updated = run(MCP_REPLAY, "replay", "--server", f"node {EVERYTHING}", "--cassette", "c.json", "--update",
                  cwd=work)  # fmt: skip
    assert updated.returncode == 0, updated.stdout + updated.stderr
    after = json.loads((work / "c.json").read_text(encoding="utf-8"))
    assert keys_of(after) == before, "replay --update added keys to a file mcp-recorder wrote"
    echo = next(i for i in after["interactions"] if (i.get("request") or {}).get("params", {}).get("name") == "echo")
    assert echo["response"]["result"]["content"][0]["text"] == "Echo: hello from the migration test"
    again = run(RECORDER, "verify", "--cassette", "c.json", "--target-stdio", f"node {EVERYTHING}", cwd=work)
    assert again.returncode == 0, again.stdout + again.stderr


def test_verify_is_replay_under_mcp_recorders_flag_names(recorded: Path, tmp_path: Path) -> None:
    assert (
        run(
            MCP_REPLAY, "convert", recorded / "cassettes" / "tools_and_schemas.jsonl", "c.json", cwd=tmp_path
        ).returncode
        == 0
    )
    doc = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    for item in doc["interactions"]:
        if (item.get("request") or {}).get("params", {}).get("name") == "echo":
            item["response"]["result"]["content"][0]["text"] = "Echo: an older answer"
    (tmp_path / "c.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    # The line a CI job wrote for mcp-recorder, with our command name in front.
    line = ["verify", "--cassette", "c.json", "--target-stdio", f"node {EVERYTHING}"]
    changed = run(MCP_REPLAY, *line, cwd=tmp_path)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "tools/call echo" in changed.stdout
    forgiven = run(MCP_REPLAY, *line, "--ignore-fields", "text", "--target-env", "EVERYTHING_GREETING=hi", cwd=tmp_path)
    assert forgiven.returncode == 0, forgiven.stdout + forgiven.stderr
    by_path = run(MCP_REPLAY, *line, "--ignore-paths", "$.result.content[0].text", cwd=tmp_path)
    assert by_path.returncode == 0, by_path.stdout + by_path.stderr


# mcp-recorder's own demo scenarios file, as its repository ships it (devhelmhq/mcp-recorder,
# scenarios.yml): an HTTP target, and a top-level ``output`` key that mcp-recorder ignores.
RECORDER_DEMO = """\
schema_version: "1.0"
target: https://mcp.devhelm.io
output: demo.json
redact:
  server_url: false

scenarios:
  demo_walkthrough:
    description: "Full demo: list tools, call add, greet, and roll_dice"
    actions:
      - list_tools

      - call_tool:
          name: add
          arguments:
            a: 3
            b: 7

      - call_tool:
          name: greet
          arguments:
            name: World
            style: pirate

      - call_tool:
          name: lookup_status
          arguments:
            service: api

"""

# Modelled on a real project's file (tavily-mcp's integration/scenarios.yml): run from the
# repository root as `record-scenarios integration/scenarios.yml`, a stdio target given relative to
# that root, error cases among the calls. The project's "build" here is server-everything.
PROJECT_SCENARIOS = """\
schema_version: "1.0"

target:
  command: "node"
  args: ["build/index.js"]

redact:
  server_url: false

scenarios:
  protocol_and_errors:
    description: "Protocol handshake, tool schema listing, and error handling"
    actions:
      - list_tools
      - call_tool:
          name: echo
          arguments:
            message: "test query"
      - call_tool:
          name: get-sum
          arguments:
            a: 40
            b: 2
      - call_tool:
          name: get-sum
          arguments: {}
      - call_tool:
          name: no_such_tool
          arguments:
            url: "https://example.com"
"""


def test_mcp_recorders_demo_scenarios_file_loads_unchanged(tmp_path: Path) -> None:
    from mcp_replay_action.scenarios import load_scenarios

    path = tmp_path / "scenarios.yml"
    path.write_text(RECORDER_DEMO, encoding="utf-8")
    loaded = load_scenarios(path)
    assert loaded.names == ("demo_walkthrough",)
    # What mcp-recorder means by it: its HTTP client posts to the URL + /mcp.
    assert loaded.target.url == "https://mcp.devhelm.io/mcp"
    assert loaded.redact.server_url is False


# ---- mcp-recorder's own scenarios files, recorded and verified against a local stand-in ---------
# Its demo's target is a public server; tests/servers/recorder_demo_server.py answers the same tools
# on 127.0.0.1. The one change to each file: the target URL's scheme and host (the path stays, so
# both tools add /mcp to it as mcp-recorder does).


@pytest.fixture(scope="module")
def demo_server() -> Iterator[str]:
    """The stand-in, as the scenarios file names it: scheme and host, no path."""
    if not RECORDER.exists():
        pytest.skip("mcp-recorder is not installed: pip install -e '.[test]'")
    port = free_port()
    argv = [sys.executable, str(SERVERS / "recorder_demo_server.py"), str(port)]
    with running(argv, f"http://127.0.0.1:{port}/mcp"):
        yield f"http://127.0.0.1:{port}"


def pointed_at(text: str, original: str, url: str) -> str:
    """``text`` with its target URL ``original`` replaced, and nothing else."""
    changed = text.replace(original, url)
    differing = [(a, b) for a, b in zip(text.splitlines(), changed.splitlines(), strict=True) if a != b]
    assert differing == [(f"target: {original}", f"target: {url}")], differing
    return changed


def record_verify_and_cross_check(work: Path, url: str, expected: dict[str, int]) -> None:
    """record-scenarios, then per cassette: our verify with mcp-recorder's CI line, convert, and
    the real mcp-recorder's verify of the converted file, all against ``url``."""
    recorded = run(MCP_REPLAY, "record-scenarios", "scenarios.yml", cwd=work)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert sorted(p.stem for p in (work / "cassettes").iterdir()) == sorted(expected)
    for name, requests in expected.items():
        ours = run(MCP_REPLAY, "verify", "--cassette", f"cassettes/{name}.jsonl", "--target", url, cwd=work)
        assert ours.returncode == 0, ours.stdout + ours.stderr
        assert f"{requests} passed, 0 failed, 0 missing" in ours.stdout, ours.stdout
        assert run(MCP_REPLAY, "convert", f"cassettes/{name}.jsonl", f"{name}.json", cwd=work).returncode == 0
        theirs = run(RECORDER, "verify", "--cassette", f"{name}.json", "--target", url, cwd=work)
        assert theirs.returncode == 0, theirs.stdout + theirs.stderr
        # mcp-recorder also counts the initialized notification.
        assert f"Result: {requests + 1}/{requests + 1} passed, 0 failed" in theirs.stdout + theirs.stderr


def test_mcp_recorders_demo_scenarios_file_records_and_verifies_against_a_stand_in(
    demo_server: str, tmp_path: Path
) -> None:
    (tmp_path / "scenarios.yml").write_text(
        pointed_at(RECORDER_DEMO, "https://mcp.devhelm.io", demo_server), encoding="utf-8"
    )
    record_verify_and_cross_check(tmp_path, demo_server, {"demo_walkthrough": 5})
    both = run(MCP_REPLAY, "verify", "--cassette", "cassettes/*.jsonl", "--target", demo_server, "--url",
               f"{demo_server}/mcp", cwd=tmp_path)  # fmt: skip
    assert both.returncode == 2 and "give --url or --target, not both" in both.stderr
    cassette = (tmp_path / "cassettes" / "demo_walkthrough.jsonl").read_text(encoding="utf-8")
    assert "Ahoy, World!" in cassette and "operational" in cassette


def test_the_scenarios_example_mcp_recorder_ships_records_and_verifies_against_a_stand_in(
    demo_server: str, tmp_path: Path
) -> None:
    """The Scenarios example of the README in mcp-recorder 0.5.0's package metadata (the
    package ships no scenarios.yml of its own): env and pattern redaction, an error case."""
    metadata = importlib.metadata.metadata("mcp-recorder")
    assert metadata["Version"] == "0.5.0"
    readme = metadata.get_payload()  # type: ignore[attr-defined]
    example = re.search(r"```yaml\n(schema_version.*?)```", readme[readme.index("## Scenarios") :], re.S)
    assert example, "mcp-recorder's README has no Scenarios example"
    (tmp_path / "scenarios.yml").write_text(
        pointed_at(example.group(1), "http://localhost:3000", demo_server), encoding="utf-8"
    )
    record_verify_and_cross_check(tmp_path, demo_server, {"tools_and_schemas": 3, "error_handling": 2})


def test_a_real_projects_scenarios_file_records_from_the_repository_root(tools: None, tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "integration").mkdir(parents=True)
    (project / "build").symlink_to(EVERYTHING.parent, target_is_directory=True)
    (project / "integration" / "scenarios.yml").write_text(PROJECT_SCENARIOS, encoding="utf-8")
    # As the project's CI runs it: from the repository root (before: the server was started in
    # integration/, and node could not find build/index.js).
    recorded = run(MCP_REPLAY, "record-scenarios", "integration/scenarios.yml", cwd=project)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassette = project / "integration" / "cassettes" / "protocol_and_errors.jsonl"
    assert cassette.is_file(), recorded.stdout
    replayed = run(MCP_REPLAY, "replay", "--server", "node build/index.js", "--cassette", str(cassette), cwd=project)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "0 failed, 0 missing" in replayed.stdout
    assert run(MCP_REPLAY, "convert", cassette, "golden.json", cwd=project).returncode == 0
    verified = run(
        RECORDER, "verify", "--cassette", "golden.json", "--target-stdio", "node build/index.js", cwd=project
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr


# Real projects' scenarios files, copied as they are (both MIT):
# tavily-ai/tavily-mcp integration/scenarios.yml at e59218343f019f6ed7762eb4c0d5a8d8d7b1c5ad, and
# mendableai/firecrawl-mcp-server integration/scenarios.yml at b310cd9a6b44da5d4a64175585caa0818d61f495.
TAVILY_SCENARIOS = """\
schema_version: "1.0"

target:
  command: "node"
  args: ["build/index.js"]

redact:
  server_url: false

scenarios:
  protocol_and_errors:
    description: "Protocol handshake, tool schema listing, and error handling"
    actions:
      - list_tools
      - call_tool:
          name: tavily_search
          arguments:
            query: "test query"
      - call_tool:
          name: tavily_extract
          arguments:
            urls: ["https://example.com"]
      - call_tool:
          name: tavily_map
          arguments:
            url: "https://example.com"
      - call_tool:
          name: tavily_crawl
          arguments:
            url: "https://example.com"
"""

FIRECRAWL_SCENARIOS = """\
schema_version: "1.0"

target: http://localhost:3000

redact:
  server_url: false

scenarios:
  protocol_and_errors:
    description: "Protocol handshake, tool schema listing, and error handling"
    actions:
      - list_tools
      - call_tool:
          name: firecrawl_scrape
          arguments:
            url: "https://example.com"
"""


def test_tavily_mcps_own_scenarios_file_records_and_replays_unchanged(tools: None, tmp_path: Path) -> None:
    """Byte for byte as the project ships it, run from its repository root as its CI does; its
    build/ here is a stand-in answering the same four tools (tests/servers/tavily_build), since
    the real server needs an API key and the internet."""
    project = tmp_path / "tavily-mcp"
    (project / "integration").mkdir(parents=True)
    (project / "build").symlink_to(SERVERS / "tavily_build", target_is_directory=True)
    (project / "integration" / "scenarios.yml").write_text(TAVILY_SCENARIOS, encoding="utf-8")
    recorded = run(MCP_REPLAY, "record-scenarios", "integration/scenarios.yml", cwd=project)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    cassette = project / "integration" / "cassettes" / "protocol_and_errors.jsonl"
    lines = map(json.loads, cassette.read_text(encoding="utf-8").splitlines()[1:])
    tools_called = [
        line["message"]["params"]["name"] for line in lines if line["message"].get("method") == "tools/call"
    ]
    assert tools_called == ["tavily_search", "tavily_extract", "tavily_map", "tavily_crawl"]
    replayed = run(MCP_REPLAY, "replay", "--server", "node build/index.js", "--cassette", str(cassette), cwd=project)
    assert replayed.returncode == 0 and "6 passed, 0 failed, 0 missing" in replayed.stdout, replayed.stdout
    assert run(MCP_REPLAY, "convert", cassette, "golden.json", cwd=project).returncode == 0
    verified = run(RECORDER, "verify", "--cassette", "golden.json", "--target-stdio", "node build/index.js",
                   cwd=project)  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "Result: 7/7 passed, 0 failed" in verified.stdout + verified.stderr


def test_firecrawls_own_scenarios_file_records_and_verifies_against_a_stand_in(
    demo_server: str, tmp_path: Path
) -> None:
    """Its target is the project's own server on localhost:3000; pointed at the stand-in."""
    (tmp_path / "scenarios.yml").write_text(
        pointed_at(FIRECRAWL_SCENARIOS, "http://localhost:3000", demo_server), encoding="utf-8"
    )
    record_verify_and_cross_check(tmp_path, demo_server, {"protocol_and_errors": 3})


def test_a_server_that_cannot_start_shows_the_cause_not_only_the_last_line(tools: None, tmp_path: Path) -> None:
    (tmp_path / "integration").mkdir()
    (tmp_path / "integration" / "scenarios.yml").write_text(PROJECT_SCENARIOS, encoding="utf-8")
    # No build/ here: node fails with "Cannot find module" and ends its stderr with its banner.
    failed = run(MCP_REPLAY, "record-scenarios", "integration/scenarios.yml", cwd=tmp_path)
    assert failed.returncode == 3, failed.stdout + failed.stderr
    assert "server exited at start-up" in failed.stderr
    assert "Cannot find module" in failed.stderr and "server stderr (last lines):" in failed.stderr


# ---------------------------------------------------------------------------------------------
# docs/migrating-from-mcp-recorder.md says what holds
# ---------------------------------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "migrating-from-mcp-recorder.md"
CALC = f"{sys.executable} -m mcp_replay_action.samples.calc_server"


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def test_the_docs_install_lines_are_the_package_and_the_repository() -> None:
    import tomllib

    project = tomllib.loads((DOC.parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    text = doc_text()
    assert f"pipx install {project['name']}" in text and f"uv tool install {project['name']}" in text
    # Until the first release the package is not on PyPI: the repository's own URL installs it.
    assert f"pipx install git+{project['urls']['Repository']}" in text
    assert not re.search(r"^pip install mcp-replay-action$", text, re.M), "that line fails before a release"


def test_the_docs_replay_glob_takes_the_new_jsonl_not_the_old_json_of_a_scenario(tmp_path: Path) -> None:
    from mcp_replay_action.host.discovery import find_cassettes

    step = next(line for line in doc_text().splitlines() if line.startswith("mcp-replay replay "))
    glob = re.search(r"--cassette '([^']+)'", step)
    assert glob, step
    cassettes = tmp_path / "integration" / "cassettes"
    cassettes.mkdir(parents=True)
    shutil.copy(DOC.parents[1] / "cassettes" / "calc" / "handshake.jsonl", cassettes / "protocol_and_errors.jsonl")
    (cassettes / "protocol_and_errors.json").write_text("{}", encoding="utf-8")  # mcp-recorder's, left behind
    found = [Path(p).name for p in find_cassettes([glob.group(1)], str(tmp_path))]
    assert found == ["protocol_and_errors.jsonl"]
    assert "`integration/cassettes/*` would replay each scenario twice" in doc_text()


def test_a_server_that_mints_ids_fails_mcp_recorders_verify_and_passes_ours(tmp_path: Path) -> None:
    """The doc's step 4 caveat, shown: the demo's cassette (start_job, then job_status quoting the
    job id) converted to mcp-recorder's format fails its verify, and passes mcp-replay's."""
    kept = run(MCP_REPLAY, "demo", "--keep", tmp_path, cwd=tmp_path)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert run(MCP_REPLAY, "convert", "demo.jsonl", "demo.json", cwd=tmp_path).returncode == 0
    # mcp-recorder's verify answers no request from the server: the demo's ``roots`` call (the
    # server asks the client for its roots) would only wait out its fixed 120 s timeout, so that
    # call and the roots/list it asked are left out; the caveat is the minted job id.
    converted = json.loads((tmp_path / "demo.json").read_text(encoding="utf-8"))
    kept_calls = [i for i in converted["interactions"] if (i["request"].get("params") or {}).get("name") != "roots"]
    asked = converted["x_mcp_replay"]["server_messages"]
    kept_asked = [m for m in asked if m["message"].get("method") != "roots/list"]
    assert (len(kept_calls), len(kept_asked)) == (len(converted["interactions"]) - 1, len(asked) - 1)
    converted["interactions"], converted["x_mcp_replay"]["server_messages"] = kept_calls, kept_asked
    (tmp_path / "demo.json").write_text(json.dumps(converted), encoding="utf-8")
    theirs = run(RECORDER, "verify", "--cassette", "demo.json", "--target-stdio", CALC, cwd=tmp_path)
    out = theirs.stdout + theirs.stderr
    assert theirs.returncode != 0, out
    assert "tools/call [job_status] -> FAIL" in out and "no such job: " in out, out
    ours = run(MCP_REPLAY, "verify", "--cassette", "demo.json", "--target-stdio", CALC, cwd=tmp_path)
    assert ours.returncode == 0, ours.stdout + ours.stderr
    assert "no such job" in doc_text() and "mcp-replay verify" in doc_text()


def test_mcp_recorders_own_record_scenarios_needs_starlette_below_1(tmp_path: Path) -> None:
    """What the doc's pin is for: with Starlette 1.x (the test extra's, as a fresh install of
    mcp-recorder 0.5.0 gets), its own record-scenarios stops at a TypeError."""
    assert "'starlette<1'" in doc_text()
    starlette = importlib.metadata.version("starlette")
    if int(starlette.split(".")[0]) < 1:
        pytest.skip(f"starlette {starlette} is below 1 here: nothing to show")
    (tmp_path / "s.yml").write_text(
        f'schema_version: "1.0"\ntarget:\n  command: "{sys.executable}"\n'
        '  args: ["-m", "mcp_replay_action.samples.calc_server"]\n'
        "scenarios:\n  calc:\n    actions:\n      - list_tools\n",
        encoding="utf-8",
    )
    theirs = run(RECORDER, "record-scenarios", "s.yml", cwd=tmp_path)
    assert theirs.returncode != 0
    assert "unexpected keyword argument 'on_startup'" in theirs.stdout + theirs.stderr
    ours = run(MCP_REPLAY, "record-scenarios", "s.yml", cwd=tmp_path)
    assert ours.returncode == 0, ours.stdout + ours.stderr


def test_the_doc_says_replay_means_the_opposite_in_the_two_tools() -> None:
    text = doc_text()
    assert "**`replay` means the opposite.**" in text
    assert "becomes `mcp-replay serve ...`" in text
