"""``mcp-replay explore``: what is called, with which arguments, and what is left alone.

The arguments rules run in process (``arguments_for`` is a pure function); everything else drives
the real CLI against a real server process that logs every ``tools/call`` it gets
(``tests/servers/explore_server.py``), and the bundled sample server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from e2e_helpers import SERVERS, cassette_lines, python_server, replay, requests, run_cli
from mcp_replay_action.explore.arguments import Unsatisfiable, arguments_for

pytestmark = pytest.mark.integration

EXPLORE_SERVER = SERVERS / "explore_server.py"
SAMPLE = "mcp_replay_action.samples.calc_server"


# -- arguments from an inputSchema --------------------------------------------------------------


def test_arguments_follow_the_rules_in_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "examples": ["x", "y"], "default": "d"},
            "b": {"type": "integer", "default": 7, "minimum": 1},
            "c": {"const": "fixed"},
            "d": {"enum": ["first", "second"]},
            "e": {"type": "number", "exclusiveMinimum": 2, "maximum": 10},
            "f": {"type": "string", "minLength": 3},
            "g": {"type": ["null", "boolean"]},
            "h": {"type": "array", "items": {"type": "integer", "minimum": 4}, "minItems": 2},
            "i": {"type": "string", "format": "email"},
            "optional": {"type": "string"},
        },
        "required": ["a", "b", "c", "d", "e", "f", "g", "h", "i"],
    }
    assert arguments_for(schema) == {
        "a": "x",
        "b": 7,
        "c": "fixed",
        "d": "first",
        "e": 3,
        "f": "aaa",
        "g": False,
        "h": [4, 4],
        "i": "user@example.com",
    }


def test_arguments_follow_refs_and_branches() -> None:
    schema = {
        "type": "object",
        "properties": {
            "where": {"$ref": "#/$defs/Where"},
            "either": {"anyOf": [{"type": "string", "pattern": "^[0-9]{2}$"}, {"type": "integer"}]},
            "both": {"allOf": [{"type": "object", "required": ["x"]}, {"properties": {"x": {"type": "boolean"}}}]},
        },
        "required": ["where", "either", "both"],
        "$defs": {"Where": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    }
    assert arguments_for(schema) == {"where": {"city": ""}, "either": 0, "both": {"x": False}}
    assert arguments_for(None) == {}
    assert arguments_for({"type": "object"}) == {}


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ("a string", "not a JSON object"),
        ({"type": "objekt"}, "not valid JSON Schema"),
        (
            {"type": "object", "properties": {"p": {"type": "string", "pattern": "^Q{5}$"}}, "required": ["p"]},
            "pattern",
        ),
        ({"type": "object", "properties": {"p": False}, "required": ["p"]}, "accepts nothing"),
        ({"type": "object", "properties": {"p": {"$ref": "#/$defs/Nope"}}, "required": ["p"]}, "$ref"),
        ({"type": "object", "properties": {"p": {"$ref": "https://example.com/s.json"}}, "required": ["p"]}, "outside"),
        ({"type": "object", "properties": {"p": {"$ref": "#"}}, "required": ["p"]}, "nests too deeply"),
        (
            {
                "type": "object",
                "properties": {"n": {"type": "integer", "multipleOf": 7, "minimum": 1}},
                "required": ["n"],
            },
            "satisfy",
        ),
        ({"type": "array"}, "object of arguments"),
    ],
)
def test_a_schema_that_cannot_be_satisfied_is_a_reason_not_a_crash(schema: Any, reason: str) -> None:
    with pytest.raises(Unsatisfiable, match=reason.replace("$", r"\$")):
        arguments_for(schema)


# -- what is called -----------------------------------------------------------------------------


def _explore(tmp_path: Path, *extra: str, name: str = "explored.jsonl") -> tuple[Any, Path, list[dict[str, Any]]]:
    log = tmp_path / f"{name}.calls"
    log.unlink(missing_ok=True)
    cassette = tmp_path / name
    run = run_cli(
        "explore",
        "--server",
        python_server(EXPLORE_SERVER),
        "--env",
        f"CALL_LOG={log}",
        "--env-public",
        "CALL_LOG",
        "--cassette",
        cassette,
        "--timeout",
        "1",
        *extra,
    )
    calls = [json.loads(line) for line in log.read_text("utf-8").splitlines()] if log.exists() else []
    return run, cassette, calls


def test_only_read_only_tools_are_called_by_default(tmp_path: Path) -> None:
    run, cassette, calls = _explore(tmp_path)
    assert run.code == 0, run.describe()
    # The server's own log: neither the destructive tools nor the one with no annotations.
    assert [c["name"] for c in calls] == ["lookup", "stall"]
    assert calls[0]["arguments"] == {
        "word": "hello",
        "limit": 5,
        "mode": "exact",
        "lang": "en",
        "since": "1970-01-01",
        "page": 1,
        "filter": {"tags": [""]},
    }
    header = cassette_lines(cassette)[0]["meta"]
    explored = header["explored"]
    assert explored["called"] == ["lookup"]
    why = {s["name"]: s["why"] for s in explored["skipped"]}
    assert why["plain"].startswith("not marked read-only")
    assert why["drop_table"].startswith("marked destructive")
    assert why["wipe"].startswith("marked destructive")  # read-only and destructive: not called
    assert "not valid JSON Schema" in why["broken"]
    assert "pattern" in why["picky"]
    assert why["stall"] == "no answer within --timeout 1 s"
    for name in ("plain", "drop_table", "wipe", "broken", "picky", "stall"):
        assert f"skipped tool {name}: " in run.stderr
    # Both pages of tools/list, the prompt with its required argument only, the listed resource;
    # the template is listed and left alone.
    methods = [r["message"]["method"] for r in requests(cassette)]
    assert methods.count("tools/list") == 2
    assert requests(cassette, "tools/list")[1]["message"]["params"] == {"cursor": "page-2"}
    (prompt,) = requests(cassette, "prompts/get")
    assert prompt["message"]["params"] == {"name": "greet", "arguments": {"who": ""}}
    assert [r["message"]["params"]["uri"] for r in requests(cassette, "resources/read")] == ["memo://one"]
    assert "resources/templates/list" in methods
    assert header["era"] == "handshake" and header["server_info"]["name"] == "explore-test"


def test_named_tools_and_allow_writes(tmp_path: Path) -> None:
    run, _, calls = _explore(tmp_path, "--call", "plain", "--call", "missing", "--read", "memo://7")
    assert run.code == 0, run.describe()
    assert sorted(c["name"] for c in calls) == ["lookup", "plain", "stall"]
    assert "skipped tool missing: named with --call, but the server does not list it" in run.stderr
    run, cassette, calls = _explore(tmp_path, "--allow-writes", name="all.jsonl")
    assert run.code == 0, run.describe()
    assert sorted(c["name"] for c in calls) == ["drop_table", "lookup", "plain", "stall", "wipe"]
    assert cassette_lines(cassette)[0]["meta"]["explored"]["options"]["allow_writes"] is True


def test_max_calls_bounds_what_is_asked(tmp_path: Path) -> None:
    run, cassette, calls = _explore(tmp_path, "--max-calls", "1")
    assert run.code == 0, run.describe()
    assert [c["name"] for c in calls] == ["lookup"]
    assert "skipped resource memo://one: over --max-calls 1" in run.stderr
    assert not requests(cassette, "prompts/get")


def test_two_explores_of_one_build_send_the_same_requests(tmp_path: Path) -> None:
    sent = []
    for name in ("one.jsonl", "two.jsonl"):
        run, cassette, _ = _explore(tmp_path, "--call", "plain", name=name)
        assert run.code == 0, run.describe()
        sent.append([(e["kind"], e["message"]) for e in cassette_lines(cassette)[1:]])
    assert sent[0] == sent[1]


def test_an_explored_cassette_replays_clean_and_catches_the_regressed_twin(tmp_path: Path) -> None:
    cassette = tmp_path / "calc.jsonl"
    run = run_cli("explore", "--server", python_server("-m", SAMPLE), "--cassette", cassette, "--call", "add")
    assert run.code == 0, run.describe()
    (add,) = [r for r in requests(cassette, "tools/call")]
    assert add["message"]["params"] == {"name": "add", "arguments": {"a": 0, "b": 0}}
    clean = replay(python_server("-m", SAMPLE), cassette, report=tmp_path / "clean.json")
    assert clean.code == 0, clean.describe()
    broken = replay(python_server("-m", SAMPLE + "_regressed"), cassette, report=tmp_path / "broken.json", gate=False)
    assert broken.code == 1, broken.describe()
    assert any(f["class"] == "breaking" and f["name"] == "add" for f in broken.findings()), broken.describe()


def test_a_server_that_cannot_start_is_exit_3_with_one_line(tmp_path: Path) -> None:
    run = run_cli("explore", "--server", python_server(tmp_path / "nope.py"), "--cassette", tmp_path / "x.jsonl")
    assert run.code == 3, run.describe()
    assert "Traceback" not in run.stderr and not (tmp_path / "x.jsonl").exists()


def test_a_server_that_refuses_initialize_is_explored_in_the_stateless_era(tmp_path: Path) -> None:
    # era_server --era stateless refuses initialize: a fresh start is asked server/discover.
    server = python_server(SERVERS / "era_server.py", "--era", "stateless")
    cassette = tmp_path / "stateless.jsonl"
    run = run_cli("explore", "--server", server, "--cassette", cassette, "--call", "add")
    assert run.code == 0, run.describe()
    lines = cassette_lines(cassette)
    assert lines[0]["meta"]["era"] == "stateless" and lines[0]["meta"]["explored"]["called"] == ["add"]
    assert lines[1]["message"]["method"] == "server/discover"  # the refused initialize is not kept
    (call,) = requests(cassette, "tools/call")
    assert call["message"]["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    clean = replay(server, cassette, report=tmp_path / "r.json")
    assert clean.code == 0, clean.describe()
