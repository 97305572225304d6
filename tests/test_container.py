"""The action's real image, built from the real Dockerfile and run the way GitHub runs a Docker
action, with no Docker engine: buildah builds, podman runs (tests/container/README.md).

Opt-in, because a cold run takes minutes and needs root: ``MCP_REPLAY_CONTAINER_TESTS=1
.venv/bin/pytest -m container tests/test_container.py``. The first run makes a Debian stand-in
for ``python:3.12-slim`` with debootstrap (cached in /var/tmp/mcp-replay-rootfs); set
``MCP_REPLAY_REUSE_IMAGE=1`` to skip rebuilding an image that is already there.

What is shown: the container replays cassettes against a Python sample server (healthy, then its
regressed twin) and a Node server installed by the ``install`` input from the npm registry, and
writes outputs, the job summary, annotations and one sticky comment to a fake GitHub API on
127.0.0.1; with ``baseline: merge-base`` and no cassette, it checks the base commit of a real git
repository out with the image's git and fails the gate on the head's breaking change; and the
dogfood workflow runs end to end through ``act`` on podman's Docker socket.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from container_opt_in import CONTAINER_TESTS
from github_action_run import copy_package_sources

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "container"
REPO = "octo/demo"
TOKEN = "test-token"
PR = 7
HEAD_SHA = "0123456789abcdef0123456789abcdef01234567"
EVERYTHING = "@modelcontextprotocol/server-everything"
RUNNER_UID = 1001  # the runner's user on GitHub's hosted runners, who owns the workspace
RUNNER_GID = 121  # its primary group there: docker, the group of the Docker socket the runner mounts
CHILD_GID = 65532  # the group the code under test gets instead (host/privilege.py: FALLBACK_ID)
FILE_COMMANDS = ("set_env_step", "add_path_step", "set_output_step", "step_summary_step", "save_state_step")

pytestmark = [*CONTAINER_TESTS, pytest.mark.timeout(2400)]

ENGINE_ENV = {**os.environ, "CONTAINERS_CONF": str(SCRIPTS / "containers.conf"),
              "CONTAINERS_STORAGE_CONF": str(SCRIPTS / "storage.conf")}  # fmt: skip
# The budget (issue 10) is for the image users pull, on the real python:3.12-slim base. Where that
# base cannot be pulled (no registry here) the test measures the layers the Dockerfile adds on a
# stand-in and adds the real base's size as published for the pinned digest's platform.
BUDGET_UNPACKED = 330_000_000
BUDGET_COMPRESSED = 130_000_000
REAL_BASE_UNPACKED = 130_000_000  # python:3.12-slim, unpacked, rounded up
REAL_BASE_COMPRESSED = 45_000_000  # the same, as pulled (gzip layers), rounded up

fakegithub = pytest.importorskip("fakegithub", reason="tests/fakegithub.py is not there yet")


def sh(args: list[str], *, timeout: float, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run one of the tests/container scripts, bounded, and fail with its output."""
    result = subprocess.run(
        args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 0, (
        f"{args} exited {result.returncode}\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    return result


@functools.cache
def engine() -> str:
    """docker where an engine answers (GitHub's runners), else podman (tests/container/env.sh)."""
    result = subprocess.run(
        ["bash", "-c", f"source {SCRIPTS / 'env.sh'} && echo $MCP_REPLAY_ENGINE"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return result.stdout.strip()


@pytest.fixture(scope="module")
def image() -> str:
    """The action's image, built from the repository's Dockerfile (Docker's layering)."""
    if engine() == "podman" and os.geteuid() != 0:
        pytest.skip("no Docker engine here, and podman/buildah as used here need root")
    sh(["bash", str(SCRIPTS / "install-tools.sh")], timeout=900)
    name = os.environ.get("MCP_REPLAY_IMAGE", "localhost/mcp-replay-action:dev")
    exists = subprocess.run([engine(), "image", "inspect", name], env=ENGINE_ENV, capture_output=True, timeout=60,
                            check=False).returncode == 0  # fmt: skip
    if not (exists and os.environ.get("MCP_REPLAY_REUSE_IMAGE") == "1"):
        sh(["bash", str(SCRIPTS / "make-base.sh")], timeout=900)
        sh(["bash", str(SCRIPTS / "build.sh")], timeout=1500)
    return name


@pytest.fixture()
def github() -> Iterator[Any]:
    with fakegithub.FakeGitHub() as fake:
        fake.add_token(TOKEN)
        fake.add_pull(REPO, PR, head_sha=HEAD_SHA, head_ref="feature")
        yield fake


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str


def pull_request_event() -> dict[str, Any]:
    repo = {"full_name": REPO, "fork": False}
    return {
        "action": "synchronize",
        "number": PR,
        "pull_request": {
            "number": PR,
            "head": {"sha": HEAD_SHA, "ref": "feature", "repo": repo},
            "base": {"ref": "main", "repo": repo},
        },
        "repository": {"full_name": REPO},
    }


def parse_outputs(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT as the runner reads it: ``name=value`` and ``name<<DELIM ... DELIM``."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            for inner in lines:
                if inner == delimiter:
                    break
                body.append(inner)
            else:
                raise AssertionError(f"GITHUB_OUTPUT: delimiter {delimiter!r} of {name} never closed")
            outputs[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            outputs[name] = value
    return outputs


def give_to_runner(*paths: Path) -> None:
    """What the runner's user owns on GitHub: the checkout, the job's home (``_github_home``), the
    event (``_github_workflow``) and the step's file-command files (``_runner_file_commands``)."""
    for top in paths:
        for path in [top, *top.rglob("*")]:
            os.chown(path, RUNNER_UID, RUNNER_GID, follow_symlinks=False)


def run_action(
    image: str,
    workspace: Path,
    rundir: Path,
    github: Any,
    inputs: dict[str, str],
    *,
    options: tuple[str, ...] = (),
    event: dict[str, Any] | None = None,
) -> Run:
    """The container, once, with GitHub's mounts and environment (tests/container/run-action.sh);
    the workspace, the home, the event and the file-command files belong to the runner's user, as
    they do on GitHub."""
    for name in ("home", "workflow", "file_commands"):
        (rundir / name).mkdir(parents=True, exist_ok=True)
    payload = event if event is not None else pull_request_event()
    (rundir / "workflow" / "event.json").write_text(json.dumps(payload), encoding="utf-8")
    for name in FILE_COMMANDS:  # fresh per step, as the runner gives them
        (rundir / "file_commands" / name).write_text("", encoding="utf-8")
    give_to_runner(workspace, rundir / "home", rundir / "workflow", rundir / "file_commands")
    container = f"mcp-replay-test-{uuid.uuid4().hex[:12]}"
    settings = [
        "--name", container,
        "-e", "GITHUB_EVENT_NAME=pull_request",
        "-e", f"GITHUB_REPOSITORY={REPO}",
        "-e", f"GITHUB_SHA={HEAD_SHA}",
        "-e", "GITHUB_REF=refs/pull/7/merge",
        "-e", "GITHUB_RUN_ID=4242",
        "-e", "GITHUB_RUN_ATTEMPT=1",
        "-e", "GITHUB_SERVER_URL=https://github.example",
        "-e", f"GITHUB_API_URL={github.url}",
        "-e", f"INPUT_GITHUB-TOKEN={TOKEN}",
    ]  # fmt: skip
    for name, value in inputs.items():
        settings += ["-e", f"INPUT_{name.upper()}={value}"]
    env = {**os.environ, "MCP_REPLAY_IMAGE": image, "MCP_REPLAY_RUN_TIMEOUT": "600"}
    try:
        result = subprocess.run(
            ["bash", str(SCRIPTS / "run-action.sh"), str(workspace), str(rundir), *settings, *options],
            env=env, capture_output=True, text=True, timeout=700, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        # A run cut short by the timeout must not leave its container behind.
        subprocess.run([engine(), "rm", "-f", container], env=env, capture_output=True, timeout=120, check=False)
    return Run(
        returncode=result.returncode,
        stdout=result.stdout,
        stderr=result.stderr,
        outputs=parse_outputs((rundir / "file_commands" / "set_output_step").read_text(encoding="utf-8")),
        summary=(rundir / "file_commands" / "step_summary_step").read_text(encoding="utf-8"),
    )


def explain(run: Run) -> str:
    return f"exit {run.returncode}\n--- stdout\n{run.stdout[-6000:]}\n--- stderr\n{run.stderr[-6000:]}"


def comments(github: Any) -> list[dict[str, Any]]:
    """Copies of the PR's comments as they are now (the fake edits its own dicts in place)."""
    return [dict(comment) for comment in github.comments.get((REPO, PR), [])]


# ---- recording the cassettes the container replays (on the host, through the real proxy) ------


def record_calc_cassette(path: Path) -> None:
    from mcp_replay_action.demo import record_demo_session

    path.parent.mkdir(parents=True, exist_ok=True)
    record_demo_session(path)


def record_everything_cassette(path: Path, server: Path) -> None:
    """A short session with the npm 'everything' server through ``mcp-replay record``."""
    from mcp_replay_action.transport.stdio import StdioTransport

    path.parent.mkdir(parents=True, exist_ok=True)
    proxy = [sys.executable, "-m", "mcp_replay_action", "record", "--server", f"node {server}", "--cassette", str(path)]
    transport = StdioTransport(proxy)
    transport.start()
    try:
        next_id = 0

        def request(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
            nonlocal next_id
            next_id += 1
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": next_id, "method": method}
            if params is not None:
                message["params"] = params
            transport.send(message)
            while True:
                reply = transport.receive(30.0)
                if reply.get("id") == next_id and "method" not in reply:
                    return reply

        client_info = {"name": "container-test", "version": "1"}
        request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client_info})
        transport.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        request("tools/list")
        request("tools/call", {"name": "echo", "arguments": {"message": "hello from the container test"}})
        request("tools/call", {"name": "get-sum", "arguments": {"a": 2, "b": 3}})
        request("prompts/list")
    finally:
        transport.close()
    assert path.exists() and len(path.read_text(encoding="utf-8").splitlines()) >= 5


# ---- the tests -------------------------------------------------------------------------------


def test_python_sample_server_outputs_summary_annotations_and_one_sticky_comment(
    image: str, github: Any, tmp_path: Path
) -> None:
    workspace = tmp_path / "workspace"
    record_calc_cassette(workspace / "cassettes" / "calc.jsonl")
    copy_package_sources(workspace)
    inputs = {"server": "python -m mcp_replay_action.samples.calc_server", "working-directory": "src", "min-grade": "B"}

    first = run_action(image, workspace, tmp_path / "run1", github, inputs)
    assert first.returncode == 0, explain(first)
    outputs = first.outputs
    assert outputs["grade"] == "A", outputs
    assert float(outputs["score"]) >= 90
    assert int(outputs["passed"]) >= 5 and outputs["failed"] == "0" and outputs["missing"] == "0"
    report = workspace / outputs["report"]
    assert report.is_file(), f"report {outputs['report']} is not in the workspace"
    assert json.loads(report.read_text(encoding="utf-8"))
    assert "calc.jsonl" in first.summary and "A" in first.summary
    assert "::error" not in first.stdout
    posted = comments(github)
    assert len(posted) == 1, posted
    assert outputs.get("comment-url") == posted[0]["html_url"]
    assert "calc.jsonl" in posted[0]["body"]

    # A second push with the same result: still one comment, not edited (the body is unchanged).
    second = run_action(image, workspace, tmp_path / "run2", github, inputs)
    assert second.returncode == 0, explain(second)
    assert len(comments(github)) == 1
    assert not github.requests("PATCH"), "an unchanged comment was edited"

    # The regressed twin: the gate fails, annotations point at the cassette lines, and the same
    # comment is edited in place.
    regressed = run_action(
        image, workspace, tmp_path / "run3", github,
        {**inputs, "server": "python -m mcp_replay_action.samples.calc_server_regressed"},
    )  # fmt: skip
    assert regressed.returncode == 1, explain(regressed)
    assert int(regressed.outputs["failed"]) >= 1
    assert float(regressed.outputs["score"]) < 100, regressed.outputs  # the grade letter depends on the weights
    annotations = re.findall(r"^::(error|warning) file=([^,]+),line=(\d+)", regressed.stdout, re.M)
    assert annotations, explain(regressed)
    assert {file for _, file, _ in annotations} == {"cassettes/calc.jsonl"}
    lines = (workspace / "cassettes" / "calc.jsonl").read_text(encoding="utf-8").splitlines()
    assert all(1 <= int(line) <= len(lines) for _, _, line in annotations)
    assert "<details>" in regressed.summary
    final = comments(github)
    assert len(final) == 1 and final[0]["id"] == posted[0]["id"]
    assert final[0]["body"] != posted[0]["body"]
    assert len(github.requests("PATCH")) == 1


def test_node_server_installed_by_the_install_input(image: str, github: Any, tmp_path: Path) -> None:
    manifest = json.loads((ROOT / "tests" / "servers" / "package.json").read_text(encoding="utf-8"))
    version = manifest["dependencies"][EVERYTHING]
    local = ROOT / "tests" / "servers" / "node_modules" / EVERYTHING / "dist" / "index.js"
    if not local.exists() or shutil.which("node") is None:
        pytest.skip("the npm test servers are not installed: npm ci --prefix tests/servers")
    workspace = tmp_path / "workspace"
    record_everything_cassette(workspace / "cassettes" / "everything.jsonl", local)

    run = run_action(
        image, workspace, tmp_path / "run", github,
        {
            # npm and npx from the image, the server from the npm registry at the recorded version.
            "install": f"npm install --no-audit --no-fund --no-save {EVERYTHING}@{version}",
            "server": "npx --no-install mcp-server-everything",
            "comment-id": "node",
            "min-grade": "A",
        },
    )  # fmt: skip
    assert run.returncode == 0, explain(run)
    assert run.outputs["grade"] == "A", run.outputs
    assert int(run.outputs["passed"]) >= 4 and run.outputs["failed"] == "0"
    assert (workspace / "node_modules" / EVERYTHING / "package.json").is_file()
    assert "everything.jsonl" in run.summary
    posted = comments(github)
    assert len(posted) == 1 and "everything.jsonl" in posted[0]["body"]


def test_install_and_the_server_run_unprivileged_and_cannot_reach_the_token(
    image: str, github: Any, tmp_path: Path
) -> None:
    """Issue 20 item 2, the image: ``install`` (which also ``pip install -e``s the server from the
    workspace, unprivileged) and the server are a probe that says who it runs as, tries to plant
    code into the action's package and to write /opt/mcp-replay, and reads every ``/proc/*``
    (environ, cmdline, writable memory) for the token. They run as the workspace's owner (uid 1001),
    with no root group; the planting is refused; the token holder (PID 1, root) is unreadable to
    them, and the token is in nothing they can read. The token still works for the comment, and
    the report belongs to the workspace's owner."""
    workspace = tmp_path / "workspace"
    record_calc_cassette(workspace / "cassettes" / "calc.jsonl")
    copy_package_sources(workspace)
    package = workspace / "pkg"
    package.mkdir()
    shutil.copyfile(ROOT / "tests" / "fakes" / "proc_snoop.py", package / "probe_server.py")
    (package / "pyproject.toml").write_text(
        '[project]\nname = "probe-server"\nversion = "0.1"\n[tool.setuptools]\npy-modules = ["probe_server"]\n',
        encoding="utf-8",
    )
    token = "ghs_" + "Im4geT0kenValue" * 3
    github.add_token(token)
    seen = "/github/workspace/seen.jsonl"
    probe = f"python -m probe_server {seen} {token[::-1]}"
    install = (
        "id > /github/workspace/id-install.txt"
        " && pip install --no-input --quiet -e /github/workspace/pkg"
        f" && {probe} --plant '/opt/mcp-replay/lib/python*/site-packages/mcp_replay_action'"
        " && { if touch /opt/mcp-replay/planted 2>/dev/null; then echo wrote; else echo refused; fi; }"
        " > /github/workspace/touch.txt"
    )
    run = run_action(
        image, workspace, tmp_path / "run", github,
        {"install": install, "server": f"{probe} --serve", "working-directory": "src", "github-token": token},
    )  # fmt: skip
    assert run.returncode == 0, explain(run)
    assert len(comments(github)) == 1, "the token still worked for the comment"
    ids = (workspace / "id-install.txt").read_text(encoding="utf-8")
    assert ids.startswith(f"uid={RUNNER_UID}(") or ids.startswith(f"uid={RUNNER_UID} "), ids
    assert "(root)" not in ids and "gid=0" not in ids, ids
    assert (workspace / "touch.txt").read_text(encoding="utf-8").strip() == "refused"
    records = [json.loads(line) for line in (workspace / "seen.jsonl").read_text(encoding="utf-8").splitlines()
               if not line.startswith("PLANTED")]  # fmt: skip
    assert {r["role"] for r in records} == {"install", "server"}, records
    [install_record] = [r for r in records if r["role"] == "install"]
    plants = install_record["plant"].values()
    assert plants and all(c["planted"] == 0 and c["refused"] > 0 for c in plants), install_record["plant"]
    for record in records:
        assert (record["uid"], record["gid"]) == (RUNNER_UID, CHILD_GID) and 0 not in record["groups"], record
        [holder] = [p for p in record["processes"] if p["pid"] == 1]
        assert "mcp_replay_action.github" in holder["cmdline"] and holder["uid"] == 0
        assert holder["environ"].startswith("unreadable") and holder["mem"].startswith("unreadable"), holder
        for process in record["processes"]:
            assert process["found"] == [], process
    assert "PLANTED" not in (workspace / "seen.jsonl").read_text(encoding="utf-8")
    report = workspace / run.outputs["report"]
    assert (report.stat().st_uid, report.stat().st_gid) == (RUNNER_UID, RUNNER_GID)


def test_the_code_under_test_reaches_none_of_the_runners_files(image: str, github: Any, tmp_path: Path) -> None:
    """Issue 28 items 2 and 10, the image: the runner's files laid out and owned as on GitHub (the
    step's file-command files, the event and the job's home are the runner's user's, group docker),
    and the Docker socket mounted (root, group docker, 0660). ``install`` and the server
    (``tests/fakes/runner_files_probe.py``) list /github/file_commands, /github/workflow and
    /github/home, append ``BASH_ENV=``/``LD_PRELOAD=`` to the env file, a directory to the path
    file, an output, an ``<img>`` to the summary, rewrite the event, plant a ``.gitconfig`` and a
    ``.pth`` in the home, connect to the socket, and leave a daemon that keeps trying after the
    run. Nothing lands, the runner gets its files back as it made them, and the run leaves no
    scratch HOME behind."""
    import socket

    workspace = tmp_path / "workspace"
    record_calc_cassette(workspace / "cassettes" / "calc.jsonl")
    copy_package_sources(workspace)
    shutil.copyfile(ROOT / "tests" / "fakes" / "runner_files_probe.py", workspace / "probe.py")
    rundir = tmp_path / "run"
    (rundir / "home").mkdir(parents=True)
    (rundir / "home" / ".npmrc").write_text("fund=false\n", encoding="utf-8")  # an earlier step's
    scratch = tmp_path / "tmp"  # the container's /tmp, so what the run leaves there is seen
    scratch.mkdir()
    os.chmod(scratch, 0o1777)
    sock_dir = tmp_path / "docker"
    sock_dir.mkdir()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(sock_dir / "docker.sock"))
    listener.listen(8)
    os.chown(sock_dir / "docker.sock", 0, RUNNER_GID)
    os.chmod(sock_dir / "docker.sock", 0o660)
    seen = "/github/workspace/seen.jsonl"
    probe = f"python /github/workspace/probe.py {seen} --dir /github/file_commands --dir /github/workflow" \
            " --dir /github/home --socket /var/run/docker.sock"  # fmt: skip
    try:
        run = run_action(
            image, workspace, rundir, github,
            {"install": f"{probe} --linger 15", "server": f"{probe} --serve", "working-directory": "src"},
            options=("-v", f"{sock_dir / 'docker.sock'}:/var/run/docker.sock", "-v", f"{scratch}:/tmp"),
        )  # fmt: skip
    finally:
        listener.close()
    assert run.returncode == 0, explain(run)
    assert len(comments(github)) == 1, "the token still worked for the comment"
    lines = (workspace / "seen.jsonl").read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if line.startswith("LINGER")], lines
    records = [json.loads(line) for line in lines]
    assert {r["role"] for r in records} == {"install", "server"}, records
    for record in records:
        assert (record["uid"], record["gid"]) == (RUNNER_UID, CHILD_GID) and RUNNER_GID not in record["groups"], record
        assert record["home"] != "/github/home", record
        assert record["sockets"]["/var/run/docker.sock"].startswith("connect:"), record["sockets"]
        for directory, tries in record["dirs"].items():
            landed = [what for what, result in tries.items() if result == "done"]
            assert landed == [], f"{record['role']} reached {directory}: {landed}"
    commands = rundir / "file_commands"
    for name in ("set_env_step", "add_path_step", "save_state_step"):
        assert (commands / name).read_text(encoding="utf-8") == "", name
    assert run.outputs["grade"] == "A" and "PWNED" not in (commands / "set_output_step").read_text(encoding="utf-8")
    assert "calc.jsonl" in run.summary and "<img" not in run.summary and "PWNED" not in run.summary
    assert json.loads((rundir / "workflow" / "event.json").read_text(encoding="utf-8")) == pull_request_event()
    assert sorted(p.name for p in (rundir / "home").iterdir()) == [".npmrc"]
    for path in (commands, rundir / "workflow", rundir / "home", *commands.iterdir()):
        info = path.stat()
        assert (info.st_uid, info.st_gid) == (RUNNER_UID, RUNNER_GID), path
        assert stat.S_IMODE(info.st_mode) == (0o755 if path.is_dir() else 0o644), path
    assert list(scratch.iterdir()) == [], "the run left scratch behind in /tmp"


def test_baseline_merge_base_with_the_images_git(image: str, github: Any, tmp_path: Path) -> None:
    """Issue 30, the image: no cassette, ``baseline: merge-base`` on a real git repository with two
    commits (tests/baseline_repo.py: a server with a read-only tool, and the head where it answers
    one more), owned by the runner's user as on GitHub. The image's git checks the base out beside
    the workspace as that user (git's ownership check passes as it is; the ``post-checkout`` hook
    the head's ``install`` planted runs as uid 1001, never as the token holder), the base is
    explored and the head fails the gate with the breaking finding in the one comment; SARIF
    points the finding at the workflow's ``baseline:`` line; the worktree is gone afterwards."""
    from baseline_repo import BASELINE_LINE, REGRESSED, WORKFLOW, WORKFLOW_REF, repository

    ws, base, head = repository(tmp_path / "repo", REGRESSED)
    event = pull_request_event()
    event["pull_request"]["head"]["sha"] = head
    event["pull_request"]["base"]["sha"] = base
    hook = "#!/bin/sh\nid -u >> /github/workspace/hook-ran-as\n"
    plant = f"if [ -d .git ]; then printf '{hook}' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout; fi"
    run = run_action(
        image, ws, tmp_path / "run", github,
        {"server": "python server.py", "baseline": "merge-base", "install": plant, "sarif-file": "mcp-replay.sarif"},
        options=("-e", f"GITHUB_WORKFLOW_REF={WORKFLOW_REF}"), event=event,
    )  # fmt: skip
    assert run.returncode == 1, explain(run)
    assert f"Comparing with the base build at {base[:12]} (merge-base)" in run.stdout, explain(run)
    assert run.outputs["gate"] == "failed", run.outputs
    (comment,) = comments(github)
    body = comment["body"]
    assert f"**Explored the base build** (`{base[:12]}`): 1 tool(s) called: `add`" in body, body
    block = body.split("```json\n", 1)[1].split("\n```", 1)[0]
    breaking = [(f["interaction"], f["path"]) for f in json.loads(block) if f["class"] == "breaking"]
    assert breaking == [("tools/call add", "$.result.content[0].text")], body
    assert (ws / "hook-ran-as").read_text(encoding="utf-8").split() == [str(RUNNER_UID)]
    assert not list((ws / ".git" / "worktrees").glob("*")), "the base's worktree is still registered"
    sarif = json.loads((ws / "mcp-replay.sarif").read_text(encoding="utf-8"))
    (result,) = [r for r in sarif["runs"][0]["results"] if r["level"] == "error"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": WORKFLOW}, "region": {"startLine": BASELINE_LINE}}


def test_dogfood_workflow_through_act(image: str, tmp_path: Path) -> None:
    """The repository's own dogfood workflow, run by act on podman's Docker socket, comments on
    the fake GitHub API (act lets --env override GITHUB_API_URL)."""
    if not sorted((ROOT / "cassettes").glob("**/*.jsonl")):
        pytest.skip("no sample cassettes committed under cassettes/ yet")
    report = ROOT / "mcp-replay-report.json"
    report_was_there = report.exists()
    with fakegithub.FakeGitHub() as github:
        github.add_token(TOKEN)
        result = subprocess.run(
            [
                "bash", str(SCRIPTS / "act.sh"), "-s", f"GITHUB_TOKEN={TOKEN}", "--env", f"GITHUB_API_URL={github.url}",
                # act names the repository after the checkout's origin remote, which in a CI clone is
                # a local path; the runner always gives owner/name.
                "--env", "GITHUB_REPOSITORY=octo/mcp-replay-action",
            ],
            cwd=ROOT, env={**os.environ, "MCP_REPLAY_IMAGE": image, "ACT_LOG_DIR": str(tmp_path)},
            capture_output=True, text=True, timeout=1500, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        posted = [comment for thread in github.comments.values() for comment in thread]
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-8000:]
    assert "Job succeeded" in log, log[-8000:]
    assert re.search(r"grade=A score=\S+ passed=[1-9]\d* failed=0 missing=0", log), log[-8000:]
    assert len(posted) == 1, posted
    assert "<!-- mcp-replay:dogfood -->" in posted[0]["body"] and "grade **A**" in posted[0]["body"]
    assert report.exists() == report_was_there, "act.sh left the run's report in the checkout"


def test_image_fits_the_size_budget_with_dockers_layering(image: str) -> None:
    """Built with one layer per instruction (buildah --layers, as docker build does): no dead layer,
    no wheel or pip cache left behind, within 330 MB unpacked and 130 MB compressed."""
    result = sh(["bash", str(SCRIPTS / "image-size.sh")], timeout=900, env={**os.environ, "MCP_REPLAY_IMAGE": image})
    sizes = dict(re.findall(r"(\w+)=(\S+)", result.stdout))
    added_unpacked, added_compressed = int(sizes["added_unpacked"]), int(sizes["added_compressed"])
    if sizes["base"].startswith("localhost/stand-in/"):
        unpacked, compressed = added_unpacked + REAL_BASE_UNPACKED, added_compressed + REAL_BASE_COMPRESSED
    else:
        unpacked, compressed = int(sizes["image_unpacked"]), int(sizes["image_compressed"])
    assert unpacked <= BUDGET_UNPACKED, result.stdout
    assert compressed <= BUDGET_COMPRESSED, result.stdout
    # The final stage adds exactly one layer with content: the copied environment (git included).
    added = [layer for layer in sizes["added_layers"].split(",") if layer and int(layer.split("/")[0]) > 10_240]
    assert len(added) == 1, result.stdout
    tools = subprocess.run(
        [engine(), "run", "--rm", "--network", "none", "--entrypoint", "sh", image, "-c",
         "node --version && npm --version && npx --version && uv --version && uvx --version"
         " && test \"$(command -v git)\" = /opt/mcp-replay/tools/git && git --version"
         " && python -c 'import sys; assert \"/opt/mcp-replay\" not in sys.prefix'"],
        env=ENGINE_ENV, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert tools.returncode == 0, tools.stdout + tools.stderr
