"""Keep the token out of every environment the code under test can read.

Deleting variables from ``os.environ`` is not enough: Linux keeps the environment a process was
*started* with in ``/proc/<pid>/environ``, and the server and the ``install`` command (both code
from the pull request) can read that file for their parent and every other ancestor running as
the same user. So the entrypoint, as its first act, re-executes itself (same PID, new program
image) with an environment that lacks the tokens, the ``INPUT_*`` variables and the runner's
file-command paths. Those values travel over an inherited file descriptor (an anonymous memory
file on Linux, a pipe elsewhere) that the new image reads once and closes; they then live only in
this process's memory, never in any environment block.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.settings import is_scrubbed

HANDOVER_VARIABLE = "MCP_REPLAY_HANDOVER_FD"
# A pipe holds this much without a reader; more would block before the exec.
_PIPE_LIMIT = 16 * 1024


def split_environment(environ: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """(what the code under test may see, what only this process may keep)."""
    clean: dict[str, str] = {}
    kept: dict[str, str] = {}
    for name, value in environ.items():
        (kept if is_scrubbed(name) else clean)[name] = value
    return clean, kept


def reexec_clean() -> None:
    """Replace this process with itself (the same interpreter options, ``-I`` among them, and
    arguments) run under the clean environment, handing the secret part over on a file
    descriptor. Returns only when there is nothing to hide."""
    clean, kept = split_environment(os.environ)
    if not kept or os.name != "posix":  # Windows has no /proc and no real exec: scrub() must do
        return
    payload = json.dumps(kept).encode()
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("mcp-replay-handover", 0)  # no MFD_CLOEXEC: the new image inherits it
        os.write(fd, payload)
        os.lseek(fd, 0, os.SEEK_SET)
    else:
        if len(payload) > _PIPE_LIMIT:
            raise ConfigError(f"the action's inputs are too large to hand over ({len(payload)} bytes)")
        fd, write_end = os.pipe()
        os.write(write_end, payload)
        os.close(write_end)
    os.set_inheritable(fd, True)
    clean[HANDOVER_VARIABLE] = str(fd)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], clean)


def receive() -> dict[str, str]:
    """In the re-executed image: the environment with the handed-over values restored (a plain
    dict; ``os.environ`` stays clean for the children)."""
    environ = dict(os.environ)
    raw_fd = os.environ.pop(HANDOVER_VARIABLE, "")
    environ.pop(HANDOVER_VARIABLE, None)
    if not raw_fd.isdigit():
        return environ
    fd = int(raw_fd)
    chunks = []
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(65536):
            chunks.append(chunk)
    environ.update(json.loads(b"".join(chunks)))
    return environ
