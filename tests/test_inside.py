"""Issue 28 item 4: no link the code under test could have planted in the workspace is followed
by the token holder (``host/inside.py``). In process: the confined open and write refuse a link
in any directory and at the file, whenever it was made. End to end, as the image runs (root, the
code under test dropped to the workspace's owner): ``install`` turns the report's directory into
a link to a root-only directory, and the first cassette's server swaps the second cassette for a
link to a root-only file after the plan found it; neither is followed, each run ends in one line
naming the link, and nothing of the root-only file reaches the log."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from github_action_run import SYSTEM_PYTHON, copy_package_sources, run_as_the_image
from mcp_replay_action.cassette import load
from mcp_replay_action.demo import record_demo_session
from mcp_replay_action.errors import EXIT_USAGE, CassetteError, ConfigError
from mcp_replay_action.host import files, inside

OWNER = 4361
SECRET = "TOPSECRET-ROOT-ONLY"

pytestmark = pytest.mark.integration
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0 or SYSTEM_PYTHON is None,
    reason="the planted links matter to root: needs root, and a python3 another user can run",
)


@pytest.fixture()
def confined(tmp_path: Path) -> Iterator[Path]:
    ws = tmp_path / "workspace"
    ws.mkdir()
    inside.confine(ws)
    yield ws
    inside.confine(None)


def test_a_link_anywhere_under_the_workspace_is_refused_when_opened(confined: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "c.jsonl").write_text("not yours\n", encoding="utf-8")
    (confined / "real").mkdir()
    (confined / "real" / "c.jsonl").write_text("yours\n", encoding="utf-8")
    assert inside.read_bytes(confined / "real" / "c.jsonl") == b"yours\n"
    (confined / "dir-link").symlink_to(elsewhere)
    (confined / "real" / "file-link.jsonl").symlink_to(elsewhere / "c.jsonl")
    for path in (confined / "dir-link" / "c.jsonl", confined / "real" / "file-link.jsonl"):
        with pytest.raises(inside.LinkRefused):
            inside.read_bytes(path)
    with pytest.raises(CassetteError, match=r"file-link\.jsonl: cannot read it \(a symbolic link in the workspace"):
        load(confined / "real" / "file-link.jsonl")
    # Outside the workspace, paths are the runner's: opened as given.
    assert inside.read_bytes(elsewhere / "c.jsonl") == b"not yours\n"


def test_a_write_through_a_planted_directory_link_is_refused(confined: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (confined / "reports").symlink_to(elsewhere)
    with pytest.raises(ConfigError, match=r"reports/out\.json: not written: .*reports is a symbolic link"):
        files.atomic_write_text(confined / "reports" / "out.json", "{}")
    assert list(elsewhere.iterdir()) == []
    # A missing directory is made, and the file lands there, whole.
    files.atomic_write_text(confined / "new" / "deeper" / "out.json", "{}")
    assert (confined / "new" / "deeper" / "out.json").read_text(encoding="utf-8") == "{}"
    assert [p.name for p in (confined / "new" / "deeper").iterdir()] == ["out.json"]


def workspace_of_owner(where: Path, cassettes: dict[str, str]) -> Path:
    ws = where / "workspace"
    (ws / "cassettes").mkdir(parents=True)
    for name, text in cassettes.items():
        (ws / "cassettes" / name).write_text(text, encoding="utf-8")
    copy_package_sources(ws)
    for path in [ws, *ws.rglob("*")]:
        os.chown(path, OWNER, OWNER)
    return ws


def calc_cassette_text(where: Path) -> str:
    record_demo_session(where / "calc.jsonl")
    return (where / "calc.jsonl").read_text(encoding="utf-8")


def run_as_the_image_logged(ws: Path, inputs: dict[str, str]) -> tuple[int, str]:
    run, _ = run_as_the_image(ws, {"working-directory": "src", **inputs})
    return run.returncode, run.stdout + run.stderr


@needs_root
def test_report_files_are_not_written_through_a_link_install_planted(reachable_tmp: Path) -> None:
    (reachable_tmp / "root-only").mkdir(mode=0o700)
    ws = workspace_of_owner(reachable_tmp, {"calc.jsonl": calc_cassette_text(reachable_tmp)})
    code, log = run_as_the_image_logged(
        ws,
        {
            "install": f"ln -s {reachable_tmp / 'root-only'} {ws / 'reports'}",
            "server": f"{SYSTEM_PYTHON} -m mcp_replay_action.samples.calc_server",
            "report-file": "reports/mcp-replay-report.json",
            "markdown-file": "reports/report.md",
        },
    )
    assert (ws / "reports").is_symlink(), "the install step did not plant its link"
    assert list((reachable_tmp / "root-only").iterdir()) == [], "root wrote through the planted link"
    assert code == EXIT_USAGE, log
    assert "reports is a symbolic link in the workspace" in log, log
    assert "internal error" not in log and "Traceback" not in log, log


SWAP = """
import os, sys
link = "../cassettes/b.jsonl"
if not os.path.islink(link):  # the first server's start: b.jsonl was found by the plan already
    os.symlink({secret!r}, link + ".new")
    os.replace(link + ".new", link)
os.execv(sys.executable, [sys.executable, "-m", "mcp_replay_action.samples.calc_server"])
"""


@needs_root
def test_a_cassette_swapped_for_a_link_after_the_plan_is_not_read(reachable_tmp: Path) -> None:
    (reachable_tmp / "root-only").mkdir(mode=0o700)
    calc = calc_cassette_text(reachable_tmp)
    secret = reachable_tmp / "root-only" / "shadow.jsonl"  # a cassette only root may read
    secret.write_text(calc.replace('"name":"mcp-replay-sample-calc"', f'"name":"{SECRET}"'), encoding="utf-8")
    ws = workspace_of_owner(reachable_tmp, {"a.jsonl": calc, "b.jsonl": calc})
    (ws / "src" / "swap.py").write_text(SWAP.format(secret=str(secret)), encoding="utf-8")
    code, log = run_as_the_image_logged(ws, {"server": f"{SYSTEM_PYTHON} swap.py"})
    assert (ws / "cassettes" / "b.jsonl").is_symlink(), "the server did not swap the cassette"
    assert SECRET not in log, "root read the swapped-in file into the log"
    assert code == EXIT_USAGE, log
    assert "cassettes/b.jsonl: cannot read it (a symbolic link in the workspace" in log, log
    assert "internal error" not in log and "Traceback" not in log, log
