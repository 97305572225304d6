"""The child phase in the action's image: who ``install``, ``setup`` and the server run as, and what
they must not reach.

The image runs the entrypoint as root with ``MCP_REPLAY_RUN_AS=workspace-owner``. For the whole
run, then:

- every child drops to the workspace's owner, with a group of its own (``privilege.py``) and a
  fresh private HOME;
- the files the runner reads after the step (the file commands, the event) and the job's home
  (every later container step's HOME) are fenced off (``host/fence.py``): the code under test
  owns them on GitHub, and what it wrote there would reach every later step of the job;
- when the run ends, however it ends (SIGTERM and SIGHUP unwind like an exception here), every
  process of the children's user that is still running is ended, their HOME removed, and only
  then the fence lifted.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType

from mcp_replay_action.github.commands import Commands
from mcp_replay_action.github.settings import Settings
from mcp_replay_action.host import privilege
from mcp_replay_action.host.fence import Fence, FenceError

# Set in the action's image: as root, run the code under test as the workspace's owner.
RUN_AS_VARIABLE = "MCP_REPLAY_RUN_AS"
# What the runner, or a later step of the job, trusts after this step: the file commands, the event
# payload, and the job's home (later container steps run with it as HOME).
RUNNER_FILES = (
    "GITHUB_ENV",
    "GITHUB_PATH",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_STATE",
    "GITHUB_EVENT_PATH",
    "HOME",
)


def runner_files(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The paths of ``RUNNER_FILES`` the runner gave us (read before the environment is scrubbed)."""
    return tuple(environ[name] for name in RUNNER_FILES if environ.get(name))


@contextmanager
def children_isolated(
    settings: Settings, environ: Mapping[str, str], trusted: tuple[str, ...], out: Commands
) -> Iterator[None]:
    """As root with ``MCP_REPLAY_RUN_AS=workspace-owner`` (the image), run the body with the
    children dropped and ``trusted`` (``runner_files``) fenced off; elsewhere, just the body."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or environ.get(RUN_AS_VARIABLE, "") != "workspace-owner":
        yield
        return
    creds = privilege.private_home(privilege.owner_of_workspace(settings.workspace))
    assert creds.home is not None
    try:
        keep_open = (str(settings.workspace), str(settings.working_directory), creds.home)
        fence = Fence.around(trusted, creds=creds, keep_open=keep_open)
    except BaseException:
        shutil.rmtree(creds.home, ignore_errors=True)
        raise
    privilege.become_subreaper()  # before install: a daemon it leaves behind comes back to us
    privilege.run_children_as(creds)
    restore = _unwind_on_stop_signals()
    out.debug(
        f"install, setup and the server run as uid {creds.uid}, gid {creds.gid}, HOME {creds.home}; "
        f"out of their reach: {', '.join(fence.paths) or 'nothing'}"
    )
    try:
        yield
    finally:
        restore()
        privilege.run_children_as(None)
        try:
            privilege.end_leftovers(creds)
        except RuntimeError as exc:
            # Something of theirs still runs: the runner's files stay root's, and the step fails.
            raise FenceError(f"{exc}; the runner's files stay closed") from None
        shutil.rmtree(creds.home, ignore_errors=True)
        fence.lift()


def _unwind_on_stop_signals() -> Callable[[], None]:
    """SIGTERM and SIGHUP (a cancelled job) raise SystemExit in the main thread, so the ``finally``
    above still ends the children and lifts the fence (as PID 1 of a container, an unhandled
    SIGTERM would be ignored, and a handled one that exits at once would skip it). Returns the
    function that puts the previous handlers back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    return restore
