"""Shared test settings."""

from __future__ import annotations

import os

from hypothesis import settings

# In CI the property tests explore the same examples on every run, so a pass or a failure can be
# reproduced; locally they keep searching new ground each time.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
