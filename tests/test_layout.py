"""The package's layout: no module of ours shares a name with a standard-library module, so a
script run from inside a folder, a tool that puts a folder on ``sys.path``, or a reader never
takes ours for the standard library's (``report/json.py`` was one, ``inspect.py`` another)."""

from __future__ import annotations

import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "mcp_replay_action"


def test_no_module_or_folder_is_named_after_a_standard_library_module() -> None:
    names = {
        part: path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        for part in (*path.relative_to(PACKAGE).parent.parts, path.stem)
    }
    assert len(names) > 40  # the walk found the package
    clashes = sorted(f"{where} ({name})" for name, where in names.items() if name in sys.stdlib_module_names)
    assert clashes == []
