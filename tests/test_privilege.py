"""Issue 20 item 2 on this machine, without a container: the entrypoint as root with
``MCP_REPLAY_RUN_AS=workspace-owner`` (what the image sets) runs ``install`` and the server as the
workspace's owner. Both are ``tests/fakes/proc_snoop.py``, which says who it runs as (``os.getuid``
in the real child), tries to plant code into the action's package and reads every ``/proc/*`` for
the token."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakegithub import BOT, FakeGitHub
from github_action_run import FAKES, run_action
from github_events import pull_request
from mcp_replay_action.demo import record_demo_session
from mcp_replay_action.errors import EXIT_OK

ROOT = Path(__file__).resolve().parent.parent
OWNER = 4321
SHA = "d" * 40
SYSTEM_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")

pytestmark = [pytest.mark.integration, pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or SYSTEM_PYTHON is None,
    reason="dropping privileges needs root, and a python3 another user can run",
)]


@pytest.fixture()
def base() -> Iterator[Path]:
    """A directory another user can reach (pytest's own tmp_path is root's, mode 0700)."""
    made = Path(tempfile.mkdtemp(prefix="mcp-replay-privilege-", dir="/tmp"))
    os.chmod(made, 0o755)
    yield made
    shutil.rmtree(made, ignore_errors=True)


def test_install_and_the_server_run_as_the_workspace_owner_and_cannot_reach_the_token(base: Path) -> None:
    ws = base / "workspace"
    (ws / "cassettes").mkdir(parents=True)
    record_demo_session(ws / "cassettes" / "calc.jsonl")
    # The server's source in the workspace, run by a Python the owner can execute.
    shutil.copytree(ROOT / "src" / "mcp_replay_action", ws / "src" / "mcp_replay_action",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    shutil.copyfile(FAKES / "proc_snoop.py", ws / "proc_snoop.py")
    seen = ws / "seen.jsonl"
    seen.write_text("", encoding="utf-8")
    for path in [ws, *ws.rglob("*")]:
        os.chown(path, OWNER, OWNER)
    token = "ghs_" + "H0stPrivT0ken" * 3
    probe = f"{SYSTEM_PYTHON} {ws / 'proc_snoop.py'} {seen} {token[::-1]}"
    package = ROOT / "src" / "mcp_replay_action"  # the action's own code, which the holder runs
    with FakeGitHub() as fake:
        fake.add_token(token, BOT)
        fake.add_pull("octo/demo", 7, head_sha=SHA, head_ref="feature")
        run = run_action(
            ws,
            event_name="pull_request",
            event=pull_request(7, SHA),
            inputs={
                "install": f"{probe} --plant '{package}'",
                "server": f"{probe} --serve",
                "working-directory": "src",
                "github-token": token,
            },
            api_url=fake.url,
            extra_env={"MCP_REPLAY_RUN_AS": "workspace-owner"},
        )
        posted = [c for thread in fake.comments.values() for c in thread]
    assert run.returncode == EXIT_OK, run.stdout + run.stderr
    assert posted, "the token still worked for the comment"
    lines = seen.read_text(encoding="utf-8").splitlines()
    assert not [line for line in lines if line.startswith("PLANTED")]
    records = [json.loads(line) for line in lines]
    assert {r["role"] for r in records} == {"install", "server"}
    [install] = [r for r in records if r["role"] == "install"]
    assert all(c["planted"] == 0 and c["refused"] > 0 for c in install["plant"].values()), install["plant"]
    for record in records:
        assert (record["uid"], record["gid"]) == (OWNER, OWNER) and 0 not in record["groups"], record
        holder = next(p for p in record["processes"] if p["pid"] == record["ancestors"][0])
        assert "mcp_replay_action.github" in holder["cmdline"] and holder["uid"] == 0
        assert holder["environ"].startswith("unreadable") and holder["mem"].startswith("unreadable"), holder
        for process in record["processes"]:
            assert process["found"] == [], process
    report = ws / "mcp-replay-report.json"
    assert (report.stat().st_uid, report.stat().st_gid) == (OWNER, OWNER)
    assert stat.S_IMODE(report.stat().st_mode) == 0o644


def test_a_root_owned_workspace_gives_a_fixed_unprivileged_user(base: Path) -> None:
    from mcp_replay_action.host import privilege

    assert base.stat().st_uid == 0
    assert privilege.owner_of_workspace(base) == privilege.Credentials(privilege.FALLBACK_ID, privilege.FALLBACK_ID)
    os.chown(base, OWNER, 0)  # a root group is never kept either
    assert privilege.owner_of_workspace(base) == privilege.Credentials(OWNER, privilege.FALLBACK_ID)
    with pytest.raises(ValueError):
        privilege.run_children_as(privilege.Credentials(0, OWNER))
