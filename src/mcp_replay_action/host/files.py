"""The files we write for the user (cassettes, reports, JUnit, badge, comment file): whole or not
at all, with the permissions the user's umask gives (0644 under the usual 022, as ``touch`` would;
``mkstemp`` alone would leave 0600), and checked for writability before a session starts, so that
a recording is never lost to an unwritable path at the end.

Inside the action's container we run as root while the workflow's later steps run as the
workspace's owner: once ``write_for_owner_of(workspace)`` is called, every file written here (the
report files, the comment file, and every cassette a refresh, calibrate or update rewrites) and
every directory made for it inside the workspace is handed to that owner (``hand_to_owner_of``),
in this one place.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

from mcp_replay_action.errors import ConfigError

_OWNED_BY: Path | None = None  # the workspace whose owner gets what we write (write_for_owner_of)


def write_for_owner_of(workspace: str | os.PathLike[str] | None) -> None:
    """From now on, give every file written under ``workspace`` to its owner (None: stop)."""
    global _OWNED_BY
    _OWNED_BY = Path(workspace) if workspace is not None else None


def current_umask() -> int:
    """The process umask (reading it means setting it; it is put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces in turn) to ``path`` through a temp file and a rename: never
    a half-written file."""
    import tempfile  # here: it (with shutil, random, bz2, lzma) costs every replay's start-up

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if hasattr(os, "fchmod"):  # not on Windows, where the mode bits mean little
            os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                fh.writelines(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
        if _OWNED_BY is not None:
            hand_to_owner_of(target, _OWNED_BY)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def check_writable(path: str | os.PathLike[str], what: str) -> None:
    """Raise ConfigError unless ``path`` can be written as a regular file: its directory exists
    (or can be made) and is writable, and the path is not a directory, FIFO or device."""
    target = Path(path)
    try:
        mode = target.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # the directory checks below say why
    except OSError as exc:
        raise ConfigError(f"{what} {path}: cannot write there ({exc.strerror})") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file (a FIFO, socket or device)"
        raise ConfigError(f"{what} {path}: is {kind}")
    parent = target.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(f"{what} {path}: cannot write there ({parent} is not a directory)")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ConfigError(f"{what} {path}: cannot write in {parent} (permission denied)")


def hand_to_owner_of(path: str | os.PathLike[str], workspace: str | os.PathLike[str]) -> None:
    """Give ``path``, and the directories between it and ``workspace``, to the owner (uid and gid)
    of ``workspace``. The action runs as root in its container while the workflow's later steps
    (the fork flow's artifact upload among them) run as the runner's user, who must be able to
    read, replace and delete what we wrote. Does nothing when we are not root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    root = Path(workspace).resolve()
    try:
        owner = root.stat()
    except OSError:
        return
    target = Path(path).resolve()
    for item in (target, *target.parents):
        if item == root or not item.is_relative_to(root):
            break
        mine = item.lstat()
        if (mine.st_uid, mine.st_gid) != (owner.st_uid, owner.st_gid):
            os.chown(item, owner.st_uid, owner.st_gid, follow_symlinks=False)
