"""The files the runner trusts after our step, kept out of reach of the code under test while it runs.

On GitHub the runner's user owns the workspace and also the file-command files (``GITHUB_ENV``,
``GITHUB_PATH``, ``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``, ``GITHUB_STATE``), the event file and
the job's home (``/github/home``, every later container step's ``HOME``). The code under test runs
as that user (it must write the workspace), so scrubbing the variables hides the paths, not the
files: a server could list ``/github/file_commands`` and append ``BASH_ENV=...`` to the env file,
which every later step of the job (token holders among them) obeys.

So, as root, before the first child starts, each such path is fenced: the nearest entry that keeps
it out of reach (the file itself when its directory is closed to the children, else the directory)
is given to root with mode 0700 (0600 for a file). The children can then neither open, list,
rename nor replace anything under it; root still writes our outputs and summary there. ``lift``
runs once every child is gone: it checks that each fenced entry is still the same, root's and
closed (only root could have changed it), then gives it back its owner and mode, so the runner
reads the files as it wrote them. An entry whose parents the children could rename is refused
(``FenceError``): a fence there would hold nothing.

A SIGKILL between ``around`` and ``lift`` leaves the entries root's: the runner then cannot read
them and the step fails, which is the safe way to fail.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mcp_replay_action.errors import EXIT_INFRA, ReplayError
from mcp_replay_action.host.privilege import Credentials


class FenceError(ReplayError):
    """A file the runner trusts could not be kept out of reach of the code under test."""

    exit_code = EXIT_INFRA


@dataclass(frozen=True)
class _Fenced:
    path: str  # the entry given to root (a trusted file, or the directory that holds it)
    fd: int  # held open, so lift() restores this very entry whatever happens to the name
    before: os.stat_result


def writable_by(info: os.stat_result, creds: Credentials) -> bool:
    """Whether the children could change this entry (write a file, add or rename a directory's
    entries): theirs (an owner may chmod), or open to their group or to everyone."""
    if info.st_uid == creds.uid:
        return True
    if info.st_gid == creds.gid and info.st_mode & stat.S_IWGRP:
        return True
    return bool(info.st_mode & stat.S_IWOTH)


def _renamable(path: Path, creds: Credentials) -> bool:
    """Whether the children could move ``path`` (or a directory above it) away and put their own
    in its place, along the path as named and along the directories it resolves to (the runner
    opens it by name: act's ``/var/run/act/...`` passes the symlink ``/var/run -> /run``)."""
    real = Path(os.path.realpath(path.parent)) / path.name
    return any(_renamable_along(chain, creds) for chain in {path, real})


def _renamable_along(path: Path, creds: Credentials) -> bool:
    """In a sticky directory (``/tmp``) only an entry's owner, or the directory's, may move it;
    ``path`` itself is root's once fenced. Each parent's mode is read through a symlink: a
    symlink's own mode is always 0777 and grants nothing; whether the children could replace the
    symlink itself is its own parent's question, asked on the next step up."""
    for child, parent in zip((path, *path.parents), path.parents, strict=False):
        info = os.stat(parent)
        if not writable_by(info, creds):
            continue
        theirs = child != path and os.lstat(child).st_uid == creds.uid
        if info.st_mode & stat.S_ISVTX and info.st_uid != creds.uid and not theirs:
            continue
        return True
    return False


def _entry_for(path: Path, creds: Credentials) -> Path | None:
    """What to give to root so that ``path`` is out of reach: its directory when the children
    could add, rename or replace entries there, else the file itself when they could write it
    (None: out of their reach already)."""
    try:
        if writable_by(os.lstat(path.parent), creds):
            return path.parent
        return path if writable_by(os.lstat(path), creds) else None
    except FileNotFoundError:
        return None


class Fence:
    """Entries given to root while the code under test runs (``around``), given back by ``lift``."""

    def __init__(self, fenced: list[_Fenced]) -> None:
        self._fenced = fenced

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self._fenced)

    @classmethod
    def around(cls, paths: Iterable[str], *, creds: Credentials, keep_open: Iterable[str]) -> Fence:
        """Fence every path in ``paths`` (files the runner reads after the step, the job's home)
        from ``creds``. ``keep_open``: directories the children need (the workspace, their
        working directory); fencing one of them or a directory above them is refused."""
        needed = [Path(os.path.abspath(p)) for p in keep_open]
        entries: dict[Path, str] = {}
        for given in paths:
            path = Path(os.path.abspath(given))
            entry = _entry_for(path, creds)
            if entry is None or entry in entries:
                continue
            if entry == Path(entry.anchor) or any(n == entry or n.is_relative_to(entry) for n in needed):
                raise FenceError(
                    f"{given}: the code under test could write it, and its directory {entry} holds the workspace"
                )
            if _renamable(entry, creds):
                raise FenceError(f"{given}: the code under test could replace {entry} (a directory above it is theirs)")
            entries[entry] = given
        fenced: list[_Fenced] = []
        try:
            for entry in entries:
                fd = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
                before = os.fstat(fd)
                fenced.append(_Fenced(str(entry), fd, before))
                os.fchown(fd, 0, 0)
                os.fchmod(fd, 0o700 if stat.S_ISDIR(before.st_mode) else 0o600)
        except OSError as exc:
            Fence(fenced).lift()
            raise FenceError(f"{exc.filename or entries}: cannot fence it off ({exc.strerror})") from None
        return cls(fenced)

    def lift(self) -> None:
        """Give each entry back its owner and mode, once no child is left. Raises FenceError if an
        entry changed while fenced (it is still given back: the run has failed either way)."""
        changed: list[str] = []
        fenced, self._fenced = self._fenced, []
        for item in fenced:
            try:
                now = os.fstat(item.fd)
                closed = 0o700 if stat.S_ISDIR(now.st_mode) else 0o600
                if (now.st_uid, now.st_gid, stat.S_IMODE(now.st_mode)) != (0, 0, closed):
                    changed.append(item.path)
                try:
                    named = os.lstat(item.path)
                    if (named.st_dev, named.st_ino) != (item.before.st_dev, item.before.st_ino):
                        changed.append(item.path)
                except FileNotFoundError:
                    changed.append(item.path)
                os.fchown(item.fd, item.before.st_uid, item.before.st_gid)
                os.fchmod(item.fd, stat.S_IMODE(item.before.st_mode))
            finally:
                os.close(item.fd)
        if changed:
            raise FenceError(
                f"{', '.join(changed)}: changed while the code under test ran; its content cannot be trusted"
            )
