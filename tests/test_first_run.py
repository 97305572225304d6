"""The first CI run and the README, as two new users met them (issue 30): what the README's
workflows and snippets say holds when they are taken as written, and the action's entrypoint
(a subprocess, the fake GitHub API on 127.0.0.1) does what they promise."""

from __future__ import annotations

import builtins
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakegithub import FakeGitHub
from github_action_run import CALC_REGRESSED, make_workspace, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_GATE

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
OURS = "mcp-replay/mcp-replay-action@"


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert found, f"the README has no '## {title}' section"
    return found.group(1)


def our_steps(workflow: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(job name, ``with``) of every step that uses this action."""
    return [
        (name, step.get("with") or {})
        for name, job in workflow["jobs"].items()
        for step in job.get("steps", [])
        if str(step.get("uses", "")).startswith(OURS)
    ]


def yaml_blocks(text: str) -> list[dict[str, Any]]:
    return [yaml.safe_load(b) for b in re.findall(r"```ya?ml\n(.*?)```", text, re.S)]


def test_the_quick_start_workflow_installs_the_servers_dependencies_and_says_what_to_pin() -> None:
    quick = section("Quick start")
    [workflow] = [b for b in yaml_blocks(quick) if isinstance(b, dict) and "jobs" in b]
    [(_, inputs)] = our_steps(workflow)
    assert inputs.get("install"), "the quick start's workflow has no install: its first run fails on any dependency"
    # Before the first release @v1 does not resolve: the README says what to pin then, and after.
    assert "<40-hex SHA>" in quick and "about 1.5 minutes" in quick
    assert "From the first release on, use `@v1`, or the release's" in quick


def test_the_install_section_names_an_install_from_a_clone() -> None:
    assert re.search(r"^pipx install \.\s+#", section("Install"), re.M)


def test_the_pytest_snippet_runs_as_written_and_says_where_to_install() -> None:
    text = section("pytest plugin")
    assert "a `pipx` or `uv tool` install is a separate environment pytest does not see" in text
    [snippet] = re.findall(r"```python\n(.*?)```", text, re.S)
    namespace: dict[str, Any] = {}
    exec(compile(snippet, "README.md (pytest plugin)", "exec"), namespace)  # its imports must work
    tests = [v for k, v in namespace.items() if k.startswith("test_") and callable(v)]
    assert tests
    for test in tests:  # every global name the test uses is defined by the snippet itself
        unbound = [n for n in test.__code__.co_names if n not in namespace and not hasattr(builtins, n)]
        assert not unbound, f"{test.__name__} uses {unbound}, which the snippet does not import"


def documented_refresh_workflows() -> list[tuple[str, dict[str, Any]]]:
    """The README's full workflow and the examples that hold a refresh job beside the replay job."""
    found = [("README.md", b) for b in yaml_blocks(section("In GitHub Actions")) if isinstance(b, dict) and "jobs" in b]
    found += [
        (p.name, yaml.safe_load(p.read_text(encoding="utf-8"))) for p in sorted((ROOT / "docs/examples").glob("*.yml"))
    ]
    return [(name, wf) for name, wf in found if any(w.get("mode") == "refresh" for _, w in our_steps(wf))]


def test_every_documented_refresh_workflow_names_its_own_file_for_the_link() -> None:
    workflows = documented_refresh_workflows()
    assert {name for name, _ in workflows} >= {"README.md", "mcp-replay.yml", "mcp-replay-refresh.yml"}
    for name, workflow in workflows:
        replaying = [w for _, w in our_steps(workflow) if w.get("mode", "replay") == "replay"]
        assert replaying, name
        for inputs in replaying:  # the file the README and the example tell users to copy it to
            assert inputs.get("refresh-workflow") == "mcp-replay.yml", f"{name}: {inputs}"


def test_an_example_run_by_hand_refreshes() -> None:
    """**Run workflow** on an example that replays is the refresh the failing comment links to: an
    example with a ``workflow_dispatch`` trigger and a replay step has a refresh job too."""
    refreshing = {name for name, _ in documented_refresh_workflows()}
    for path in sorted((ROOT / "docs/examples").glob("*.yml")):
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare ``on`` as true
        replays = any(w.get("mode", "replay") == "replay" for _, w in our_steps(workflow))
        if replays and isinstance(triggers, dict) and "workflow_dispatch" in triggers:
            assert path.name in refreshing, f"{path.name}: workflow_dispatch without a refresh job"


def test_the_readme_workflow_links_its_refresh_without_github_workflow_ref(
    tmp_path: Path, fake: FakeGitHub, calc_cassette: Path
) -> None:
    """The README's replay step, inputs as written (the server swapped for a regressed sample,
    no install), on a runner that does not set GITHUB_WORKFLOW_REF: the failing comment still
    links the refresh workflow's "Run workflow" page, on the pull request's branch."""
    [workflow] = [wf for name, wf in documented_refresh_workflows() if name == "README.md"]
    [inputs] = [w for _, w in our_steps(workflow) if w.get("mode", "replay") == "replay"]
    ws = make_workspace(tmp_path, {"cassettes/calc.jsonl": calc_cassette})
    given = {k: str(v) for k, v in inputs.items() if k != "install"}
    run = run_action(
        ws,
        event_name="pull_request",
        event=pull_request(7, "c" * 40, ref="feature"),
        inputs={**given, "server": CALC_REGRESSED, "github-token": "app-token"},
        api_url=fake.url,
    )
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    [comment] = fake.comments[("octo/demo", 7)]
    assert "https://github.com/octo/demo/actions/workflows/mcp-replay.yml" in comment["body"]
    assert "**Use workflow from: feature**" in comment["body"]
