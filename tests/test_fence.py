"""Issue 28 items 2 and 10 on this machine, without a container: the entrypoint as root with
``MCP_REPLAY_RUN_AS=workspace-owner`` (what the image sets), the runner's files laid out and owned
as on GitHub (the file commands, the event and the job's home are the workspace owner's, whose
group is ``docker``, the group of the Docker socket the runner mounts). ``install`` and the server
are ``tests/fakes/runner_files_probe.py``: they list those directories and append ``BASH_ENV=`` and
``LD_PRELOAD=`` to the env file, a directory to the path file, an output, an ``<img>`` to the
summary, rewrite the event, plant a ``.gitconfig`` and a ``.pth`` in the home, connect to the
socket, and leave a daemon behind that keeps trying after the run. None of it lands; the runner
gets its files back as it made them; no process and no scratch HOME of the run is left."""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path

import pytest

from github_action_run import SYSTEM_PYTHON, probe_workspace, run_as_the_image
from github_events import pull_request
from mcp_replay_action.errors import EXIT_OK
from mcp_replay_action.host import privilege
from mcp_replay_action.host.fence import Fence, FenceError
from runner_parse import read_outputs

OWNER = 4351  # the runner's user, who owns the workspace and the runner's files
DOCKER = 4352  # the runner's primary group on GitHub (docker), and the Docker socket's group
STEP = "0f6b2c9e"  # the runner names each step's files with a fresh id

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0 or SYSTEM_PYTHON is None,
        reason="fencing and dropping privileges need root, and a python3 another user can run",
    ),
]


def processes_of(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                status = Path(f"/proc/{entry}/status").read_text(encoding="utf-8")
            except OSError:
                continue
            uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
            state = next(line for line in status.splitlines() if line.startswith("State:")).split()[1]
            if str(uid) in uids and state != "Z":
                found.append(int(entry))
    return found


def test_the_code_under_test_reaches_none_of_the_runners_files(reachable_tmp: Path) -> None:
    ws, seen = probe_workspace(reachable_tmp, "runner_files_probe.py")
    # As the runner lays them out: _runner_file_commands, _github_workflow, _github_home.
    commands, workflow, home, tmp = (reachable_tmp / name for name in ("file_commands", "workflow", "home", "tmp"))
    for directory in (commands, workflow, home):
        directory.mkdir(mode=0o755)
    tmp.mkdir()
    os.chmod(tmp, 0o1777)  # TMPDIR for the run, like /tmp: what it leaves there is seen
    names = {
        "GITHUB_ENV": commands / f"set_env_{STEP}",
        "GITHUB_PATH": commands / f"add_path_{STEP}",
        "GITHUB_OUTPUT": commands / f"set_output_{STEP}",
        "GITHUB_STEP_SUMMARY": commands / f"step_summary_{STEP}",
        "GITHUB_STATE": commands / f"save_state_{STEP}",
    }
    for path in names.values():
        path.write_text("", encoding="utf-8")
    event = workflow / "event.json"
    event.write_text(json.dumps(pull_request(7, "c" * 40)), encoding="utf-8")
    (home / ".npmrc").write_text("fund=false\n", encoding="utf-8")  # an earlier step's
    for path in [ws, *ws.rglob("*"), commands, *commands.iterdir(), workflow, event, home, *home.iterdir()]:
        os.chown(path, OWNER, DOCKER)
    ours = ("GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY")  # the action writes these: checked below
    before = {path: path.read_bytes() for name, path in names.items() if name not in ours}
    before.update({path: path.read_bytes() for path in (event, home / ".npmrc")})
    modes = {path: (path.stat().st_uid, path.stat().st_gid, stat.S_IMODE(path.stat().st_mode))
             for path in [commands, workflow, home, *names.values(), event]}  # fmt: skip
    docker_sock = reachable_tmp / "docker.sock"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(docker_sock))
    listener.listen(8)
    os.chown(docker_sock, 0, DOCKER)
    os.chmod(docker_sock, 0o660)

    token = "ghs_" + "F3nceT0ken" * 3
    targets = f"--dir {commands} --dir {workflow} --dir {home} --socket {docker_sock}"
    probe = f"{SYSTEM_PYTHON} {ws / 'probe.py'} {seen} {targets}"
    try:
        run, posted = run_as_the_image(
            ws,
            {"install": f"{probe} --linger 15", "server": f"{probe} --serve", "working-directory": "src"},
            token=token,
            event=False,
            extra_env={
                **{name: str(path) for name, path in names.items()},
                "GITHUB_EVENT_PATH": str(event),
                "HOME": str(home),
                "TMPDIR": str(tmp),
            },
        )
        left = processes_of(OWNER)
        time.sleep(0.3)  # a daemon that survived would write again by now
    finally:
        listener.close()
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert posted, "the token still worked for the comment"
    assert left == [], f"processes of the code under test outlived the run: {left}"

    lines = seen.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if line.startswith("LINGER")], lines
    records = [json.loads(line) for line in lines]
    assert {r["role"] for r in records} == {"install", "server"}
    for record in records:
        assert record["uid"] == OWNER and record["gid"] != DOCKER and DOCKER not in record["groups"], record
        assert record["home"] != str(home), "the children got the job's home"
        assert record["sockets"][str(docker_sock)].startswith("connect:"), record["sockets"]
        for directory, tries in record["dirs"].items():
            landed = [what for what, result in tries.items() if result == "done"]
            assert landed == [], f"{record['role']} reached {directory}: {landed}"

    # The runner reads its files as it made them: nothing appended, nothing replaced.
    for path, content in before.items():
        assert path.read_bytes() == content, path
    assert sorted(p.name for p in home.iterdir()) == [".npmrc"]
    outputs = read_outputs(names["GITHUB_OUTPUT"])
    assert outputs["grade"] == "A" and outputs["gate"] == "passed", outputs
    assert "PWNED" not in names["GITHUB_OUTPUT"].read_text(encoding="utf-8")
    summary = names["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8")
    assert "calc.jsonl" in summary and "<img" not in summary and "PWNED" not in summary
    for path, owner_mode in modes.items():
        info = path.stat()
        assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == owner_mode, path
    # Item 10: the private HOME the run made for the children is gone with it.
    assert list(tmp.iterdir()) == []


def test_a_fence_refuses_a_directory_that_holds_the_workspace(reachable_tmp: Path) -> None:
    """A file-command file the children could write, in a directory they need (it holds the
    workspace): no fence could hold, so the run is refused rather than left open."""
    ws = reachable_tmp / "workspace"
    ws.mkdir()
    os.chown(reachable_tmp, OWNER, OWNER)
    creds = privilege.Credentials(OWNER, privilege.FALLBACK_ID)
    with pytest.raises(FenceError, match="holds the workspace"):
        Fence.around([str(reachable_tmp / "set_env_1")], creds=creds, keep_open=[str(ws)])


def test_a_fence_refuses_a_directory_the_children_could_move_away(reachable_tmp: Path) -> None:
    outer = reachable_tmp / "outer"
    (outer / "file_commands").mkdir(parents=True)
    os.chown(outer, OWNER, OWNER)  # theirs: they could rename file_commands and put their own
    os.chown(outer / "file_commands", OWNER, OWNER)
    creds = privilege.Credentials(OWNER, privilege.FALLBACK_ID)
    with pytest.raises(FenceError, match="could replace"):
        Fence.around([str(outer / "file_commands" / "set_env_1")], creds=creds, keep_open=[])


def test_a_fence_reads_a_symlinked_directory_by_what_it_leads_to(reachable_tmp: Path) -> None:
    """act's layout: ``GITHUB_ENV`` is ``/var/run/act/workflow/envs.txt``, a file everyone may
    write in root's directories, reached through the symlink ``/var/run -> /run`` (whose own mode
    is 0777, as every symlink's). The file is fenced; a symlink in a directory the children may
    write, or one that leads to a directory of theirs, is still refused."""
    (reachable_tmp / "run" / "act" / "workflow").mkdir(parents=True)
    (reachable_tmp / "var").mkdir()
    (reachable_tmp / "var" / "run").symlink_to("../run")
    env = reachable_tmp / "var" / "run" / "act" / "workflow" / "envs.txt"
    env.write_text("", encoding="utf-8")
    os.chmod(env, 0o666)
    creds = privilege.Credentials(OWNER, privilege.FALLBACK_ID)
    fence = Fence.around([str(env)], creds=creds, keep_open=[])
    assert fence.paths == (str(env),)
    assert (env.stat().st_uid, stat.S_IMODE(env.stat().st_mode)) == (0, 0o600)
    fence.lift()
    assert stat.S_IMODE(env.stat().st_mode) == 0o666
    for theirs in (reachable_tmp / "var", reachable_tmp / "run"):
        os.chown(theirs, OWNER, OWNER)  # they could replace the symlink, or what it leads to
        with pytest.raises(FenceError, match="could replace"):
            Fence.around([str(env)], creds=creds, keep_open=[])
        os.chown(theirs, 0, 0)


def test_a_fence_closes_and_gives_back_and_leaves_alone_what_is_out_of_reach(reachable_tmp: Path) -> None:
    """A directory of theirs is closed (root's, 0700) and given back as it was; a file of
    root's in a directory of root's is out of their reach already and left alone; a directory of
    theirs in a sticky /tmp-like directory is fenced too (only its owner could move it)."""
    theirs = reachable_tmp / "theirs"
    theirs.mkdir(mode=0o755)
    (theirs / "set_env_1").write_text("", encoding="utf-8")
    os.chown(theirs, OWNER, DOCKER)
    roots = reachable_tmp / "event.json"
    roots.write_text("{}", encoding="utf-8")
    sticky = reachable_tmp / "sticky"
    sticky.mkdir()
    os.chmod(sticky, 0o1777)
    (sticky / "home").mkdir(mode=0o750)
    os.chown(sticky / "home", OWNER, OWNER)
    creds = privilege.Credentials(OWNER, privilege.FALLBACK_ID)
    fence = Fence.around([str(theirs / "set_env_1"), str(roots), str(sticky / "home" / "x")], creds=creds, keep_open=[])
    assert sorted(fence.paths) == sorted([str(theirs), str(sticky / "home")])
    for path in (theirs, sticky / "home"):
        assert (path.stat().st_uid, stat.S_IMODE(path.stat().st_mode)) == (0, 0o700)
    fence.lift()
    assert (theirs.stat().st_uid, theirs.stat().st_gid, stat.S_IMODE(theirs.stat().st_mode)) == (OWNER, DOCKER, 0o755)
    assert (sticky / "home").stat().st_uid == OWNER and stat.S_IMODE((sticky / "home").stat().st_mode) == 0o750
    assert roots.stat().st_uid == 0 and stat.S_IMODE(roots.stat().st_mode) == 0o644


def test_lifting_a_fence_that_did_not_hold_says_so(reachable_tmp: Path) -> None:
    theirs = reachable_tmp / "theirs"
    theirs.mkdir()
    os.chown(theirs, OWNER, OWNER)
    fence = Fence.around([str(theirs / "set_env_1")], creds=privilege.Credentials(OWNER, OWNER), keep_open=[])
    os.chmod(theirs, 0o777)  # only root could do this; the lift must notice
    with pytest.raises(FenceError, match="changed while the code under test ran"):
        fence.lift()
    assert theirs.stat().st_uid == OWNER
