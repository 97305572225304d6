"""The tiers of the test suite, by what a test needs (python-coverage-comment-action keeps them in
folders; here each module says it in one line, ``pytestmark = pytest.mark.<tier>``, so no file
has to move):

- ``unit``: runs in the pytest process and starts no process (a loopback server on a thread of
  the test's own, like the fake GitHub API, is in process). The inner loop runs these:
  ``bash tests/run.sh quick``.
- ``integration``: real servers, the real CLI and the action's entrypoint in processes of their
  own, the official SDK as their client.
- ``release``: the package built, checked and published the way the release workflow does it.
- ``container``: the action's image built and run, workflows run through act (opt-in,
  ``MCP_REPLAY_CONTAINER_TESTS=1``); one test of a module of another tier may be one
  (``container_opt_in.container_test``).

A module that declares no tier runs in ``DEFAULT_TIER`` (the full suite runs it, the quick loop
does not) and ``tests/test_layout.py`` fails until it declares one. A ``unit`` test that starts
a process fails, naming the tier to declare instead (``SpawnGuard``)."""

from __future__ import annotations

from typing import Any

import pytest

TIERS = ("unit", "integration", "release", "container")
DEFAULT_TIER = "integration"


def declared(marks: Any) -> list[str]:
    """The tiers among ``marks`` (a module's or a function's ``pytestmark``: a mark or a list)."""
    listed = marks if isinstance(marks, list | tuple) else [marks]
    return [mark.name for mark in listed if getattr(mark, "name", None) in TIERS]


def tier_of(item: pytest.Item) -> str:
    """The tier a test runs in: ``container`` when it is one, else its module's, else the default."""
    names = [mark.name for mark in item.iter_markers() if mark.name in TIERS]
    if "container" in names:
        return "container"
    return names[0] if names else DEFAULT_TIER


# Every way the interpreter starts a process raises one of these audit events (PEP 578).
SPAWN_EVENTS = frozenset(
    {"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.exec", "os.system"}
)


class TierError(RuntimeError):
    """A test of the ``unit`` tier started a process."""


class SpawnGuard:
    """Holds the unit tier's promise while one of its tests runs (set-up and tear-down included):
    starting a process raises ``TierError`` where it happens, and is remembered in case the code
    under test swallowed the error, so the test fails either way."""

    def __init__(self) -> None:
        self.test: str | None = None
        self.broken: list[str] = []

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if self.test is not None and event in SPAWN_EVENTS:
            message = (
                f"{self.test} is in the unit tier (in process) but starts a process ({event} {args[:2]!r}): "
                "declare its module `pytestmark = pytest.mark.integration` (tests/tiers.py says which tier is which)"
            )
            self.broken.append(message)
            raise TierError(message)


GUARD = SpawnGuard()  # the one the suite's conftest installs as an audit hook
