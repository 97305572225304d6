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
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner_parse import read_outputs

ROOT = Path(__file__).resolve().parent.parent
COMPOSITE = ROOT / "composite" / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.+?)\s*\}\}")

pytestmark = [pytest.mark.release, pytest.mark.timeout(900)]


class CompositeRunner:
    """Just enough of the runner to run one composite action's steps."""

    def __init__(
        self,
        action: dict[str, Any],
        *,
        workspace: Path,
        temp: Path,
        inputs: dict[str, str],
        token: str,
        action_path: Path = COMPOSITE.parent,
        user: int | None = None,
    ):
        self.action = action
        self.action_path = action_path
        self.user = user  # run the steps as this uid (and gid), as the runner runs them as its user
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
                return str(self.action_path)
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
        """Run the steps in order; after the first failure only ``if: always()`` steps. Returns (exit
        code, log, outputs)."""
        log = []
        failed = 0
        for number, step in enumerate(self.action["runs"]["steps"]):
            assert step["shell"] == "bash"
            condition = step.get("if")
            assert condition in (None, "always()"), f"composite/action.yml: a condition this test does not know: {condition}"
            if failed and condition is None:
                continue
            output = self.temp / f"output-{number}"
            output.write_text("", encoding="utf-8")
            env = {**base_env, **{key: self.evaluate(str(value)) for key, value in step.get("env", {}).items()}}
            env["GITHUB_OUTPUT"] = str(output)
            script = self.temp / f"step-{number}.sh"
            script.write_text(self.evaluate(step["run"]), encoding="utf-8")
            if self.user is not None:
                for made in (output, script):
                    os.chown(made, self.user, self.user)
            cwd = self.evaluate(step.get("working-directory", str(self.workspace)))
            result = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False,
                **({"user": self.user, "group": self.user, "extra_groups": []} if self.user is not None else {}),
            )  # fmt: skip
            log.append(f"--- step {step.get('name')}: exit {result.returncode}\n{result.stdout}\n{result.stderr}")
            if "id" in step:
                self.step_outputs[step["id"]] = read_outputs(output)
            failed = failed or result.returncode
        if failed:
            return failed, "\n".join(log), {}
        outputs = {name: self.evaluate(spec["value"]) for name, spec in self.action["outputs"].items()}
        return 0, "\n".join(log), outputs


def runner_env(home: Path, workspace: Path, event: Path, summary: Path, path: str = "") -> dict[str, str]:
    """The job's environment: ``python`` on PATH is this interpreter (unless ``path`` is given),
    which has the sample server."""
    path = path or os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {
        "PATH": path,
        "HOME": str(home),
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(summary),
        "GITHUB_REPOSITORY": "octo/demo",
        "GITHUB_SHA": "f" * 40,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # never reached: a push event gets no comment
    }
    for key in ("PIP_CERT", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "SSL_CERT_FILE"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def composite_job(where: Path) -> tuple[Path, Path, Path]:
    """(workspace, runner temp, event file) of a push job, the workspace holding the calculator
    sample's cassette."""
    from mcp_replay_action.demo import record_demo_session

    workspace, temp = where / "workspace", where / "runner-temp"
    temp.mkdir()
    (workspace / "cassettes").mkdir(parents=True)
    record_demo_session(workspace / "cassettes" / "calc.jsonl")
    event = where / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main", "after": "f" * 40}), encoding="utf-8")
    return workspace, temp, event


SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
RUNNER_UID = 4242  # the runner's user in the probe below: not root, not the test's own user


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to run the job as another user")
def test_the_token_is_out_of_reach_of_install_and_the_server(tmp_path: Path) -> None:
    """Issue 20 items 1 and 2, the composite variant: the job runs as an unprivileged user (uid
    4242; the test's own process stands for the runner's worker, out of reach as GitHub's Yama
    setting puts it). ``install`` and the server walk ``/proc`` (their ancestors and every process
    of their user: environ, cmdline, writable memory) for the token, and ``install`` plants code
    into every module of the action's own virtual environment. Nothing finds the token, the token
    holder is seen but unreadable (non-dumpable), the bash step is gone (exec), and no planted
    line runs in the holder (everything was loaded before install)."""
    from mcp_replay_action.demo import record_demo_session

    base = Path(tempfile.mkdtemp(prefix="mcp-replay-composite-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        action = base / "action"  # the runner checks actions out as its own user (_actions/...)
        for name in ("composite", "requirements", "src"):
            shutil.copytree(ROOT / name, action / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        for name in ("pyproject.toml", "README.md"):
            shutil.copyfile(ROOT / name, action / name)
        workspace, temp, home = base / "workspace", base / "runner-temp", base / "home"
        (workspace / "cassettes").mkdir(parents=True)
        temp.mkdir()
        home.mkdir()
        record_demo_session(workspace / "cassettes" / "calc.jsonl")
        event = base / "event.json"
        event.write_text(json.dumps({"ref": "refs/heads/main", "after": "f" * 40}), encoding="utf-8")
        seen = base / "seen.jsonl"
        seen.write_text("", encoding="utf-8")
        for path in [base, *base.rglob("*")]:
            os.chown(path, RUNNER_UID, RUNNER_UID, follow_symlinks=False)
        token = "ghs_" + "C0mpositeT0ken" * 3
        # The job's Python is the system's (this test's own lives under /root); the server runs on
        # the action's venv (this use's own, named by the install step), so it imports the planted
        # modules itself: only the holder must not.
        venv = temp / "mcp-replay-action-venv.*"
        system = shutil.which("python3", path=SYSTEM_PATH)
        if system is None:
            pytest.skip("no system python3 an unprivileged user can run")
        snoop = f"{Path(__file__).parent / 'fakes' / 'proc_snoop.py'} {seen} {token[::-1]}"
        package = venv / "lib" / "python*" / "site-packages" / "mcp_replay_action"
        runner = CompositeRunner(
            yaml.safe_load(COMPOSITE.read_text(encoding="utf-8")),
            workspace=workspace, temp=temp, token=token, action_path=action / "composite", user=RUNNER_UID,
            # `; true`: the install shell stays the probe's parent, a process it can read.
            inputs={"install": f"{system} {snoop} --plant '{package}'; true",
                    "server": f"sh -c 'exec {venv}/bin/python {snoop} --serve'", "min-grade": "A"},
        )  # fmt: skip
        code, log, outputs = runner.run(runner_env(home, workspace, event, base / "summary.md", SYSTEM_PATH))
        assert code == 0, log
        assert outputs["grade"] == "A", log
        lines = seen.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines if not line.startswith("PLANTED")]
        holder_pids = {
            p["pid"]
            for r in records
            for p in r["processes"]
            if "mcp_replay_action.github" in p["cmdline"] and p["uid"] == RUNNER_UID
        }
        ran = [line for line in lines if line.startswith("PLANTED") and int(line.split()[1]) in holder_pids]
        assert {r["role"] for r in records} == {"install", "server"}
        [install] = [r for r in records if r["role"] == "install"]
        readable = [p for p in install["processes"] if p["environ"] == "read" and p["mem"] == "read"]
        assert readable, "the probe could read no process at all: it would prove nothing"
        assert sum(counts["planted"] for counts in install["plant"].values()) > 50  # it did plant
        for record in records:
            assert record["uid"] == RUNNER_UID
            for process in record["processes"]:
                assert process["found"] == [], process
            holders = [
                p for p in record["processes"] if "mcp_replay_action.github" in p["cmdline"] and p["uid"] == RUNNER_UID
            ]
            assert len(holders) == 1, record["processes"]
            assert holders[0]["environ"].startswith("unreadable") and holders[0]["mem"].startswith("unreadable")
            assert not [p for p in record["processes"] if p["cmdline"].startswith(("bash", "/bin/bash", "/usr/bin/bash"))
                        and "step-" in p["cmdline"]], "a bash step still runs"  # fmt: skip
        assert not ran, "planted code ran in the token holder:\n" + "\n".join(ran)
    finally:
        if not os.environ.get("KEEP_PROBE"):
            shutil.rmtree(base, ignore_errors=True)


PTH = "import os, sys; open({out!r}, 'a').write('PTH %d %r token=%s\\n' % (os.getpid(), sys.argv[:3], 'INPUT_GITHUB-TOKEN' in os.environ))\n"


def test_two_uses_in_one_job_share_no_environment(tmp_path: Path) -> None:
    """Issue 28 item 9: two uses of the composite action in one job, one ``RUNNER_TEMP``. The
    first use's ``install`` drops a ``.pth`` into every environment it finds under the runner's
    temp directory (a ``.pth`` runs at every interpreter start, before any code of ours). With
    one environment at a fixed path the second use's pip and token holder ran it, with the token
    in their environment; now each use has its own, removed when the use ends, so the second
    use's processes never meet it, and nothing is left in ``RUNNER_TEMP``."""
    workspace, temp, event = composite_job(tmp_path)
    ran = tmp_path / "pth-ran.txt"
    plant = tmp_path / "plant.py"
    plant.write_text(
        "import glob, sys\n"
        f"for site in glob.glob({str(temp)!r} + '/mcp-replay-action-venv*/lib/python*/site-packages'):\n"
        f"    open(site + '/zz_planted.pth', 'w').write({PTH.format(out=str(ran))!r})\n"
        "    print('planted', site)\n",
        encoding="utf-8",
    )
    action = yaml.safe_load(COMPOSITE.read_text(encoding="utf-8"))
    server = {"server": "python -m mcp_replay_action.samples.calc_server", "min-grade": "A"}
    uses = [
        CompositeRunner(action, workspace=workspace, temp=temp, token="job-token",
                        inputs={**server, "install": f"{sys.executable} {plant}"}),
        CompositeRunner(action, workspace=workspace, temp=temp, token="job-token", inputs=server),
    ]  # fmt: skip
    code, log, outputs = uses[0].run(runner_env(tmp_path, workspace, event, tmp_path / "summary.md"))
    assert code == 0 and outputs["grade"] == "A", log
    assert "planted " in log, "the first use's install found no environment to plant into"
    assert not list(temp.glob("mcp-replay-action-venv*")), "the first use left its environment behind"
    ran.write_text("", encoding="utf-8")  # what ran in the first use is not the question

    code, log, outputs = uses[1].run(runner_env(tmp_path, workspace, event, tmp_path / "summary.md"))
    assert code == 0 and outputs["grade"] == "A", log
    assert ran.read_text(encoding="utf-8") == "", "the first use's .pth ran in the second use"
    assert not list(temp.glob("mcp-replay-action-venv*")), "the second use left its environment behind"


def test_composite_action_installs_the_package_and_replays(tmp_path: Path) -> None:
    workspace, temp, event = composite_job(tmp_path)
    runner = CompositeRunner(
        yaml.safe_load(COMPOSITE.read_text(encoding="utf-8")),
        workspace=workspace, temp=temp, token="unused-token",
        inputs={"server": "python -m mcp_replay_action.samples.calc_server", "min-grade": "A"},
    )  # fmt: skip
    code, log, outputs = runner.run(runner_env(tmp_path, workspace, event, tmp_path / "summary.md"))

    assert code == 0, log
    venv_python = runner.step_outputs["install"]["python"]
    assert Path(venv_python).is_relative_to(temp), "the package must go into its own venv under runner.temp"
    assert outputs["grade"] == "A", log
    assert int(outputs["passed"]) >= 5 and outputs["failed"] == "0" and outputs["missing"] == "0"
    assert (workspace / outputs["report"]).is_file()
    assert "calc.jsonl" in (tmp_path / "summary.md").read_text(encoding="utf-8")
