"""The layers of the package ([tool.importlinter] in pyproject.toml), checked by ``lint-imports``
as tests/run.sh runs it: the tree as it is keeps every contract, and a copy of it with one
forbidden import added (a lower layer reaching up, an edge reaching into another, a cycle) breaks
the contract that forbids it, with a non-zero exit that names the import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "mcp_replay_action"
LINT = Path(sys.executable).parent / "lint-imports"


def lint(src: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    if not LINT.exists():
        pytest.skip("lint-imports is not installed: pip install -e '.[test]'")
    env = {**os.environ, "PYTHONPATH": str(src)}
    return subprocess.run(
        [str(LINT), "--no-cache", str(ROOT / "pyproject.toml")],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def copy_with(tmp_path: Path, additions: list[tuple[str, str]]) -> Path:
    """A copy of the package with each ``(module, line)``'s line added at the end of that module."""
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "mcp_replay_action", ignore=shutil.ignore_patterns("__pycache__"))
    for module, line in additions:
        target = src / "mcp_replay_action" / module
        target.write_text(target.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")
    return src


def test_the_tree_keeps_every_contract(tmp_path: Path) -> None:
    run = lint(ROOT / "src", tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3 kept, 0 broken" in run.stdout


@pytest.mark.parametrize(
    ("additions", "broken", "named"),
    [
        # plain data reaching up into the engine
        ([("model/results.py", "from mcp_replay_action.replay import engine")], "the stages", "model.results"),
        # a transport reaching up into the renderers
        ([("transport/stdio.py", "from mcp_replay_action.report import console")], "the stages", "transport.stdio"),
        # one edge into another
        ([("github/summary.py", "from mcp_replay_action import cli")], "an edge never imports", "github.summary"),
        # two modules of one folder importing each other
        (
            [
                ("values/paths.py", "from mcp_replay_action.values import narrow"),
                ("values/narrow.py", "from mcp_replay_action.values import paths"),
            ],
            "no import cycle",
            ".narrow",
        ),
    ],
)
def test_a_forbidden_import_breaks_its_contract(
    tmp_path: Path, additions: list[tuple[str, str]], broken: str, named: str
) -> None:
    run = lint(copy_with(tmp_path, additions), tmp_path)
    assert run.returncode != 0
    report = run.stdout.split("Broken contracts", 1)[-1]
    assert broken in report
    assert named in report
