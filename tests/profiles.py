"""Hypothesis's settings profiles, one per kind of run, chosen by ``HYPOTHESIS_PROFILE``:

- ``dev`` (the default on a contributor's machine): every property test's full count of examples,
  new ground on every run;
- ``ci`` (the default where ``CI`` is set): the same counts, derandomized, so a pass or a failure
  can be reproduced from the log;
- ``quick`` (``bash tests/run.sh quick``): a tenth of each count, for the inner loop.

A test says how many examples it wants in a full run with ``examples(n)``, so the quick profile
scales every test alike instead of each test pinning its own number past the profile."""

from __future__ import annotations

import os

from hypothesis import settings

FULL = 100  # hypothesis's own default: a profile's max_examples over this is the scale

settings.register_profile("dev", max_examples=FULL)
settings.register_profile("ci", max_examples=FULL, derandomize=True, print_blob=True)
settings.register_profile("quick", max_examples=FULL // 10)


def load() -> str:
    """Load the profile ``HYPOTHESIS_PROFILE`` names (``ci`` under CI, else ``dev``); its name."""
    name = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    settings.load_profile(name)
    return name


def examples(full: int) -> int:
    """The examples a property test runs under the loaded profile: ``full`` in a full run."""
    return max(1, full * settings().max_examples // FULL)
