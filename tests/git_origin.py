"""A real git repository on disk as ``origin``: a bare repository with a ``main`` branch, and a
clone of it as the workspace ``actions/checkout`` would leave (detached at the commit)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fakegithub import git


@dataclass(frozen=True)
class Origin:
    bare: Path
    workspace: Path
    sha: str  # the commit ``main`` points at, which the workflow runs on

    def files_changed(self, base: str, head: str) -> list[str]:
        """Paths that differ between two commits (git's own account)."""
        return git(self.bare, "diff", "--name-only", base, head).splitlines()

    def show(self, rev: str, path: str) -> str:
        return git(self.bare, "show", f"{rev}:{path}")

    def head(self, branch: str) -> str:
        return git(self.bare, "rev-parse", f"refs/heads/{branch}")

    def has_branch(self, branch: str) -> bool:
        return bool(git(self.bare, "for-each-ref", f"refs/heads/{branch}"))

    def branches(self) -> list[str]:
        return git(self.bare, "for-each-ref", "--format=%(refname:short)", "refs/heads").splitlines()


def make_origin(root: Path, files: dict[str, bytes]) -> Origin:
    """``root/origin.git`` holding one commit on ``main`` with ``files``; ``root/workspace`` a
    clone of it."""
    root.mkdir(parents=True, exist_ok=True)
    bare = root / "origin.git"
    seed = root / "seed"
    git(root, "init", "-q", "--bare", "-b", "main", str(bare))
    git(root, "init", "-q", "-b", "main", str(seed))
    for name, content in files.items():
        target = seed / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    who = {"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com"}
    who |= {"GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}
    git(seed, "add", "-A")
    git(seed, "commit", "-q", "-m", "cassettes", env=who)
    git(seed, "push", "-q", str(bare), "main")
    workspace = root / "workspace"
    git(root, "clone", "-q", str(bare), str(workspace))
    return Origin(bare, workspace, git(bare, "rev-parse", "refs/heads/main"))
