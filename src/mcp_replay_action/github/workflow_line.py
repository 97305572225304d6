"""Where a finding with no cassette line points in the repository: the running workflow's file
(``GITHUB_WORKFLOW_REF``), at the line that gives the action its ``baseline`` input.

Code scanning accepts a SARIF result only at a file of the repository (a result whose location is
only logical fails the whole upload: ``locationFromSarifResult: expected artifact location``), and
the findings of a ``baseline`` comparison live in no file: the base's exploration is a temporary
cassette. The workflow line that asks for the comparison is a real line of the repository, stays
put from run to run, and is where a reader goes to change the comparison.

The file is the pull request's own: it is read through ``host/inside.py`` (no link followed), only
when it is a regular file, at most ``MAX_BYTES`` of it, and nothing but a line number is taken
from it.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from urllib.parse import quote

from mcp_replay_action.github.settings import RunContext
from mcp_replay_action.host import inside
from mcp_replay_action.report.sarif import Anchor

MAX_BYTES = 1 << 20  # a workflow file is a few kilobytes; the input's line is near its top
# owner/repo/.github/workflows/<file>@<ref>: GitHub keeps workflows directly in that folder.
_WORKFLOW_REF = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/(\.github/workflows/[A-Za-z0-9_.-]+\.ya?ml)@")


def workflow_file(context: RunContext) -> str:
    """The running workflow's path in its repository (``.github/workflows/ci.yml``), or empty
    when the runner did not say (no ``GITHUB_WORKFLOW_REF``, as under some local runners)."""
    found = _WORKFLOW_REF.match(context.workflow_ref)
    return found.group(1) if found else ""


def input_line(text: str, name: str) -> int:
    """The first line (from 1) that gives input ``name`` (``name: value`` under a ``with:``), or 1."""
    key = f"{name}:"
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(key):
            return number
    return 1


def baseline_anchor(context: RunContext, workspace: Path) -> Anchor | None:
    """The running workflow's line that asks for the baseline, when that file is in the
    workspace; None otherwise (a checkout into a subdirectory, no ``GITHUB_WORKFLOW_REF``)."""
    relative = workflow_file(context)
    if not relative:
        return None
    text = _read(workspace / relative)
    if text is None:
        return None
    return Anchor(uri=quote(relative), line=input_line(text, "baseline"))


def _read(path: Path) -> str | None:
    """The start of the regular file at ``path``, or None (missing, a link, a FIFO, unreadable)."""
    try:
        fd = inside.open_file(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO must not hold the run
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        try:
            return handle.read(MAX_BYTES).decode("utf-8", errors="replace")
        except OSError:
            return None
