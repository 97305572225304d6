"""The one switch of the tests that build the image, push it or run workflows through act: opt-in
with MCP_REPLAY_CONTAINER_TESTS=1 (root, apt, minutes), marked ``container``."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., object])

CONTAINER_TESTS = [
    pytest.mark.container,
    pytest.mark.skipif(
        os.environ.get("MCP_REPLAY_CONTAINER_TESTS") != "1",
        reason="container test is opt-in: MCP_REPLAY_CONTAINER_TESTS=1 (needs root, apt, minutes)",
    ),
]


def container_test(timeout: float) -> Callable[[F], F]:
    """The opt-in marks and a timeout, for one test of a module that has others."""

    def mark(function: F) -> F:
        for decorator in (*CONTAINER_TESTS, pytest.mark.timeout(timeout)):
            function = decorator(function)
        return function

    return mark
