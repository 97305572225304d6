"""Cassette discovery: which files a list of patterns names. One policy for the CLI's
``--cassette`` and the action's ``cassettes`` input.

A pattern is a file or a glob (``cassettes/**/*.jsonl``, ``**`` spans directories) relative to
``root``; a pattern starting with ``!`` excludes what it matches. The result is sorted,
de-duplicated and absolute. Patterns that name nothing at all are an error (a typo must not pass
as "no regressions"); a plain file name is kept even when missing, so loading it names the file.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from pathlib import Path

from mcp_replay_action.errors import ConfigError

# What the action replays when the ``cassettes`` input is not given: our JSONL cassettes and
# mcp-recorder's JSON ones.
DEFAULT_PATTERNS: tuple[str, ...] = ("cassettes/**/*.jsonl", "cassettes/**/*.json")


def find_cassettes(
    patterns: Sequence[str], root: str | os.PathLike[str] = ".", *, confine: bool = False, what: str = "--cassette"
) -> list[str]:
    """Absolute paths of the cassettes ``patterns`` name under ``root``.

    ``confine``: every path must stay inside ``root`` once symlinks are resolved (the action's
    workspace). ``what`` names the option or input in error messages. Raises ``ConfigError`` when
    nothing is left.
    """
    base = Path(root).resolve()
    included: dict[Path, None] = {}
    excluded: set[Path] = set()
    for pattern in patterns:
        exclude = pattern.startswith("!")
        bare = pattern.removeprefix("!")
        if glob.has_magic(bare):
            found = [base / rel for rel in glob.glob(bare, root_dir=base, recursive=True)]
            files = [p for p in found if p.is_file()]
        else:
            files = [base / bare]
        if exclude:
            excluded.update(p.resolve() for p in files)
        else:
            included.update(dict.fromkeys(files))
    paths: list[str] = []
    for path in included:
        real = path.resolve()
        if real in excluded:
            continue
        if confine and not real.is_relative_to(base):
            raise ConfigError(f"{what}: {path.relative_to(base)} points outside {base}")
        paths.append(str(path if not confine else real))
    if not paths:
        raise ConfigError(f"{what}: no file matches {', '.join(patterns)}")
    return sorted(dict.fromkeys(paths))
