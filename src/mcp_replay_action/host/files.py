"""The files we write for the user (cassettes, reports, JUnit, badge, comment file): whole or not
at all, with the permissions the user's umask gives (0644 under the usual 022, as ``touch`` would;
``mkstemp`` alone would leave 0600), and checked for writability before a session starts, so that
a recording is never lost to an unwritable path at the end.

In the action, the workspace is confined (``inside.py``): a file under it is written through the
descriptors of its directories, reached without following a link the code under test could have
made, and renamed into place there. Inside the action's container we run as root while the
workflow's later steps run as the workspace's owner, so there every file written under the
workspace (the report files, the comment file, and every cassette a refresh, calibrate or update
rewrites) and every directory made for it is handed to that owner, in this one place.

And the one reader of a JSON object from a file that came from outside (``read_json_object``: an
event payload, a report to merge, a fork's comment file), bounded in size and depth.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import NoReturn

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.host import inside
from mcp_replay_action.model import JSON, JSONObject

# Deeper than any report, event or comment file we write or GitHub sends; far below the depth at
# which json, jsonschema or a renderer would run out of stack.
MAX_JSON_DEPTH = 256


def current_umask() -> int:
    """The process umask (reading it means setting it; it is put back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | os.PathLike[str], text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces in turn) to ``path`` through a temp file and a rename: never
    a half-written file. Under the confined workspace, without following links (``inside.py``)."""
    rel = inside.beneath(path)
    if rel is not None:
        try:
            _write_beneath(rel, text)
        except inside.LinkRefused as exc:
            raise ConfigError(f"{path}: not written: {exc.filename} is {exc.strerror}") from None
        return
    import tempfile  # here: it (with shutil, random, bz2, lzma) costs every replay's start-up

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if hasattr(os, "fchmod"):  # not on Windows, where the mode bits mean little
            os.fchmod(fd, 0o666 & ~current_umask())
        _write_fd(fd, text)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _write_fd(fd: int, text: str | Iterable[str]) -> None:
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        if isinstance(text, str):
            fh.write(text)
        else:
            fh.writelines(text)
        fh.flush()
        os.fsync(fh.fileno())


def _write_beneath(rel: PurePath, text: str | Iterable[str]) -> None:
    """``atomic_write_text`` under the confined workspace: the directory reached by descriptors
    (missing ones made), the temp file created there with ``O_EXCL | O_NOFOLLOW``, handed to the
    workspace's owner when we are root, and renamed over the name within that directory."""
    owner = _owner_when_root()

    def made(fd: int) -> None:
        if owner is not None:
            os.fchown(fd, *owner)

    directory = inside.open_directory(rel.parent, made=made)
    try:
        for _ in range(100):
            tmp = f".{rel.name}.{os.urandom(6).hex()}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=directory)  # fmt: skip
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(f"{rel.parent}: no free temporary name")
        try:
            os.fchmod(fd, 0o666 & ~current_umask())
            made(fd)
            _write_fd(fd, text)
            os.replace(tmp, rel.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=directory)
            except FileNotFoundError:
                pass
            raise
    finally:
        os.close(directory)


def _owner_when_root() -> tuple[int, int] | None:
    """The confined workspace's owner (uid, gid) when we run as root (the image), else None: the
    workflow's later steps run as that user, and must read, replace and delete what we wrote."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    fd = inside.root_fd()
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    return info.st_uid, info.st_gid


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


def read_json_object(path: str, what: str, max_bytes: int, *, missing: str = "") -> JSONObject:
    """A bounded JSON object read from a file that came from outside (an event, a fork's comment
    file). Every failure is a one-line ConfigError naming the file; ``missing`` replaces the
    message for an absent file."""
    try:
        with os.fdopen(inside.open_file(path), "rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: {missing or f'cannot read the {what} ({exc.strerror})'}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the {what} ({exc.strerror})") from None
    if len(data) > max_bytes:
        raise ConfigError(f"{path}: the {what} is larger than {max_bytes} bytes")
    try:
        payload = json.loads(data, parse_constant=_refuse_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: the {what} is not JSON ({exc})") from None
    except ValueError as exc:  # _refuse_constant's
        raise ConfigError(f"{path}: the {what} is not JSON ({exc})") from None
    except RecursionError:
        raise ConfigError(f"{path}: the {what} is nested more than {MAX_JSON_DEPTH} deep") from None
    if _depth_over(payload, MAX_JSON_DEPTH):
        raise ConfigError(f"{path}: the {what} is nested more than {MAX_JSON_DEPTH} deep")
    if not isinstance(payload, dict):
        raise ConfigError(f"{path}: the {what} is not a JSON object")
    return payload


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a JSON number")


def _depth_over(value: JSON, limit: int) -> bool:
    """Whether ``value`` nests containers more than ``limit`` deep (walked without recursion:
    whatever reads it later, the schema check or a renderer, may recurse once per level)."""
    level: list[tuple[JSON, int]] = [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                level.append((child, depth + 1))
    return False
