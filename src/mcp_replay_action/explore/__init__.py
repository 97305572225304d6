"""Exploring a server with no cassette to start from: ``explore`` writes one (``explorer.py``,
arguments from ``arguments.py``), ``compare_builds`` compares two builds through it
(``builds.py``). See docs/baseline.md."""
