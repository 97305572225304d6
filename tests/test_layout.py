"""The package's layout and the test suite's: no module of ours shares a name with a
standard-library module, so a script run from inside a folder, a tool that puts a folder on
``sys.path``, or a reader never takes ours for the standard library's (``report/json.py`` was
one, ``inspect.py`` another); every test module says its tier, and the unit tier holds."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import tiers

pytestmark = pytest.mark.unit

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


TESTS = Path(__file__).resolve().parent


def test_every_test_module_declares_exactly_one_tier() -> None:
    """``pytestmark = pytest.mark.<tier>`` in every module (tests/tiers.py): a module without one
    still runs, in the default tier, but the quick loop never sees it. A test of another tier
    than its module's may only be a container one: ``-m`` selects by every mark a test carries, so
    a ``unit`` mark on a test of an ``integration`` module would put the module's tier beside it."""
    problems = []
    modules = sorted(TESTS.glob("test_*.py"))
    assert len(modules) > 100  # the walk found the suite
    for path in modules:
        module = importlib.import_module(path.stem)  # already imported where the suite was collected
        found = tiers.declared(getattr(module, "pytestmark", []))
        if len(found) != 1:
            problems.append(
                f"{path.name}: {found or 'no tier'}; add `pytestmark = pytest.mark.<{'|'.join(tiers.TIERS)}>`"
            )
            continue
        for name, test in vars(module).items():
            own = set(tiers.declared(getattr(test, "pytestmark", []))) if name.startswith(("test_", "Test")) else set()
            if own - {"container"} or ("container" in own and found == ["unit"]):
                problems.append(f"{path.name}::{name}: {sorted(own)} in a {found[0]} module")
    assert problems == []


def test_a_unit_test_that_starts_a_process_fails() -> None:
    """The unit tier's promise is checked, not trusted: starting a process raises where it
    happens, and is remembered so that code which swallows the error still fails the test."""
    with pytest.raises(tiers.TierError, match=r"test_layout\.py::.* unit tier .* starts a process"):
        subprocess.run(["true"], check=False)
    assert tiers.GUARD.broken, "remembered for the report"
    tiers.GUARD.broken.clear()  # this test swallowed it on purpose
