"""Load, before ``install`` runs, every module the token holder will ever run, then refuse the rest.

``install`` and the server are code from the pull request. In the composite action they run as
the runner's own user, who owns the action's virtual environment: a module the entrypoint first
imported after ``install`` would be read from files that code could have rewritten, and would run
inside the process holding the token. So the entrypoint, before ``install``:

1. imports every module of this package (the sample servers, run only as children, and the pytest
   plugin aside), every module its code names anywhere (inside functions too), and every module
   of the distributions the package depends on, transitively (``importlib.metadata``), which
   covers what those import by name at run time (anyio's backends);
2. then ``seal``: a finder first on ``sys.meta_path`` refuses (ImportError) every later import
   found in the directories those came from. An optional import (``try: import orjson``) falls
   back as it would without the module; a missing preload is a loud error, never planted code.

Modules of the standard library are imported when this package's code names them; what the
standard library itself loads lazily later is read from the Python installation, which a
composite job's own ``actions/setup-python`` owns (docs/security.md says what that leaves).
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import os
import pkgutil
import re
import sys
from collections.abc import Iterable, Sequence
from types import ModuleType

PACKAGE = "mcp_replay_action"
DISTRIBUTION = "mcp-replay-action"
# Run only as separate processes (servers) or only under pytest: never part of the token holder.
_SKIPPED = (f"{PACKAGE}.samples", f"{PACKAGE}.pytest_plugin")
# Standard-library modules that act when imported (open a browser, print, start a GUI).
_NEVER = frozenset({"antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "__phello__", "pydoc"})
# Lazily loaded by codecs and sockets (a host name is encoded with IDNA before it is resolved).
_STDLIB_EXTRA = ("encodings.idna", "encodings.latin_1", "encodings.ascii", "encodings.utf_8_sig")


def _skip(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return (
        name.startswith(_SKIPPED)
        or last == "__main__"
        or "pytest" in name
        or ".tests" in name
        or ".testing" in name
        or ".benchmarks" in name
    )


def _try_import(name: str) -> ModuleType | None:
    if name.split(".")[0] in _NEVER or _skip(name):
        return None
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - an optional or platform-specific module; it stays unloaded
        return None


def _named_in(module: ModuleType) -> set[str]:
    """Every module ``module``'s source names in an ``import`` anywhere (functions included)."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return set()
    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    package = module.__name__ if hasattr(module, "__path__") else module.__name__.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join([*parts[: len(parts) - node.level + 1], *([base] if base else [])])
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def _requirements(distribution: str) -> list[str]:
    """The distributions ``distribution`` needs, transitively (extras left out)."""
    seen: list[str] = []
    todo = [distribution]
    while todo:
        name = todo.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            continue
        seen.append(key)
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for requirement in requires:
            if "extra" in requirement.partition(";")[2]:
                continue
            found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
            if found:
                todo.append(found.group(1))
    return seen[1:]


def _top_level(distribution: str) -> set[str]:
    """The importable top-level names a distribution installed."""
    try:
        files = importlib.metadata.files(distribution) or []
    except importlib.metadata.PackageNotFoundError:
        return set()
    names = set()
    for file in files:
        parts = file.parts
        if not parts or parts[0] == ".." or parts[0].endswith((".dist-info", ".egg-info", ".data")):
            continue
        head = parts[0]
        if len(parts) == 1:
            if head.endswith(".py"):
                names.add(head[:-3])
            elif head.endswith((".so", ".pyd")):
                names.add(head.split(".", 1)[0])
        elif head.isidentifier() and head != "__pycache__":
            names.add(head)
    return names


def _walk(package: ModuleType) -> Iterable[str]:
    path = getattr(package, "__path__", None)
    if path is None:
        return ()
    return (
        info.name
        for info in pkgutil.walk_packages(path, package.__name__ + ".", onerror=lambda _name: None)
        if not _skip(info.name)
    )


def preload() -> list[ModuleType]:
    """Import everything the entrypoint may run (see the module's docstring); returns the modules
    whose directories ``seal`` then guards."""
    ours = [m for m in (_try_import(PACKAGE),) if m is not None]
    ours += [m for m in (_try_import(name) for name in _walk(ours[0])) if m is not None] if ours else []
    theirs: list[ModuleType] = []
    for distribution in _requirements(DISTRIBUTION):
        for top in sorted(_top_level(distribution)):
            module = _try_import(top)
            if module is not None:
                theirs.append(module)
                theirs += [m for m in (_try_import(name) for name in _walk(module)) if m is not None]
    named: set[str] = set(_STDLIB_EXTRA)
    for module in ours:
        named |= _named_in(module)
    for name in sorted(named):
        if name not in sys.modules:
            _try_import(name)
    return [*ours, *theirs]


class _Sealed(importlib.abc.MetaPathFinder):
    """Refuses a module found in a guarded directory that was not loaded before the seal."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.roots = tuple(os.path.join(os.path.realpath(root), "") for root in roots)

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None:
            return None
        places = [spec.origin or "", *(spec.submodule_search_locations or ())]
        if any(os.path.realpath(place).startswith(self.roots) for place in places if place):
            raise ImportError(
                f"{fullname}: not loaded before install ran, and refused now (code under test could have written it)",
                name=fullname,
            )
        return None


def roots_of(modules: Iterable[ModuleType]) -> list[str]:
    """The directories the top-level packages and modules in ``modules`` were loaded from."""
    roots = set()
    for module in modules:
        top = sys.modules.get(module.__name__.split(".")[0])
        path = getattr(top, "__file__", None)
        if path:
            directory = os.path.dirname(path)
            roots.add(os.path.dirname(directory) if hasattr(top, "__path__") else directory)
    return sorted(roots)


def seal(roots: Sequence[str]) -> None:
    """From now on, refuse every import found under ``roots`` that is not already loaded."""
    sys.meta_path.insert(0, _Sealed(roots))
    importlib.invalidate_caches()
