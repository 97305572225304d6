"""The files we write for the user (cassettes, reports, JUnit, badge, comment file): whole or not
at all, with the permissions the user's umask gives (0644 under the usual 022, as ``touch`` would;
``mkstemp`` alone would leave 0600), and checked for writability before a session starts, so that
a recording is never lost to an unwritable path at the end.

Inside the action's container we run as root while the workflow's later steps run as the
workspace's owner: once ``write_for_owner_of(workspace)`` is called, every file written here (the
report files, the comment file, and every cassette a refresh, calibrate or update rewrites) and
every directory made for it inside the workspace is handed to that owner (``hand_to_owner_of``),
in this one place.

And the one reader of a JSON object from a file that came from outside (``read_json_object``: an
event payload, a report to merge, a fork's comment file), bounded in size and depth.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import NoReturn

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON, JSONObject

# Deeper than any report, event or comment file we write or GitHub sends; far below the depth at
# which json, jsonschema or a renderer would run out of stack.
MAX_JSON_DEPTH = 256

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


def read_json_object(path: str, what: str, max_bytes: int, *, missing: str = "") -> JSONObject:
    """A bounded JSON object read from a file that came from outside (an event, a fork's comment
    file). Every failure is a one-line ConfigError naming the file; ``missing`` replaces the
    message for an absent file."""
    try:
        with open(path, "rb") as fh:
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
