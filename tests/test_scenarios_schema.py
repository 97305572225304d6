"""The JSON Schema of scenarios files shipped in the package (schemas/scenarios-1.schema.json)
says what the loader accepts: the same keys at every level, the same actions, and every
scenarios file here (ours, and mcp-recorder-shaped ones) validates against it."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from mcp_replay_action.scenarios import load_scenarios, loader
from test_migration import PROJECT_SCENARIOS, RECORDER_DEMO, SCENARIOS

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parent.parent


def schema() -> dict:  # type: ignore[type-arg]
    text = resources.files("mcp_replay_action").joinpath("schemas/scenarios-1.schema.json").read_text("utf-8")
    loaded = json.loads(text)
    Draft202012Validator.check_schema(loaded)
    return loaded


def test_the_schema_names_exactly_the_keys_the_loader_reads() -> None:
    shipped = schema()
    assert set(shipped["properties"]) == set(loader._TOP_KEYS)
    target = shipped["$defs"]["target"]["properties"]
    assert set(target) == {"command", "args", "env", "cwd", "url", "headers", "isolate", "setup"}
    assert set(shipped["properties"]["redact"]["properties"]) == {"server_url", "env", "patterns", "keys", "defaults"}
    listed = set(shipped["$defs"]["listAction"]["enum"])
    step = shipped["$defs"]["action"]["oneOf"][1]
    objects = set(step["properties"])
    assert objects == set(loader.ACTIONS) | set(loader.STEP_KEYS) and listed <= objects
    assert [one["required"] for one in step["oneOf"]] == [[action] for action in loader.ACTIONS]


@pytest.mark.parametrize(
    "text",
    [
        (ROOT / "cassettes" / "calc" / "scenarios.yml").read_text(encoding="utf-8"),
        RECORDER_DEMO,
        PROJECT_SCENARIOS,
        SCENARIOS.format(server="dist/index.js"),
    ],
    ids=["ours", "mcp-recorder-demo", "project", "migration"],
)
def test_every_scenarios_file_here_validates_and_loads(text: str, tmp_path: Path) -> None:
    errors = list(Draft202012Validator(schema()).iter_errors(yaml.safe_load(text)))
    assert not errors, [e.message for e in errors]
    path = tmp_path / "scenarios.yml"
    path.write_text(text, encoding="utf-8")
    load_scenarios(path, environ={})


def test_a_typo_fails_the_schema_as_it_fails_the_loader(tmp_path: Path) -> None:
    text = "target: node x.js\nscenarios:\n  a:\n    actions:\n      - call_tool: {name: add, argumnets: {}}\n"
    assert list(Draft202012Validator(schema()).iter_errors(yaml.safe_load(text)))
    path = tmp_path / "scenarios.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(Exception, match="argumnets"):
        load_scenarios(path, environ={})
