"""Files under the action's workspace, reached without following a link the code under test could
have made.

The workspace belongs to the code under test: ``install`` or a server may turn a directory there
into a symbolic link (``reports -> /root``) or swap a cassette for one (``-> /etc/shadow``) after
the plan checked it and before we open it. Followed by the token holder (root, in the image), such
a link writes where only root may, or reads a root-only file into the log. So once
``confine(workspace)`` is called (the action's entrypoint), every path under the workspace is
opened by walking down from the workspace's own descriptor one name at a time, each with
``O_NOFOLLOW``: a link anywhere below the workspace is refused (``LinkRefused``) whenever it was
made, and nothing can be swapped between a check and the open, because there is no check apart
from the open. A hard link is no way around it: Linux's ``protected_hardlinks`` (on by default)
keeps a user from linking a file they could not write themselves. A legitimate link the
repository holds is resolved when the plan is made (``find_cassettes``, ``clean_path``), so the
paths we are given hold none. Paths outside the workspace (the runner's own) are opened as given.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePath

_ROOT: Path | None = None  # the confined workspace (confine)
# Everything the walk needs; Windows (the composite variant's other home) has none of it.
_CAN = os.name == "posix" and {os.open, os.mkdir, os.rename, os.unlink, os.stat} <= os.supports_dir_fd
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)  # not on Windows


class LinkRefused(OSError):
    """A symbolic link met under the confined workspace: never followed."""


def confine(workspace: str | os.PathLike[str] | None) -> None:
    """From now on, open every path under ``workspace`` without following links (None: stop)."""
    global _ROOT
    _ROOT = Path(os.path.abspath(workspace)) if workspace is not None and _CAN else None


def confined() -> Path | None:
    """The confined workspace, or None."""
    return _ROOT


def beneath(path: str | os.PathLike[str]) -> PurePath | None:
    """``path`` relative to the confined workspace (as written, no link resolved), or None when
    nothing is confined or it lies outside."""
    if _ROOT is None:
        return None
    try:
        rel = PurePath(os.path.abspath(path)).relative_to(_ROOT)
    except ValueError:
        return None
    return rel if rel.parts else None


def root_fd() -> int:
    """A new descriptor of the confined workspace (its path is the runner's, trusted)."""
    assert _ROOT is not None
    return os.open(_ROOT, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_directory(rel: PurePath, *, made: Callable[[int], None] | None = None) -> int:
    """A descriptor of the directory ``rel`` names under the confined workspace, reached one name
    at a time without following links. With ``made``, missing directories are created and
    ``made`` is called with each new one's descriptor; without, a missing one is an error."""
    fd = root_fd()
    try:
        for depth, name in enumerate(rel.parts, start=1):
            try:
                below = _open_below(fd, name, os.O_RDONLY | os.O_DIRECTORY)
            except FileNotFoundError:
                if made is None:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: it is opened like any other, without following it
                below = _open_below(fd, name, os.O_RDONLY | os.O_DIRECTORY)
                made(below)
            except LinkRefused as exc:
                raise LinkRefused(exc.errno, exc.strerror, str(_shown(rel.parts[:depth]))) from None
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o666) -> int:
    """``os.open(path, flags, mode)``; under the confined workspace, without following any link on
    the way (``LinkRefused``)."""
    rel = beneath(path)
    if rel is None:
        return os.open(path, flags | _CLOEXEC, mode)
    parent = open_directory(rel.parent)
    try:
        return _open_below(parent, rel.name, flags, mode)
    except LinkRefused as exc:
        raise LinkRefused(exc.errno, exc.strerror, str(path)) from None
    finally:
        os.close(parent)


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The content of the file at ``path`` (``Path.read_bytes``, through ``open_file``)."""
    with os.fdopen(open_file(path), "rb") as handle:
        return handle.read()


def _open_below(directory: int, name: str, flags: int, mode: int = 0o666) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=directory)
    except OSError as exc:
        # Linux says ELOOP for a link under O_NOFOLLOW, FreeBSD EMLINK; O_DIRECTORY may say ENOTDIR.
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR) and _is_link(directory, name):
            raise LinkRefused(
                errno.ELOOP, "a symbolic link in the workspace (not followed: the code under test may have made it)"
            ) from None
        raise


def _is_link(directory: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _shown(parts: tuple[str, ...]) -> Path:
    assert _ROOT is not None
    return _ROOT.joinpath(*parts)
