"""Issue 20 item 2 on this machine, without a container: the entrypoint as root with
``MCP_REPLAY_RUN_AS=workspace-owner`` (what the image sets) runs ``install`` and the server as the
workspace's owner. Both are ``tests/fakes/proc_snoop.py``, which says who it runs as (``os.getuid``
in the real child), tries to plant code into the action's package and reads every ``/proc/*`` for
the token."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from github_action_run import SYSTEM_PYTHON, probe_workspace, run_as_the_image
from mcp_replay_action.errors import EXIT_OK
from mcp_replay_action.host.privilege import FALLBACK_ID

ROOT = Path(__file__).resolve().parent.parent
OWNER = 4321

pytestmark = [pytest.mark.integration, pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or SYSTEM_PYTHON is None,
    reason="dropping privileges needs root, and a python3 another user can run",
)]


def test_install_and_the_server_run_as_the_workspace_owner_and_cannot_reach_the_token(reachable_tmp: Path) -> None:
    # The server's source in the workspace, run by a Python the owner can execute.
    ws, seen = probe_workspace(reachable_tmp, "proc_snoop.py")
    for path in [ws, *ws.rglob("*")]:
        os.chown(path, OWNER, OWNER)
    token = "ghs_" + "H0stPrivT0ken" * 3
    probe = f"{SYSTEM_PYTHON} {ws / 'probe.py'} {seen} {token[::-1]}"
    package = ROOT / "src" / "mcp_replay_action"  # the action's own code, which the holder runs
    run, posted = run_as_the_image(
        ws,
        {
            "install": f"{probe} --plant '{package}'",
            "server": f"{probe} --serve",
            "working-directory": "src",
        },
        token=token,
    )
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert posted, "the token still worked for the comment"
    lines = seen.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if line.startswith("PLANTED")]
    records = [json.loads(line) for line in lines]
    assert {r["role"] for r in records} == {"install", "server"}
    [install] = [r for r in records if r["role"] == "install"]
    assert all(c["planted"] == 0 and c["refused"] > 0 for c in install["plant"].values()), install["plant"]
    for record in records:
        # The owner's uid, never its group (on GitHub, docker: the Docker socket's group).
        assert (record["uid"], record["gid"]) == (OWNER, FALLBACK_ID) and 0 not in record["groups"], record
        holder = next(p for p in record["processes"] if p["pid"] == record["ancestors"][0])
        assert "mcp_replay_action.github" in holder["cmdline"] and holder["uid"] == 0
        assert holder["environ"].startswith("unreadable") and holder["mem"].startswith("unreadable"), holder
        for process in record["processes"]:
            assert process["found"] == [], process
    report = ws / "mcp-replay-report.json"
    assert (report.stat().st_uid, report.stat().st_gid) == (OWNER, OWNER)
    assert stat.S_IMODE(report.stat().st_mode) == 0o644


def test_a_root_owned_workspace_gives_a_fixed_unprivileged_user(reachable_tmp: Path) -> None:
    from mcp_replay_action.host import privilege

    assert reachable_tmp.stat().st_uid == 0
    assert privilege.owner_of_workspace(reachable_tmp) == privilege.Credentials(
        privilege.FALLBACK_ID, privilege.FALLBACK_ID
    )
    os.chown(reachable_tmp, OWNER, 0)  # a root group is never kept either
    assert privilege.owner_of_workspace(reachable_tmp) == privilege.Credentials(OWNER, privilege.FALLBACK_ID)
    with pytest.raises(ValueError):
        privilege.run_children_as(privilege.Credentials(0, OWNER))
