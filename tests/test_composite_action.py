"""composite/action.yml really works: its steps run here the way the runner runs a composite
action (bash, expressions filled in, a fresh GITHUB_OUTPUT per step, outputs mapped from the
steps), on Linux, against the sample calculator server and a recorded cassette.

The first step creates a virtual environment and pip-installs the package from the checkout,
so the test needs PyPI (or a pip configuration that finds the build dependencies) and some
tens of seconds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSITE = ROOT / "composite" / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")

pytestmark = pytest.mark.timeout(900)


class CompositeRunner:
    """Just enough of the runner to run one composite action's steps."""

    def __init__(self, action: dict[str, Any], *, workspace: Path, temp: Path, inputs: dict[str, str], token: str):
        self.action = action
        self.workspace = workspace
        self.temp = temp
        self.token = token
        self.inputs = {name: spec.get("default", "") for name, spec in action["inputs"].items()}
        self.inputs.update(inputs)
        self.step_outputs: dict[str, dict[str, str]] = {}

    def evaluate(self, text: str) -> str:
        def one(match: re.Match[str]) -> str:
            expression = match.group(1)
            if expression == "github.action_path":
                return str(COMPOSITE.parent)
            if expression == "github.workspace":
                return str(self.workspace)
            if expression == "github.token":
                return self.token
            if expression == "runner.temp":
                return str(self.temp)
            if expression.startswith("inputs."):
                return self.evaluate(self.inputs[expression.removeprefix("inputs.")])
            found = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", expression)
            if found:
                return self.step_outputs.get(found.group(1), {}).get(found.group(2), "")
            raise AssertionError(f"composite/action.yml: expression this test does not know: {expression}")

        return EXPRESSION.sub(one, text)

    def run(self, base_env: dict[str, str]) -> tuple[int, str, dict[str, str]]:
        """Run the steps in order; stop at the first failure. Returns (exit code, log, outputs)."""
        log = []
        for number, step in enumerate(self.action["runs"]["steps"]):
            assert step["shell"] == "bash"
            output = self.temp / f"output-{number}"
            output.write_text("", encoding="utf-8")
            env = {**base_env, **{key: self.evaluate(str(value)) for key, value in step.get("env", {}).items()}}
            env["GITHUB_OUTPUT"] = str(output)
            script = self.temp / f"step-{number}.sh"
            script.write_text(self.evaluate(step["run"]), encoding="utf-8")
            cwd = self.evaluate(step.get("working-directory", str(self.workspace)))
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
            )  # fmt: skip
            log.append(f"--- step {step.get('name')}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
            if "id" in step:
                self.step_outputs[step["id"]] = read_outputs(output)
            if result.returncode != 0:
                return result.returncode, "\n".join(log), {}
        outputs = {name: self.evaluate(spec["value"]) for name, spec in self.action["outputs"].items()}
        return 0, "\n".join(log), outputs


def read_outputs(path: Path) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = iter(path.read_text(encoding="utf-8").splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            outputs[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def test_composite_action_installs_the_package_and_replays(tmp_path: Path) -> None:
    from mcp_replay_action.demo import record_demo_session

    workspace, temp = tmp_path / "workspace", tmp_path / "runner-temp"
    temp.mkdir()
    (workspace / "cassettes").mkdir(parents=True)
    record_demo_session(workspace / "cassettes" / "calc.jsonl")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main", "after": "f" * 40}), encoding="utf-8")
    runner = CompositeRunner(
        yaml.safe_load(COMPOSITE.read_text(encoding="utf-8")),
        workspace=workspace, temp=temp, token="unused-token",
        inputs={"server": "python -m mcp_replay_action.samples.calc_server", "min-grade": "A"},
    )  # fmt: skip
    # The job's own toolchain: `python` on PATH is this interpreter, which has the sample server.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    base_env = {
        "PATH": path,
        "HOME": str(tmp_path),
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_SHA": "f" * 40,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # never reached: a push event gets no comment
    }
    for key in ("PIP_CERT", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "SSL_CERT_FILE"):
        if key in os.environ:
            base_env[key] = os.environ[key]

    code, log, outputs = runner.run(base_env)

    assert code == 0, log
    venv_python = runner.step_outputs["install"]["python"]
    assert Path(venv_python).is_relative_to(temp), "the package must go into its own venv under runner.temp"
    assert outputs["grade"] == "A", log
    assert int(outputs["passed"]) >= 5 and outputs["failed"] == "0" and outputs["missing"] == "0"
    assert (workspace / outputs["report"]).is_file()
    assert "calc.jsonl" in (tmp_path / "summary.md").read_text(encoding="utf-8")
