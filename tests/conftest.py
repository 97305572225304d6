"""Shared test settings."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from fakegithub import FakeGitHub, running_fake

# In CI the property tests explore the same examples on every run, so a pass or a failure can be
# reproduced; locally they keep searching new ground each time.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    """The stateful fake GitHub API on 127.0.0.1 with the usual tokens (see ``running_fake``)."""
    fake = running_fake()
    try:
        yield fake
    finally:
        fake.stop()
