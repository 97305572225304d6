"""``mode: refresh``: re-record the cassettes against the current server and propose the change as
one branch and one pull request.

Per cassette, a fresh server gets the recorded requests again; every interaction whose answer
changed is rewritten in place (``update.py``: atomic, header and unchanged lines kept, live
answers redacted by the cassette's own rules, so no live secret is written). Then, only when a
file's bytes changed: one commit holding exactly those files, on top of the commit the workflow
ran on, through the git data API; the branch ``refresh-branch`` force-updated to it (every
refresh reuses it); the pull request opened, or the open one's title and body updated.

Why the REST git data API and not ``git push``: the image needs no git, no credentials are left
on disk for the server under test to find, and the commit holds exactly the files we name,
whatever else the install step changed in the workspace.

Refused on ``pull_request`` and ``pull_request_target``: it writes with a token while running the
pull request's code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mcp_replay_action.cassette import load, save
from mcp_replay_action.compare import CompareOptions
from mcp_replay_action.diff import diff_cassettes
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github import gitdata
from mcp_replay_action.github.change_report import Rewritten
from mcp_replay_action.github.client import GitHubClient
from mcp_replay_action.github.event import PULL_REQUEST_EVENTS, Event
from mcp_replay_action.github.pulls import Opened, upsert_pull
from mcp_replay_action.results import CassetteResult
from mcp_replay_action.scenarios import Scenarios, record_scenario


@dataclass(frozen=True)
class Proposal:
    """The branch, commit and pull request a refresh left."""

    branch: str
    commit: str
    branch_action: str  # created | updated
    pull: Opened


def check_event(event: Event) -> None:
    """Refuse to refresh where the token would write while the pull request's code runs."""
    if event.name in PULL_REQUEST_EVENTS:
        raise ConfigError(
            f"input mode: refresh is refused on {event.name}: it would write to the repository with a token "
            "while running the pull request's code; run it on workflow_dispatch (or schedule)"
        )


@dataclass(frozen=True)
class Rerecorded:
    """A cassette recorded again from its scenario, and how it differs from the old one."""

    path: str
    result: CassetteResult  # the old cassette's interactions judged against the new recording
    changed: int  # interactions whose answer changed (0: the file was left as it was)


def scenario_cassettes(paths: Sequence[str], scenarios: Scenarios) -> dict[str, str]:
    """The cassettes (path -> scenario name) whose header names a scenario of ``scenarios``."""
    out: dict[str, str] = {}
    for path in paths:
        name = load(path).meta.get("scenario")
        if isinstance(name, str) and name in scenarios.names:
            out[path] = name
    return out


def rerecord(path: str, scenarios: Scenarios, name: str, options: CompareOptions) -> Rerecorded:
    """Record scenario ``name`` again and, when an answer (or the list of requests) changed,
    write it over ``path``. A re-recording always has new timestamps; those alone change nothing."""
    old = load(path)
    new = replace(record_scenario(scenarios, name), path=path)
    (result,) = diff_cassettes(old, new, options).cassettes
    changed = sum(1 for r in result.results if r.findings)
    if [i.label for i in old.requests] != [i.label for i in new.requests]:
        changed = max(changed, 1)
    if changed:
        save(new, path)
    return Rerecorded(path=path, result=result, changed=changed)


def changed_files(before: Mapping[str, bytes], workspace: Path) -> dict[str, bytes]:
    """The files (relative path -> new bytes) whose content differs from ``before``."""
    out: dict[str, bytes] = {}
    for rel, old in before.items():
        new = (workspace / rel).read_bytes()
        if new != old:
            out[rel] = new
    return out


def rewritten_for(updates: Sequence[tuple[str, int, int]], changed: Mapping[str, bytes]) -> tuple[Rewritten, ...]:
    """What the report shows per cassette: (relative path, rewritten, kept), rewritten counted only
    for a file whose bytes really changed."""
    return tuple(Rewritten(rel, updated if rel in changed else 0, kept) for rel, updated, kept in updates)


def base_branch(gh: GitHubClient, repo: str, event: Event) -> str:
    """The branch the pull request goes to: the branch the workflow ran on (what its commit, our
    commit's parent, belongs to), else the repository's default branch."""
    ref = event.head_ref
    if event.name in ("workflow_dispatch", "schedule", "push") and ref and not ref.startswith("refs/"):
        return ref
    return gitdata.default_branch(gh, repo)


def propose(
    gh: GitHubClient,
    repo: str,
    *,
    parent: str,
    base: str,
    files: Mapping[str, bytes],
    branch: str,
    message: str,
    author: gitdata.Person,
    title: str,
    body: str,
    labels: Sequence[str] = (),
    draft: bool = False,
) -> Proposal:
    """Commit ``files`` on ``parent``, point ``branch`` at it, open or update its pull request."""
    if not files:
        raise ValueError("nothing to propose")
    if branch in (base, gitdata.default_branch(gh, repo)):
        # The refresh branch is force-updated: never let that be the branch the PR goes to.
        raise ConfigError(f"input refresh-branch: {branch!r} is the base branch; give a branch of its own")
    commit = gitdata.commit_files(
        gh, repo, parent=parent, files=files, message=message, author=author, committer=author
    )
    action = gitdata.set_branch(gh, repo, branch, commit)
    pull = upsert_pull(gh, repo, head=branch, base=base, title=title, body=body, draft=draft, labels=labels)
    return Proposal(branch=branch, commit=commit, branch_action=action, pull=pull)
