"""The action split over three matrix jobs (``shard: i/3``) and merged (``mode: merge``) posts
one sticky comment and gives the grade, outputs and gate of one job replaying everything,
against the fake GitHub API on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import CALC_REGRESSED, make_workspace, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK
from mcp_replay_action.github import comment as sticky

pytestmark = pytest.mark.integration

REPO_ROOT = Path(__file__).resolve().parent.parent
SHA = "abc1234" + "0" * 33


def test_three_shards_merged_post_one_comment_and_gate_as_one_run(tmp_path: Path, fake: FakeGitHub) -> None:
    sources = sorted((REPO_ROOT / "cassettes/calc").glob("*.jsonl"))
    ws = make_workspace(tmp_path, {f"cassettes/{p.name}": p for p in sources})
    event = pull_request(7, SHA)
    base = {"server": CALC_REGRESSED, "github-token": "app-token"}

    shards = []
    for i in (1, 2, 3):
        # Each shard only reports: no comment, no gate (the merge job does both).
        inputs = {**base, "shard": f"{i}/3", "comment": "off", "fail-on": "none", "report-file": f"shards/{i}.json"}
        shards.append(run_action(ws, event_name="pull_request", event=event, inputs=inputs, api_url=fake.url))
    assert [s.returncode for s in shards] == [EXIT_OK] * 3, [s.stdout + s.stderr for s in shards]
    assert fake.comments.get(("octo/demo", 7), []) == []
    per_shard = [len(json.loads((ws / f"shards/{i}.json").read_text())["cassettes"]) for i in (1, 2, 3)]
    assert sorted(per_shard) == [1, 1, 1]

    merged = run_action(
        ws,
        event_name="pull_request",
        event=event,
        inputs={"mode": "merge", "reports": "shards/*.json", "github-token": "app-token"},
        api_url=fake.url,
    )
    assert merged.returncode == EXIT_GATE, merged.stdout + merged.stderr
    ours = [c for c in fake.comments.get(("octo/demo", 7), []) if sticky.marker("default") in c["body"]]
    assert len(ours) == 1
    assert "❌" in ours[0]["body"] and "mcp-replay gate" in merged.stdout

    whole = run_action(ws, event_name="pull_request", event=event, inputs={**base, "comment": "off"}, api_url=fake.url)
    assert whole.returncode == EXIT_GATE
    for key in ("grade", "score", "passed", "failed", "missing", "gate"):
        assert merged.outputs[key] == whole.outputs[key], key
    assert "calc" in merged.summary and merged.summary.count("session.jsonl") == whole.summary.count("session.jsonl")


def test_merge_mode_needs_reports(tmp_path: Path, fake: FakeGitHub) -> None:
    ws = make_workspace(tmp_path, {})
    done = run_action(ws, event_name="push", event={}, inputs={"mode": "merge"}, api_url=fake.url)
    assert done.returncode == 2 and "input reports: mode merge needs" in done.stdout, done.stdout + done.stderr
