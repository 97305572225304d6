"""Commits and branches through GitHub's git data API: blobs, a tree on ``base_tree``, a commit,
and a branch ref created or force-updated. No ``git`` binary and no credentials on disk: the
image stays thin, and the token goes only into the API client's ``Authorization`` header.

Every write needs ``contents: write``; a 403 says so (``MissingPermission``) instead of GitHub's
"Resource not accessible by integration".
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.client import Forbidden, GitHubClient, GitHubError, MissingPermission, NotFound

CONTENTS_WRITE = "`contents: write` in the workflow's `permissions:`"
FILE_MODE = "100644"
_PERSON = re.compile(r"\s*([^<>]+?)\s*<([^<>\s]+@[^<>\s]+)>\s*")
_BRANCH_BAD = re.compile(r"(^[/.-]|[/.]$|\.\.|//|@\{|[\x00-\x20~^:?*\[\\\x7f]|\.lock$|/\.|\.lock/)")


@dataclass(frozen=True)
class Person:
    """A commit's author or committer."""

    name: str
    email: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "email": self.email}


BOT = Person("github-actions[bot]", "41898282+github-actions[bot]@users.noreply.github.com")


def parse_person(value: str) -> Person:
    """``Name <email>`` as a Person; raises ConfigError otherwise."""
    found = _PERSON.fullmatch(value)
    if not found:
        raise ConfigError(f"input commit-author: {value[:60]!r} is not valid; expected 'Name <email>'")
    return Person(found.group(1), found.group(2))


def check_branch_name(name: str) -> str:
    """A branch name git accepts (``git check-ref-format`` rules that matter here)."""
    if not name or _BRANCH_BAD.search(name) or name == "@":
        raise ConfigError(f"input refresh-branch: {name[:60]!r} is not a valid branch name")
    return name


@contextmanager
def needs(permission: str) -> Iterator[None]:
    """Turn a 403 inside the block into ``MissingPermission`` naming ``permission``."""
    try:
        yield
    except MissingPermission:
        raise
    except Forbidden as exc:
        raise MissingPermission(exc, permission) from None


def default_branch(gh: GitHubClient, repo: str) -> str:
    """The repository's default branch (where refresh pull requests go)."""
    data = gh.get(f"repos/{repo}")
    branch = data.get("default_branch") if isinstance(data, dict) else None
    if not isinstance(branch, str) or not branch:
        raise GitHubError("the repository has no default branch", method="GET", path=f"/repos/{repo}")
    return branch


def tree_of(gh: GitHubClient, repo: str, commit_sha: str) -> str:
    """The tree SHA of a commit."""
    data = gh.get(f"repos/{repo}/git/commits/{commit_sha}")
    tree = (data.get("tree") or {}).get("sha") if isinstance(data, dict) else None
    if not isinstance(tree, str):
        raise GitHubError("the commit has no tree", method="GET", path=f"/repos/{repo}/git/commits/{commit_sha}")
    return tree


def create_blob(gh: GitHubClient, repo: str, content: bytes) -> str:
    """Store ``content`` as a blob; its SHA. Base64, so any bytes survive."""
    with needs(CONTENTS_WRITE):
        data = gh.post(
            f"repos/{repo}/git/blobs", {"content": base64.b64encode(content).decode("ascii"), "encoding": "base64"}
        )
    return str(data["sha"])


def create_tree(gh: GitHubClient, repo: str, base_tree: str, blobs: Mapping[str, str]) -> str:
    """A tree that is ``base_tree`` with each path (``a/b.jsonl``) set to its blob SHA."""
    entries = [{"path": path, "mode": FILE_MODE, "type": "blob", "sha": sha} for path, sha in sorted(blobs.items())]
    with needs(CONTENTS_WRITE):
        data = gh.post(f"repos/{repo}/git/trees", {"base_tree": base_tree, "tree": entries})
    return str(data["sha"])


def create_commit(
    gh: GitHubClient, repo: str, *, message: str, tree: str, parents: list[str], author: Person, committer: Person
) -> str:
    """A commit object; its SHA."""
    body = {
        "message": message,
        "tree": tree,
        "parents": parents,
        "author": author.to_json(),
        "committer": committer.to_json(),
    }
    with needs(CONTENTS_WRITE):
        data = gh.post(f"repos/{repo}/git/commits", body)
    return str(data["sha"])


def branch_head(gh: GitHubClient, repo: str, branch: str) -> str | None:
    """The commit a branch points at, or None when there is no such branch."""
    try:
        data = gh.get(f"repos/{repo}/git/ref/heads/{branch}")
    except NotFound:
        return None
    sha = (data.get("object") or {}).get("sha") if isinstance(data, dict) else None
    return sha if isinstance(sha, str) else None


def set_branch(gh: GitHubClient, repo: str, branch: str, sha: str) -> Literal["created", "updated"]:
    """Point ``branch`` at ``sha``, creating it or force-updating it (one branch is reused by every
    refresh, so its history is ours to replace)."""
    with needs(CONTENTS_WRITE):
        if branch_head(gh, repo, branch) is None:
            gh.post(f"repos/{repo}/git/refs", {"ref": f"refs/heads/{branch}", "sha": sha})
            return "created"
        gh.patch(f"repos/{repo}/git/refs/heads/{branch}", {"sha": sha, "force": True})
        return "updated"


def commit_files(
    gh: GitHubClient,
    repo: str,
    *,
    parent: str,
    files: Mapping[str, bytes],
    message: str,
    author: Person = BOT,
    committer: Person = BOT,
) -> str:
    """One commit on top of ``parent`` that changes exactly ``files`` (path -> new content);
    its SHA. The branch is not moved: see ``set_branch``."""
    blobs = {path: create_blob(gh, repo, content) for path, content in files.items()}
    tree = create_tree(gh, repo, tree_of(gh, repo, parent), blobs)
    return create_commit(gh, repo, message=message, tree=tree, parents=[parent], author=author, committer=committer)
