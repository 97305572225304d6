"""The ``install`` input: a shell command run in the working directory before any server starts
(``pip install -e .``, ``npm ci && npm run build``).

Its output is the project's own and may say anything, so it is printed inside a log group with
workflow commands stopped and every line neutralised. The run is bounded in time, and the whole
process group is ended when the time is up.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from mcp_replay_action.errors import EXIT_INFRA, ReplayError
from mcp_replay_action.github.commands import Commands

INSTALL_TIMEOUT = 30 * 60.0


class InstallError(ReplayError):
    """The install command failed or ran out of time."""

    exit_code = EXIT_INFRA


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
    """Run ``command`` in ``cwd`` with our environment plus ``env``; raise InstallError unless it
    exits 0 within ``timeout`` seconds."""
    full_env = {**os.environ, **env}
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
            )
        except OSError as exc:
            raise InstallError(f"install: cannot start a shell ({exc.strerror})") from None
        timed_out = threading.Event()

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
                out.log(line.rstrip("\r\n"))

        # Read on a thread: a daemon the command leaves behind may keep the pipe open after the
        # shell has exited, and that must not hold the run.
        reader = threading.Thread(target=pump, name="mcp-replay-install-log", daemon=True)
        reader.start()
        try:
            status = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out.set()
            kill_group()
            status = proc.wait()
        finally:
            if proc.poll() is None:  # interrupted: leave nothing running
                kill_group()
                proc.wait()
        reader.join(5.0)
    if timed_out.is_set():
        raise InstallError(f"install: still running after {timeout:g} s, stopped (see the Install log group)")
    if status != 0:
        raise InstallError(f"install: the command exited with status {status} (see the Install log group)")
