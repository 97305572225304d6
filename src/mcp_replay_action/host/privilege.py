"""Who the code under test runs as, and keeping the process that holds a token out of its reach.

In the action's image the entrypoint runs as root and holds the GitHub token; ``install``,
``setup`` and the server are code from the pull request. Once ``run_children_as`` is called, every
child we start (``transport.process.spawn_server``, ``github.install.run_install``) drops to that
unprivileged user in the child, between fork and exec (``setgroups([])``, ``setgid``,
``setuid``: ``subprocess``'s ``extra_groups``/``group``/``user``), so it can neither trace nor
read the holder (``/proc/<pid>/environ``, ``mem`` and ``fd`` of a root process are closed to it)
nor write the action's root-owned code. ``no_dumps`` is the same-user half: a non-dumpable process
cannot be read through ``/proc`` or traced by another process of its user.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TypedDict

# The user a root-owned workspace's code under test runs as: never root, and the same number
# the distroless images call "nonroot".
FALLBACK_ID = 65532
PR_SET_DUMPABLE = 4  # <linux/prctl.h>


@dataclass(frozen=True)
class Credentials:
    """An unprivileged user: who the code under test runs as, and the HOME it gets."""

    uid: int
    gid: int
    home: str | None = None


_CHILDREN: Credentials | None = None


def no_dumps() -> bool:
    """Make this process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): its ``/proc/<pid>/environ``,
    ``mem`` and ``fd`` become root's, and no process of the same user may ``ptrace`` it. ``execve``
    resets the flag, so every new program image calls this first. False where there is no prctl."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def owner_of_workspace(workspace: str | os.PathLike[str]) -> Credentials:
    """The workspace owner's uid and gid (so what ``install`` and the server write is theirs),
    never root's: a root-owned workspace (or a root group) gives ``FALLBACK_ID``."""
    info = os.stat(workspace)
    uid = info.st_uid if info.st_uid != 0 else FALLBACK_ID
    gid = info.st_gid if info.st_gid != 0 else FALLBACK_ID
    return Credentials(uid, gid)


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


def home_for(creds: Credentials, home: str | None) -> Credentials:
    """``creds`` with a HOME they can write: ``home`` when they own it (the runner's
    ``/github/home`` belongs to the runner's user, who owns the workspace too), else a fresh
    private directory of theirs."""
    if home:
        try:
            if os.stat(home).st_uid == creds.uid:
                return Credentials(creds.uid, creds.gid, home)
        except OSError:
            pass
    import tempfile

    made = tempfile.mkdtemp(prefix="mcp-replay-home-")
    os.chown(made, creds.uid, creds.gid)
    return Credentials(creds.uid, creds.gid, made)


def give_to_children(path: str | os.PathLike[str]) -> None:
    """Hand a directory we made for a child (a scratch HOME) to the children's user."""
    if _CHILDREN is not None:
        os.chown(path, _CHILDREN.uid, _CHILDREN.gid)
