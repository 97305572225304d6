"""Who the code under test runs as, and keeping the process that holds a token out of its reach.

In the action's image the entrypoint runs as root and holds the GitHub token; ``install``,
``setup`` and the server are code from the pull request. Once ``run_children_as`` is called, every
child we start (``transport.process.spawn_server``, ``github.install.run_install``) drops to that
unprivileged user in the child, between fork and exec (``setgroups([])``, ``setgid``,
``setuid``: ``subprocess``'s ``extra_groups``/``group``/``user``), so it can neither trace nor
read the holder (``/proc/<pid>/environ``, ``mem`` and ``fd`` of a root process are closed to it)
nor write the action's root-owned code. ``no_dumps`` is the same-user half: a non-dumpable process
cannot be read through ``/proc`` or traced by another process of its user.

The children keep the workspace owner's uid (they must write the checkout) but never its group: on
GitHub's runners that group is ``docker``, and the runner mounts ``/var/run/docker.sock`` (root,
group ``docker``, 0660) into every Docker action, which is root on the host. They get a HOME of
their own (``private_home``), never the job's ``/github/home`` that later steps use; and once the
child phase is over, ``end_leftovers`` ends every process of theirs still running (a daemon
``install`` left behind), so nothing of theirs outlives it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import time
from dataclasses import dataclass
from typing import TypedDict

# The user a root-owned workspace's code under test runs as: never root, and the same number
# the distroless images call "nonroot".
FALLBACK_ID = 65532
PR_SET_DUMPABLE = 4  # <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Credentials:
    """An unprivileged user: who the code under test runs as, and the HOME it gets."""

    uid: int
    gid: int
    home: str | None = None


_CHILDREN: Credentials | None = None


def _libc() -> ctypes.CDLL | None:
    """libc through ctypes, for prctl (Linux only); None elsewhere or when it cannot be loaded."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        # The usual soname first: find_library runs ldconfig (a process) on every start-up.
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        pass
    from ctypes.util import find_library  # only here: it imports shutil and tempfile too

    try:
        return ctypes.CDLL(find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None


LIBC = _libc()


def prctl(option: int, value: int) -> bool:
    """``prctl(option, value, 0, 0, 0)``; whether it took effect (False where there is none)."""
    try:
        return LIBC is not None and bool(LIBC.prctl(option, value, 0, 0, 0) == 0)
    except AttributeError:
        return False


def no_dumps() -> bool:
    """Make this process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): its ``/proc/<pid>/environ``,
    ``mem`` and ``fd`` become root's, and no process of the same user may ``ptrace`` it. ``execve``
    resets the flag, so every new program image calls this first. False where there is no prctl."""
    return prctl(PR_SET_DUMPABLE, 0)


def become_subreaper() -> bool:
    """Make this process a child subreaper (Linux): orphans of the processes we start (a server's
    daemon, a background job of ``install``) are re-parented to us, so we can end and reap them.
    Returns whether it took effect."""
    return prctl(PR_SET_CHILD_SUBREAPER, 1)


def owner_of_workspace(workspace: str | os.PathLike[str]) -> Credentials:
    """Who the code under test runs as: the workspace owner's uid (so what ``install`` and the
    server write is theirs), never root's (a root-owned workspace gives ``FALLBACK_ID``), and the
    group ``FALLBACK_ID``, never the workspace's: on GitHub that group is ``docker``, whose socket
    the runner mounts into the container."""
    uid = os.stat(workspace).st_uid
    return Credentials(uid if uid != 0 else FALLBACK_ID, FALLBACK_ID)


def run_children_as(creds: Credentials | None) -> None:
    """From now on, every child we start runs as ``creds`` (None: as we do)."""
    global _CHILDREN
    if creds is not None and (creds.uid == 0 or creds.gid == 0):
        raise ValueError("the code under test never runs as root")
    _CHILDREN = creds


def children() -> Credentials | None:
    """Who the children run as, when they drop privileges."""
    return _CHILDREN


class PopenOptions(TypedDict, total=False):
    """The ``subprocess.Popen`` keywords of a child that drops privileges."""

    user: int
    group: int
    extra_groups: list[int]


def popen_options() -> PopenOptions:
    """``subprocess.Popen`` keywords that make the child drop to the children's user before exec
    (empty when nothing is dropped)."""
    if _CHILDREN is None:
        return {}
    return {"user": _CHILDREN.uid, "group": _CHILDREN.gid, "extra_groups": []}


def child_environment(env: dict[str, str]) -> dict[str, str]:
    """``env`` as the children see it when they drop: HOME is theirs (pip falls back to a user
    install there, npm and uv keep their caches there) and its ``.local/bin`` is on PATH, so what
    ``pip install`` put there is found by the server command."""
    if _CHILDREN is None or _CHILDREN.home is None:
        return env
    local_bin = os.path.join(_CHILDREN.home, ".local", "bin")
    path = env.get("PATH", os.defpath)
    if local_bin not in path.split(os.pathsep):
        path = os.pathsep.join([path, local_bin])
    return {**env, "HOME": _CHILDREN.home, "PATH": path}


def private_home(creds: Credentials) -> Credentials:
    """``creds`` with a fresh private HOME of theirs (``mcp-replay-home-*`` in the temporary
    directory; whoever asks for it removes it when the children are gone). Never the job's home
    (``/github/home``): every later container step of the job runs with it as HOME, so a
    ``.gitconfig``, ``pip.conf`` or ``.pth`` left there would run in steps that hold a token."""
    import tempfile

    made = tempfile.mkdtemp(prefix="mcp-replay-home-")
    os.chown(made, creds.uid, creds.gid)
    return Credentials(creds.uid, creds.gid, made)


def end_leftovers(creds: Credentials, *, rounds: int = 100) -> None:
    """SIGKILL every process descended from us that runs as ``creds.uid`` (real, effective, saved
    or file-system uid: a setuid program they started too), and reap those re-parented to us, until none is
    left: a daemon ``install`` left behind, a server's grandchild that left its group and
    environment marker. Only our descendants (we are a subreaper: orphans come back to us), so on
    a shared machine no other process of that user is touched. Raises RuntimeError if some are
    still alive after ``rounds`` passes (a fork bomb outrunning us)."""
    for _ in range(rounds):
        found = _descendants_running_as(creds.uid)
        if not found:
            return
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
        for pid in found:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass  # not ours to reap: its parent (killed too) passes it to us, or to init
    raise RuntimeError(f"processes of uid {creds.uid} are still running after {rounds} rounds of SIGKILL")


def _descendants_running_as(uid: int) -> list[int]:
    """Our live (not zombie) descendants any of whose uids is ``uid``, from ``/proc``."""
    parents: dict[int, int] = {}
    wanted: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="utf-8", errors="replace") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue  # it ended while we looked
        pid = int(entry)
        parents[pid] = int(fields.get("PPid", "0"))
        zombie = fields.get("State", "").split()[:1] == ["Z"]  # it can do nothing more
        if not zombie and str(uid) in fields.get("Uid", "").split():
            wanted.add(pid)
    me = os.getpid()
    found = []
    for pid in wanted:
        seen, up = {pid}, parents.get(pid, 0)
        while up > 0 and up != me and up not in seen:
            seen.add(up)
            up = parents.get(up, 0)
        if up == me:
            found.append(pid)
    return found


def give_to_children(path: str | os.PathLike[str]) -> None:
    """Hand a directory we made for a child (a scratch HOME) to the children's user."""
    if _CHILDREN is not None:
        os.chown(path, _CHILDREN.uid, _CHILDREN.gid)
