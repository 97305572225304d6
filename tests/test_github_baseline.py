"""Input ``baseline``: on a pull request with no cassette committed, the base build (the merge base,
checked out with git beside the workspace) is explored and replayed against the head. A real git
repository on disk with two commits of a real server (over stdio, and over Streamable HTTP on
127.0.0.1 with ``url``), the real entrypoint as a subprocess, the fake GitHub API on 127.0.0.1 for
the comment."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from baseline_repo import BASELINE_LINE, REGRESSED, SAME, WORKFLOW, WORKFLOW_REF, repository, with_base
from fakegithub import FakeGitHub, git
from github_action_run import PY, SYSTEM_PYTHON, run_action
from github_events import REPO, pull_request
from http_helpers import FAST_HTTP, free_port
from mcp_replay_action.errors import EXIT_GATE, EXIT_OK, EXIT_USAGE
from sarif_check import valid_sarif

pytestmark = pytest.mark.integration

OWNER = 4321  # the workspace's owner when the entrypoint runs as the image runs it (as root)

# A user's server over Streamable HTTP: the SDK task tracker (tests/fakes/http_fast_server.py) as
# the build FAST_SERVER_VARIANT names, on the port given as its argument.
HTTP_SERVER = f"""\
import os, runpy
os.environ["FAST_SERVER_VARIANT"] = "{{variant}}"
runpy.run_path({str(FAST_HTTP)!r}, run_name="__main__")
"""


def _event(head: str, base: str) -> dict[str, Any]:
    return with_base(pull_request(7, head), base)


def _run(  # type: ignore[no-untyped-def]
    ws: Path,
    fake: FakeGitHub,
    event: dict[str, Any],
    baseline: str = "merge-base",
    *,
    python: str = PY,
    env: dict[str, str] | None = None,
    **given: str,
):
    inputs = {"server": f"{python} server.py", "baseline": baseline, "github-token": "app-token", **given}
    return run_action(ws, event_name="pull_request", event=event, inputs=inputs, api_url=fake.url, extra_env=env)


def test_a_breaking_change_against_the_merge_base_fails_the_gate_with_no_cassette(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    ws, base, head = repository(tmp_path, REGRESSED)
    env = {"GITHUB_WORKFLOW_REF": WORKFLOW_REF}
    run = _run(ws, fake, _event(head, base), env=env, **{"sarif-file": "mcp-replay.sarif"})
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    assert f"Comparing with the base build at {base[:12]} (merge-base)" in run.stdout
    assert run.outputs["gate"] == "failed"
    (comment,) = fake.comments[(REPO, 7)]
    assert "tools/call add" in comment["body"] and "breaking" in comment["body"], comment["body"]
    # No file of the repository holds the exploration: no blob link, no file annotation.
    assert f"baseline {base[:12]}" in comment["body"] and "/blob/" not in comment["body"]
    (finding,) = [
        a for a in run.annotations() if a.name == "error" and "tools/call add" in a.properties.get("title", "")
    ]
    assert "file" not in finding.properties and "line" not in finding.properties
    assert "against the base build (`baseline`): there is nothing to rewrite" in comment["body"]
    # What was explored, and the findings as JSON a coding agent can act on.
    assert f"**Explored the base build** (`{base[:12]}`): 1 tool(s) called: `add`; 0 left alone." in comment["body"]
    block = comment["body"].split("```json\n", 1)[1].split("\n```", 1)[0]
    (change,) = [f for f in json.loads(block) if f["class"] == "breaking"]
    assert change == {
        "cassette": f"baseline {base[:12]}",
        "interaction": "tools/call add",
        "rule": "value-changed",
        "class": "breaking",
        "kind": "value-change",
        "path": "$.result.content[0].text",
        "message": 'value changed: "0" -> "1"',
    }
    assert not (ws / "cassettes").exists()  # nothing was written into the workspace
    assert git(ws, "worktree", "list").count("\n") == 0  # the base's worktree is gone again
    # SARIF: no cassette line to point at, so the finding sits on the workflow line that asks for
    # the baseline (a real line of the repository, as code scanning requires) and names the tool.
    log = valid_sarif((ws / "mcp-replay.sarif").read_text("utf-8"))
    (result,) = [r for r in log["runs"][0]["results"] if r["level"] == "error"]
    (location,) = result["locations"]
    assert location["physicalLocation"] == {
        "artifactLocation": {"uri": WORKFLOW},
        "region": {"startLine": BASELINE_LINE},
    }
    assert (ws / WORKFLOW).read_text().splitlines()[BASELINE_LINE - 1].strip() == "baseline: merge-base"
    assert location["logicalLocations"] == [{"name": "add", "fullyQualifiedName": "tools/call add", "kind": "function"}]
    assert result["message"]["text"].startswith(f"baseline {base[:12]}: tools/call add: ")
    assert result["partialFingerprints"] == {
        "mcpReplayFinding/v1": f"{WORKFLOW}:tools/call add:value-change:$.result.content[0].text"
    }


def test_the_same_build_as_its_base_is_clean_three_times(tmp_path: Path, fake: FakeGitHub) -> None:
    ws, base, head = repository(tmp_path, SAME)
    for _ in range(3):
        run = _run(ws, fake, _event(head, base))
        assert run.returncode == EXIT_OK, run.stdout + run.stderr
        assert run.outputs["gate"] == "passed" and run.outputs["failed"] == "0"


def test_a_ref_the_checkout_lacks_is_one_line_naming_fetch_depth(tmp_path: Path, fake: FakeGitHub) -> None:
    ws, base, head = repository(tmp_path, SAME)
    run = _run(ws, fake, _event(head, base), baseline="v9.9.9")
    assert run.returncode == EXIT_USAGE, run.stdout + run.stderr
    assert "input baseline: 'v9.9.9' is not a commit of this checkout" in run.stdout
    assert "fetch-depth: 0" in run.stdout
    missing = _run(ws, fake, _event(head, "f" * 40))
    assert missing.returncode == EXIT_USAGE, missing.stdout + missing.stderr
    assert "base commit ffffffffffff is not in this checkout" in missing.stdout and "fetch-depth: 0" in missing.stdout


def _over_http(ws: Path, fake: FakeGitHub, event: dict[str, Any]):  # type: ignore[no-untyped-def]
    """A run with ``url``: ``server`` starts each build (base, then head) listening on one port."""
    port = free_port()
    return _run(ws, fake, event, server=f"{PY} server.py {port}", url=f"http://127.0.0.1:{port}/mcp")


def test_over_http_a_tool_removed_since_the_merge_base_fails_the_gate(tmp_path: Path, fake: FakeGitHub) -> None:
    base_source = HTTP_SERVER.format(variant="")
    ws, base, head = repository(tmp_path, HTTP_SERVER.format(variant="remove-tool"), base_source)
    run = _over_http(ws, fake, _event(head, base))
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    assert run.outputs["gate"] == "failed"
    (comment,) = fake.comments[(REPO, 7)]
    block = comment["body"].split("```json\n", 1)[1].split("\n```", 1)[0]
    breaking = [(f["interaction"], f["rule"], f["path"]) for f in json.loads(block) if f["class"] == "breaking"]
    assert breaking == [("tools/list", "tool-removed", "$.result.tools[name=legacy_sum]")], comment["body"]
    assert git(ws, "worktree", "list").count("\n") == 0


def test_over_http_the_same_build_as_its_base_is_clean(tmp_path: Path, fake: FakeGitHub) -> None:
    source = HTTP_SERVER.format(variant="")
    ws, base, head = repository(tmp_path, source + "# a comment\n", source)
    run = _over_http(ws, fake, _event(head, base))
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert run.outputs["gate"] == "passed" and run.outputs["failed"] == "0"


def test_url_alone_cannot_start_the_base_and_is_refused(tmp_path: Path, fake: FakeGitHub) -> None:
    ws, base, head = repository(tmp_path, SAME)
    run = _run(ws, fake, _event(head, base), server="", url="http://127.0.0.1:9/mcp")
    assert run.returncode == EXIT_USAGE, run.stdout + run.stderr
    assert "input baseline: with url alone the base build cannot be started" in run.stdout


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or SYSTEM_PYTHON is None,
    reason="running as the image runs (dropping privileges) needs root, and a python3 another user can run",
)
def test_as_the_image_runs_it_git_runs_as_the_workspace_owner_never_the_token_holder(
    reachable_tmp: Path, fake: FakeGitHub
) -> None:
    """The image: the entrypoint as root with ``MCP_REPLAY_RUN_AS=workspace-owner``, the workspace
    another user's (as on GitHub, where the runner's user checked it out). git runs as that user,
    so its ownership check passes with no exception configured, and a ``post-checkout`` hook the
    head's ``install`` planted in ``.git`` runs as that user too, never as the token holder."""
    ws, base, head = repository(reachable_tmp, REGRESSED)
    ran_as = ws / "hook-ran-as"
    hook = f"#!/bin/sh\nid -u >> {ran_as}\n"
    plant = f"if [ -d .git ]; then printf '{hook}' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout; fi"
    for path in [ws, *ws.rglob("*")]:
        os.chown(path, OWNER, OWNER, follow_symlinks=False)
    run = _run(
        ws, fake, _event(head, base), python=SYSTEM_PYTHON or "python3", env={"MCP_REPLAY_RUN_AS": "workspace-owner"},
        **{"install": plant, "sarif-file": "mcp-replay.sarif"},
    )  # fmt: skip
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    assert run.outputs["gate"] == "failed"
    (comment,) = fake.comments[(REPO, 7)]
    assert "tools/call add" in comment["body"] and "breaking" in comment["body"], comment["body"]
    assert ran_as.read_text().split() == [str(OWNER)], "git worktree add ran the hook as someone else"
    assert not list((ws / ".git" / "worktrees").glob("*")), "the base's worktree is still registered"
    # Without GITHUB_WORKFLOW_REF there is no file to point the baseline's findings at: they are
    # left out of the SARIF log, and a warning says so.
    assert valid_sarif((ws / "mcp-replay.sarif").read_text("utf-8"))["runs"][0]["results"] == []
    assert any("left out of the SARIF log" in a.data for a in run.annotations("warning")), run.stdout
