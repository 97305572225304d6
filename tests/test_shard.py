"""``replay --shard i/n`` and ``merge``: three shards of a run, merged, give the report, grade,
gate and exit code of one run over every cassette."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from e2e_helpers import PYTHON, REPO, command, run_cli, steady, untimed
from mcp_replay_action.replay.shard import assign

pytestmark = pytest.mark.integration

CASSETTES = str(REPO / "cassettes/calc/*.jsonl")


@pytest.mark.parametrize("sample", ["calc_server", "calc_server_regressed"])
def test_three_shards_merged_are_one_run(tmp_path: Path, sample: str) -> None:
    server = command(PYTHON, "-m", f"mcp_replay_action.samples.{sample}")
    args = ("replay", "--server", server, "--cassette", CASSETTES)
    whole = run_cli(*args, report=tmp_path / "whole.json")
    shards = [run_cli(*args, "--shard", f"{i}/3", report=tmp_path / f"shard{i}.json") for i in (1, 2, 3)]
    assert all(s.report is not None for s in shards), [s.describe() for s in shards]
    counts = sorted(len(s.report["cassettes"]) for s in shards if s.report is not None)
    assert counts == [1, 1, 1]  # three cassettes over three shards: one each, none twice
    merged = run_cli("merge", *(tmp_path / f"shard{i}.json" for i in (1, 2, 3)), report=tmp_path / "merged.json")
    assert whole.report is not None and merged.report is not None, merged.describe()
    assert steady(merged.report) == steady(whole.report)
    assert merged.code == whole.code
    # merge repeats no command line (each shard ran its own): the whole run's accept line is the
    # one line it has and the merged run has not.
    accept = "to accept these changes"
    assert untimed(merged.stdout).splitlines() == [
        line for line in untimed(whole.stdout).splitlines() if not line.startswith(accept)
    ]


def test_merge_refuses_a_cassette_in_two_shards(tmp_path: Path) -> None:
    server = command(PYTHON, "-m", "mcp_replay_action.samples.calc_server")
    run_cli("replay", "--server", server, "--cassette", CASSETTES, "--shard", "1/2", report=tmp_path / "a.json")
    done = run_cli("merge", tmp_path / "a.json", tmp_path / "a.json")
    assert done.code == 2 and "is also in" in done.stderr, done.describe()


def test_shares_are_balanced_by_interaction_count_and_deterministic() -> None:
    weights = [100, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]
    shards = assign(weights, 2)
    assert shards == assign(weights, 2)
    loads = [sum(w for w, s in zip(weights, shards, strict=True) if s == k) for k in (0, 1)]
    assert sorted(loads) == [100, 100]
    assert assign([5, 5, 5], 5).count(0) == 1  # more shards than cassettes: some run nothing


@pytest.mark.parametrize("value", ["0/3", "4/3", "1/0", "2", "a/b", "1/300"])
def test_a_bad_shard_is_a_usage_error(value: str) -> None:
    done = run_cli("replay", "--server", "true", "--cassette", CASSETTES, "--shard", value)
    assert done.code == 2 and "expected a shard as i/n" in done.stderr, done.describe()


def test_the_action_input_shard(tmp_path: Path) -> None:
    from mcp_replay_action.errors import ConfigError
    from mcp_replay_action.github.settings import Settings

    def shard(value: str) -> tuple[int, int] | None:
        return Settings.from_env({"GITHUB_WORKSPACE": str(tmp_path), "INPUT_SERVER": "x", "INPUT_SHARD": value}).shard

    assert shard("") is None and shard("2/3") == (2, 3)
    with pytest.raises(ConfigError, match="input shard: expected a shard as i/n"):
        shard("3/2")


def _malformed(report: dict[str, Any], how: str) -> str:
    if how == "nan score":
        report["cassettes"][0]["score"] = float("nan")
    elif how == "infinite latency":
        report["cassettes"][0]["interactions"][0]["latency_ms"] = float("inf")
    elif how == "100k deep":
        return json.dumps(report)[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    elif how == "300 deep":  # under the interpreter's recursion limit, over the bound
        report["x"] = json.loads("[" * 300 + "]" * 300)
    return json.dumps(report)  # writes NaN and Infinity, as a careless writer would


@pytest.mark.parametrize("how", ["nan score", "infinite latency", "100k deep", "300 deep"])
def test_a_malformed_shard_report_is_a_one_line_usage_error(tmp_path: Path, how: str) -> None:
    server = command(PYTHON, "-m", "mcp_replay_action.samples.calc_server")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    run_cli("replay", "--server", server, "--cassette", CASSETTES, "--shard", "1/2", report=good)
    run_cli("replay", "--server", server, "--cassette", CASSETTES, "--shard", "2/2", report=bad)
    assert run_cli("merge", good, bad).code == 0  # the two shards as written merge
    bad.write_text(_malformed(json.loads(bad.read_text("utf-8")), how), "utf-8")
    done = run_cli("merge", good, bad)
    assert done.code == 2, done.describe()
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"mcp-replay: error: {bad}: "), done.describe()
    assert "Traceback" not in done.stderr
