"""Multi-step scenarios with no client code: ``save:`` an answer and quote it later as
``${name.path}`` (scenarios/refs.py), a call of a tool the server does not list (a warning, an
error with ``--strict``), a misspelt key answered with "did you mean", and ``record-scenarios``
printing each scenario as it is recorded. End to end against real servers: a notes server on the
official Python SDK that mints a fresh id per note, npm's server-memory, the bundled calc server."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import load
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.scenarios import load_scenarios
from mcp_replay_action.scenarios.refs import Failed, Ref, RefError, Template, fill

ROOT = Path(__file__).resolve().parents[1]
NOTES = [sys.executable, str(ROOT / "tests" / "servers" / "notes_server.py")]
MEMORY = ROOT / "tests" / "servers" / "node_modules" / ".bin" / "mcp-server-memory"
CALC = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]
MCP_REPLAY = [sys.executable, "-m", "mcp_replay_action"]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenarios.yml"
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def record(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*MCP_REPLAY, "record-scenarios", "scenarios.yml", "-o", "out", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=150,
        stdin=subprocess.DEVNULL,
    )


def calc_sums(tmp_path: Path, step: str) -> None:
    """Scenario ``sums`` against the bundled calc server: ``add`` saved as ``sum`` (line 4-5), then ``step`` (line 6)."""
    head = f"target: {{command: {json.dumps(CALC)}}}\nscenarios:\n  sums:\n"
    write(tmp_path, head + "    - call_tool: {name: add, arguments: {a: 1, b: 2}}\n      save: sum\n    " + step + "\n")


def calls(path: Path) -> list[dict[str, Any]]:
    return [i.message["params"] for i in load(path).interactions if i.method == "tools/call"]


def load_error(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_scenarios(path, environ=environ or {})
    return str(info.value).replace(str(path), "FILE")


# --------------------------------------------------------------------------- end to end


def test_a_minted_id_is_saved_and_quoted_three_ways_against_a_real_sdk_server(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"""
        target: {{command: {json.dumps(NOTES)}}}
        scenarios:
          notes:
            actions:
              - list_tools: {{}}
                save: tools
              - call_tool: {{name: create_note, arguments: {{title: first}}}}
                save: note
              - call_tool: {{name: get_note, arguments: {{id: "${{note.structuredContent.id}}"}}}}
              - call_tool: {{name: get_note, arguments: {{id: "${{note.content[0].text.id}}"}}}}
              - call_tool:
                  name: "${{tools.tools[name=get_note].name}}"
                  arguments: {{id: "${{note.structuredContent.id}}"}}
              - call_tool: {{name: create_note, arguments: {{title: "copy of ${{note.structuredContent.id}} $${{kept}}"}}}}
        """,
    )
    done = record(tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "notes: 8 interactions recorded (handshake era, 2025-11-25)",
        "wrote 1 cassette to out: notes.jsonl",
    ]
    assert "warning" not in done.stderr
    made, *gets, copy = calls(tmp_path / "out" / "notes.jsonl")
    interactions = load(tmp_path / "out" / "notes.jsonl").interactions
    minted = next(i for i in interactions if i.method == "tools/call").response["result"]["structuredContent"]["id"]
    assert minted.startswith("note_") and len(minted) == 17
    assert [g["arguments"] for g in gets] == [{"id": minted}] * 3 and gets[2]["name"] == "get_note"
    assert copy["arguments"]["title"] == f"copy of {minted} ${{kept}}"
    # Each get found the note: the id sent is the one this server minted in this session.
    answers = [i.response["result"] for i in interactions if i.method == "tools/call"][1:4]
    assert all(a.get("isError") is False and a["structuredContent"]["id"] == minted for a in answers), answers


@pytest.mark.skipif(not MEMORY.exists(), reason="npm test servers are not installed")
def test_json_in_text_list_indexes_and_a_value_spelled_inside_text_against_server_memory(tmp_path: Path) -> None:
    write(
        tmp_path,
        f"""
        target:
          command: {MEMORY}
          env: {{MEMORY_FILE_PATH: {tmp_path / "memory.json"}}}
        scenarios:
          graph:
            - call_tool:
                name: create_entities
                arguments: {{entities: [{{name: Ada, entityType: person, observations: [wrote a program]}}]}}
              save: made
            - call_tool: {{name: open_nodes, arguments: {{names: ["${{made.content[0].text[0].name}}"]}}}}
              save: opened
            - call_tool: {{name: search_nodes, arguments: {{query: "${{opened.structuredContent.entities[-1].entityType}}"}}}}
            - call_tool: {{name: search_nodes, arguments: {{query: "all of ${{made.structuredContent.entities}}"}}}}
        """,
    )
    done = record(tmp_path)
    assert done.returncode == 0, done.stderr
    sent = [c["arguments"] for c in calls(tmp_path / "out" / "graph.jsonl")][1:]
    assert sent[0] == {"names": ["Ada"]} and sent[1] == {"query": "person"}
    entity = {"name": "Ada", "entityType": "person", "observations": ["wrote a program"]}
    assert sent[2] == {"query": "all of " + json.dumps([entity], ensure_ascii=False)}


def test_an_unlisted_tool_is_a_warning_and_with_strict_an_error(tmp_path: Path) -> None:
    calc_sums(tmp_path, "- call_tool: {name: ad, arguments: {a: 1, b: 2}}")
    done = record(tmp_path)
    assert done.returncode == 0, done.stderr
    warning = "mcp-replay: warning: scenarios.yml:6: scenario 'sums': call_tool 'ad': the server lists no tool of that name (did you mean 'add'?)"
    assert done.stderr.strip() == warning
    # The check listed the tools outside the recording: the cassette is the scenario's traffic.
    methods = [i.method for i in load(tmp_path / "out" / "sums.jsonl").interactions]
    assert methods == ["initialize", "notifications/initialized", "tools/call", "tools/call"]
    (tmp_path / "out" / "sums.jsonl").unlink()
    strict = record(tmp_path, "--strict")
    assert strict.returncode == 2, strict.stderr
    assert strict.stderr.strip() == warning.replace("warning:", "error:")
    assert not (tmp_path / "out" / "sums.jsonl").exists()


def test_a_reference_the_answer_cannot_fill_is_a_file_line_error_and_nothing_is_written(tmp_path: Path) -> None:
    calc_sums(tmp_path, '- call_tool: {name: add, arguments: {a: "${sum.structuredContent.total}", b: 1}}')
    done = record(tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "mcp-replay: error: scenarios.yml:6: scenario 'sums': ${sum.structuredContent.total}: "
        "sum has no 'structuredContent': it is an object of 2 keys (its keys: content, isError)"
    )
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------- loading


def test_references_are_read_only_for_names_an_earlier_step_saves(tmp_path: Path) -> None:
    loaded = load_scenarios(
        write(
            tmp_path,
            """
            target: node x.js
            scenarios:
              a:
                - call_tool: {name: make, arguments: {home: "${HOME}"}}
                  save: note
                - read_resource: {uri: "${note.structuredContent.uri}"}
                - call_tool: {name: use, arguments: {n: "${note.content[0].text.n}", t: "id=${note.id}!"}}
            """,
        ),
        environ={"HOME": "/home/me", "note": "an env var named like the saved answer"},
    )
    first, read, use = loaded.scenarios[0].actions
    assert first.save == "note" and first.params == {"name": "make", "arguments": {"home": "/home/me"}}
    assert read.params == {
        "uri": Ref("note", (("key", "structuredContent"), ("key", "uri")), "note.structuredContent.uri")
    }
    args = use.params["arguments"]  # type: ignore[index]
    assert args["n"].tokens == (("key", "content"), ("index", 0), ("key", "text"), ("key", "n"))
    assert isinstance(args["t"], Template) and args["t"].parts[0] == "id=" and args["t"].parts[2] == "!"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "target: x\nscenarois: {a: [ping]}\n",
            "FILE:2: unknown key 'scenarois' (did you mean 'scenarios'?; expected output, schema_version,",
        ),
        (
            "target: {comand: x}\nscenarios: {a: [ping]}\n",
            "FILE:1: unknown key target.comand (did you mean 'command'?;",
        ),
        (
            "target: x\nredact: {patern: [a]}\nscenarios: {a: [ping]}\n",
            "FILE:2: unknown key redact.patern (did you mean 'patterns'?;",
        ),
        (
            "target: x\nscenarios:\n  a:\n    actons: [ping]\n",
            "FILE:4: unknown key 'actons' in scenario 'a' (did you mean 'actions'?;",
        ),
        (
            "target: x\nscenarios:\n  a:\n    - list_tool\n",
            "FILE:4: unknown action 'list_tool' (did you mean 'list_tools'?;",
        ),
        (
            "target: x\nscenarios:\n  a:\n    - call_tool:\n        name: add\n        argumets: {}\n",
            "FILE:6: call_tool: unknown field 'argumets' (did you mean 'arguments'?;",
        ),
        (
            "target: x\nscenarios:\n  a:\n    - ping: {}\n      sav: p\n",
            "FILE:5: unknown step key 'sav' (did you mean 'save'?;",
        ),
        ("target: x\nscenarios:\n  a:\n    - flyaway\n", "FILE:4: unknown action 'flyaway' (expected list_tools,"),
    ],
)
def test_a_misspelt_key_gets_did_you_mean_with_its_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    assert load_error(tmp_path, text).startswith(expected)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (
            '- ping: {}\n      save: note\n    - call_tool: {name: x, arguments: {id: "${nte.id}"}}',
            "FILE:6: ${nte.id}: no earlier step of this scenario saves 'nte' (did you mean 'note'?)",
        ),
        (
            '- call_tool: {name: x, arguments: {id: "${note.id}"}}\n    - ping: {}\n      save: note',
            "FILE:4: ${note.id}: no earlier step of this scenario saves 'note'",
        ),
        (
            '- ping: {}\n      save: note\n    - call_tool: {name: x, arguments: {id: "${nte}"}}',
            "FILE:6: environment variable nte is not set (did you mean 'note'?)",
        ),
        (
            '- ping: {}\n      save: note\n    - call_tool: {name: x, arguments: {id: "${note.items[]}"}}',
            "FILE:6: ${note.items[]}: a reference names one value",
        ),
        ("- notify: {method: notifications/x}\n      save: n", "FILE:4: notify: a notification has no answer to save"),
        ("- ping: {}\n      save: 2fast", "FILE:5: save: '2fast' must be a name"),
        ('- ping: {}\n      save: p\n    - call_tool: {name: "${p}", arguments: {}}\n      save: p', ""),
    ],
)
def test_reference_mistakes_are_caught_when_the_file_is_read(tmp_path: Path, steps: str, expected: str) -> None:
    text = f"target: x\nscenarios:\n  a:\n    {steps}\n"
    if not expected:
        load_scenarios(write(tmp_path, text), environ={})  # saving a name again is allowed
        return
    assert load_error(tmp_path, text).startswith(expected)


def test_fill_types_and_failures() -> None:
    ref = Ref("n", (("key", "structuredContent"), ("key", "count")), "n.structuredContent.count")
    answers: dict[str, Any] = {"n": {"structuredContent": {"count": 3}}, "bad": Failed({"code": -32602})}
    assert fill({"a": ref, "b": [Template(("x", ref))]}, answers) == {"a": 3, "b": ["x3"]}
    with pytest.raises(RefError, match=r"answered with an error \(code -32602\)"):
        fill(Ref("bad", (), "bad"), answers)
    text = {"n": {"content": [{"text": "plain words"}]}}
    with pytest.raises(RefError, match=r"n.content\[0\].text is text that is not a JSON object or array"):
        fill(Ref("n", (("key", "content"), ("index", 0), ("key", "text"), ("key", "id")), "x"), text)
    with pytest.raises(RefError, match=r"has no item \[5\]: it is a list of 1 items"):
        fill(Ref("n", (("key", "content"), ("index", 5)), "x"), text)
