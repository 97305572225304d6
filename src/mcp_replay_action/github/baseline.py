"""Input ``baseline``: the pull request's code compared with its base's, no cassette needed.

``baseline: merge-base`` takes the commit the pull request branched from (``git merge-base`` of
the event's base commit and the checked-out head); any other value is a ref or commit of this
checkout. That commit is checked out beside the workspace (``git worktree add --detach``), ``install``
runs there, and ``explore.builds.compare_builds`` explores it, learns its noise from two more
starts and replays that against the workspace's build: the findings join the cassettes' (when the
repository has some) in one report, one comment and one gate.

git runs with an argument list (never a shell) as the code under test runs (``host/privilege.py``):
in the image, as the workspace's owner with a HOME of its own and the environment scrubbed of
tokens, inside the fence that keeps the runner's files closed. So git's own ownership check passes
as it is, with no exception configured, and whatever the head's ``install`` left in ``.git`` (a hook, a
``core.fsmonitor`` command) runs with no more than that code already had, never as the token
holder. Its errors become one line that says what the checkout needs (``fetch-depth: 0``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.event import Event
from mcp_replay_action.host import privilege

MERGE_BASE = "merge-base"
# A ref as a workflow names one (a branch, a tag, a commit, ``origin/main``): no option-like
# leading dash, no spaces, no ``..`` ranges; linear, anchored.
_REF_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/@^~{}+-]{0,199}")
FETCH_HINT = "with actions/checkout, set fetch-depth: 0 so the base commit is in the checkout"
GIT_TIMEOUT = 120.0


def clean_baseline(value: str) -> str:
    """Input ``baseline``: empty (off), ``merge-base``, or a ref of the checkout."""
    if not value or value == MERGE_BASE:
        return value
    if not _REF_RE.fullmatch(value) or ".." in value:
        raise ConfigError(f"input baseline: {value!r} is neither merge-base nor a git ref (a branch, tag or commit)")
    return value


def check_startable(setting: str, server: tuple[str, ...], url: str | None) -> None:
    """The base build must be started from its own checkout: with ``url`` alone the only server
    is the one already running there (this build), and comparing it with itself would pass
    whatever changed. With ``server`` too, each build's command starts it listening at ``url``."""
    if setting and url and not server:
        raise ConfigError(
            "input baseline: with url alone the base build cannot be started (the server at url is this "
            "build); give server too, the command that starts a build listening at url (docs/baseline.md)"
        )


def base_commit(setting: str, event: Event, workspace: Path) -> str:
    """The commit ``setting`` names in the checkout at ``workspace``; a ConfigError that says which
    ``fetch-depth`` to use when the checkout does not hold it."""
    if setting == MERGE_BASE:
        if not event.base_sha:
            raise ConfigError(
                f"input baseline: merge-base needs a pull request event (this is {event.name or 'no event'}); "
                "give a ref (baseline: main) instead"
            )
        return _git(
            workspace,
            ("merge-base", event.base_sha, "HEAD"),
            f"input baseline: the pull request's base commit {event.base_sha[:12]} is not in this checkout; "
            + FETCH_HINT,
        )
    return _git(
        workspace,
        ("rev-parse", "--verify", "--quiet", "--end-of-options", f"{setting}^{{commit}}"),
        f"input baseline: {setting!r} is not a commit of this checkout; {FETCH_HINT}",
    )


@contextmanager
def checked_out(workspace: Path, commit: str) -> Iterator[Path]:
    """``commit`` checked out in a worktree of its own, removed again on the way out."""
    scratch = Path(tempfile.mkdtemp(prefix="mcp-replay-base-"))
    tree = scratch / "base"
    try:
        privilege.give_to_children(scratch)  # git, install and the base's server write there
        _git(workspace, ("worktree", "add", "--detach", str(tree), commit), f"cannot check out {commit[:12]}")
        yield tree
    finally:
        try:
            _git(workspace, ("worktree", "remove", "--force", str(tree)), "")
        except ConfigError:
            pass  # never checked out, or already gone: the directory goes below either way
        shutil.rmtree(scratch, ignore_errors=True)


def _git(workspace: Path, args: tuple[str, ...], failure: str) -> str:
    """``git -C workspace ARGS``'s first line of output; ``failure`` (with git's own words) when
    it fails, a ConfigError."""
    argv = ["git", "-C", str(workspace), *args]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=privilege.child_environment(dict(os.environ)),
            **privilege.popen_options(),
        )
    except FileNotFoundError:
        raise ConfigError("input baseline needs git, and there is none on PATH here") from None
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{failure}: git did not finish within {GIT_TIMEOUT:g} s") from None
    if done.returncode != 0:
        said = " ".join(done.stderr.split())[:300]
        if "dubious ownership" in said:
            # Another user owns the checkout (a root-owned workspace gives the code under test
            # uid 65532): not a fetch-depth matter, and no exception to git's check is made for it.
            raise ConfigError(
                f"input baseline: git refuses the checkout at {workspace}: it belongs to another user than "
                "the one the code under test runs as (check out as the runner's user)"
            )
        raise ConfigError(f"{failure}" + (f" (git: {said})" if said and failure else ""))
    return done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
