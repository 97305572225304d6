"""The ``install`` input: a shell command run in the working directory before any server starts
(``pip install -e .``, ``npm ci && npm run build``).

Its output is the project's own and may say anything, so it is printed inside a log group with
workflow commands stopped and every line neutralised. The run is bounded in time, and the whole
process group is ended when the time is up.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from mcp_replay_action.errors import EXIT_INFRA, ReplayError
from mcp_replay_action.github.commands import Commands
from mcp_replay_action.host import privilege

INSTALL_TIMEOUT = 30 * 60.0
_POLL = 0.1  # how often the shell's exit and the deadline are checked while it prints nothing
_DRAIN_PAUSE = 0.5  # after the shell exits, a pause this long in its output ends the log
_DRAIN_CAP = 2.0  # and a process left behind that keeps printing is cut off after this long


class InstallError(ReplayError):
    """The install command failed or ran out of time."""

    exit_code = EXIT_INFRA


def _print_next(lines: queue.Queue[str | None], out: Commands, wait: float) -> Literal["line", "end", "quiet"]:
    """Print the next line if one comes within ``wait`` seconds, and say what came."""
    try:
        line = lines.get(timeout=wait)
    except queue.Empty:
        return "quiet"
    if line is None:
        return "end"
    out.log(line)
    return "line"


def shell_argv(command: str) -> list[str]:
    """bash with errexit and pipefail when there is a bash (as on GitHub's runners and in our
    image), else POSIX sh with errexit."""
    bash = shutil.which("bash")
    if bash:
        return [bash, "-e", "-o", "pipefail", "-c", command]
    return ["/bin/sh", "-e", "-c", command]


def run_install(
    command: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    out: Commands,
    timeout: float = INSTALL_TIMEOUT,
) -> None:
    """Run ``command`` in ``cwd`` with our environment plus ``env`` (as the children's user when
    we drop privileges: ``privilege.py``); raise InstallError unless it exits 0 within
    ``timeout`` seconds."""
    full_env = privilege.child_environment({**os.environ, **env})
    with out.group(f"Install: {command}"), out.untrusted():
        try:
            proc = subprocess.Popen(
                shell_argv(command),
                cwd=cwd,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # so a timeout can end everything it started
                **privilege.popen_options(),
            )
        except OSError as exc:
            raise InstallError(f"install: cannot start a shell ({exc.strerror})") from None
        lines: queue.Queue[str | None] = queue.Queue()

        def kill_group() -> None:
            try:
                if hasattr(os, "killpg"):
                    os.killpg(proc.pid, signal.SIGKILL)
                else:  # Windows runners (composite action): no process groups to signal
                    proc.kill()
            except (ProcessLookupError, PermissionError):
                pass

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                lines.put(line.rstrip("\r\n"))
            lines.put(None)

        # Read on a thread and print from this one: a daemon the command leaves behind may keep the
        # pipe open after the shell has exited, and that must not hold the run. Once the shell is
        # gone we print what is already in the pipe, stop at the first pause or at the cap, and
        # never write to the log after returning.
        reader = threading.Thread(target=pump, name="mcp-replay-install-log", daemon=True)
        reader.start()
        deadline = time.monotonic() + timeout
        timed_out = False
        got = "line"
        try:
            while proc.poll() is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    break
                if got == "end":  # the output is closed but the shell still runs
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=min(_POLL, left))
                else:
                    got = _print_next(lines, out, min(_POLL, left))
        finally:
            if proc.poll() is None:  # timed out or interrupted: leave nothing running
                kill_group()
            status = proc.wait()
        drain_until = time.monotonic() + _DRAIN_CAP
        while got != "end" and time.monotonic() < drain_until:
            got = _print_next(lines, out, _DRAIN_PAUSE)
            if got == "quiet":
                break
    if timed_out:
        raise InstallError(f"install: still running after {timeout:g} s, stopped (see the Install log group)")
    if status != 0:
        raise InstallError(f"install: the command exited with status {status} (see the Install log group)")
