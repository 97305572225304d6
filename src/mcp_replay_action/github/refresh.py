"""``mode: refresh``: re-record the cassettes against the current server and propose the change as
one branch and one pull request.

Per cassette, a fresh server gets the recorded requests again; every interaction whose answer
changed is rewritten in place (``update.py``: atomic, header and unchanged lines kept, live
answers redacted by the cassette's own rules, so no live secret is written). Then, only when a
file's bytes changed: one commit holding exactly those files, on top of the commit the workflow
ran on, through the git data API; the refresh branch of the base branch (``refresh-branch``, a
prefix by default: ``mcp-replay/refresh/<base>``) force-updated to it, so every refresh into one
base reuses its branch and two bases never share one; the pull request opened, or the open one's
title and body updated. When nothing changed, the open pull requests into the base that fail
(by our own comment) are named: their changes are accepted on their own branches.

Why the REST git data API and not ``git push``: the image needs no git, no credentials are left
on disk for the server under test to find, and the commit holds exactly the files we name,
whatever else the install step changed in the workspace.

Runs only on the events of ``event.WRITE_EVENTS`` (``workflow_dispatch``, ``schedule``, ``push``),
on a commit of the repository itself; refused on every other (``check_event``): the pull request
events run the pull request's code, and a ``workflow_run`` is about a commit that may be a fork's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mcp_replay_action.cassette import load, save
from mcp_replay_action.compare.engine import CompareOptions
from mcp_replay_action.errors import CassetteError, ConfigError
from mcp_replay_action.github import gitdata
from mcp_replay_action.github.change_report import Rewritten
from mcp_replay_action.github.client import GitHubClient, Unprocessable
from mcp_replay_action.github.comment import my_login
from mcp_replay_action.github.event import WRITE_EVENTS, Event, write_refusal
from mcp_replay_action.github.pulls import Opened, upsert_pull
from mcp_replay_action.github.template import STATE_RE
from mcp_replay_action.host import inside
from mcp_replay_action.model.cassette import Cassette
from mcp_replay_action.model.results import CassetteResult
from mcp_replay_action.plan import Plan
from mcp_replay_action.replay.diff import diff_cassettes
from mcp_replay_action.scenarios import Scenarios, record_scenario
from mcp_replay_action.values.safe import md_cell


@dataclass(frozen=True)
class Proposal:
    """The branch, commit and pull request a refresh left."""

    branch: str
    commit: str
    branch_action: str  # created | updated
    pull: Opened


def check_event(event: Event, mode: str = "refresh") -> None:
    """Refuse ``mode`` (refresh, calibrate) unless this run may write to the repository
    (``event.write_refusal``): a ConfigError saying why."""
    refusal = write_refusal(event)
    if refusal:
        raise ConfigError(f"input mode: {mode} is refused on {event.name or 'this run'}: {refusal}")


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
    return _kept_if_changed(load(path), record_scenario(scenarios, name), options)


def explored_cassettes(paths: Sequence[str]) -> list[str]:
    """The cassettes whose header says ``mcp-replay explore`` wrote them (``explored``)."""
    return [path for path in paths if isinstance(load(path).meta.get("explored"), dict)]


def reexplore(path: str, plan: Plan) -> Rerecorded:
    """Explore ``plan``'s server again with the options the header stored (a tool added since is
    called too, one removed is no longer asked for) and, when an answer or the list of requests
    changed, write the new exploration over ``path``. Redacted as a replay redacts live answers:
    the plan's rules, the header's, and the server's environment."""
    from mcp_replay_action.explore.explorer import ExploreOptions, explore
    from mcp_replay_action.redact import Redactor, redactor_for

    old = load(path)
    base = Redactor(keys=plan.redact_keys, patterns=plan.redact_patterns)
    redactor = redactor_for(old.meta, base, plan.target.env, plan.public_env)
    options = ExploreOptions.from_json(old.meta["explored"].get("options"))
    new = explore(plan.target, options, redactor=redactor).cassette
    # The learned noise and declared threading of the old header still describe this server.
    kept = {key: old.meta[key] for key in ("noise", "threading") if key in old.meta}
    return _kept_if_changed(old, replace(new, meta={**new.meta, **kept}), plan.compare)


def _kept_if_changed(old: Cassette, new: Cassette, options: CompareOptions) -> Rerecorded:
    """``new`` written over ``old``'s file when an answer (or the list of requests) changed."""
    path = old.path
    new = replace(new, path=path)
    (result,) = diff_cassettes(old, new, options).cassettes
    changed = sum(1 for r in result.results if r.findings)
    if [i.label for i in old.requests] != [i.label for i in new.requests]:
        changed = max(changed, 1)
    if changed:
        save(new, path)
    return Rerecorded(path=path, result=result, changed=changed)


def cassette_bytes(path: str | Path) -> bytes:
    """The bytes of a cassette in the workspace, read without following a link the code under test
    could have planted (``host/inside.py``)."""
    try:
        return inside.read_bytes(path)
    except OSError as exc:
        raise CassetteError(str(path), None, f"cannot read it ({exc.strerror})") from None


def changed_files(before: Mapping[str, bytes], workspace: Path) -> dict[str, bytes]:
    """The files (relative path -> new bytes) whose content differs from ``before``."""
    out: dict[str, bytes] = {}
    for rel, old in before.items():
        new = cassette_bytes(workspace / rel)
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
    if event.name in WRITE_EVENTS and ref and not ref.startswith("refs/"):
        return ref
    return gitdata.default_branch(gh, repo)


def branch_for(setting: str, base: str) -> str:
    """The refresh branch for pull requests into ``base``. ``refresh-branch`` ending in ``/`` is
    a prefix (the default ``mcp-replay/refresh/`` gives ``mcp-replay/refresh/main``), so the
    refreshes of two branches (two pull requests' head branches) never overwrite each other; any
    other value is the branch itself, shared by every refresh."""
    return gitdata.check_branch_name(setting + base) if setting.endswith("/") else setting


def _set_refresh_branch(gh: GitHubClient, repo: str, branch: str, commit: str) -> str:
    """``gitdata.set_branch``, naming the branch in the way when git refuses the name: a branch
    ``mcp-replay/refresh`` (an earlier version's one refresh branch) blocks every
    ``mcp-replay/refresh/<base>``, since git cannot hold a ref both as a file and a folder."""
    try:
        return gitdata.set_branch(gh, repo, branch, commit)
    except Unprocessable:
        parts = branch.split("/")
        blocking = [p for p in ("/".join(parts[:i]) for i in range(1, len(parts))) if gitdata.branch_head(gh, repo, p)]
        if not blocking:
            raise
        raise ConfigError(
            f"input refresh-branch: cannot create {branch!r}: the branch {blocking[0]!r} exists (an earlier "
            f"refresh's single branch?); delete it once its pull request is closed, or set refresh-branch: "
            f"{blocking[0]} to keep using it"
        ) from None


@dataclass(frozen=True)
class FailingPull:
    """An open pull request whose head commit our sticky comment says fails the replay."""

    number: int
    head_ref: str
    url: str


MAX_PULLS_CHECKED = 50


def failing_pulls(gh: GitHubClient, repo: str, base: str) -> list[FailingPull]:
    """Open pull requests into ``base`` whose current head commit our own comment (its hidden
    state line, ``template.state_line``) says fails: what a refresh dispatched on ``base`` should
    name when nothing changed there, since their changes live on their head branches. Our comment
    is the signal because it is ours (author checked, any ``comment-id``) and says for which
    commit; check runs would need ``checks: read`` and a guess at which job is ours."""
    login = my_login(gh)
    found: list[FailingPull] = []
    pulls = gh.paginate(f"repos/{repo}/pulls", {"state": "open", "base": base, "per_page": 100}, max_pages=1)
    for pull in list(pulls)[:MAX_PULLS_CHECKED]:
        if not isinstance(pull, dict) or (pull.get("base") or {}).get("ref") != base:
            continue
        head = pull.get("head") or {}
        states = [
            STATE_RE.search(c.get("body") or "")
            for c in gh.paginate(f"repos/{repo}/issues/{int(pull['number'])}/comments", max_pages=10)
            if isinstance(c, dict) and (c.get("user") or {}).get("login") == login
        ]
        if any(m and m.group(1) == "failed" and m.group(2) == head.get("sha") for m in states):
            found.append(FailingPull(int(pull["number"]), str(head.get("ref", "")), str(pull.get("html_url", ""))))
    return found


def nothing_changed(base: str, failing: Sequence[FailingPull]) -> str:
    """The refresh's job summary when no cassette changed on ``base``: and when pull requests
    into it fail, which ones, and that their change is accepted on their own branch."""
    lines = ["### 🔄 MCP replay: refresh", "", f"No cassette changed on {md_cell(base, 120)}: nothing to propose."]
    if failing:
        lines += [
            "",
            f"{len(failing)} open pull request{'s' if len(failing) != 1 else ''} into {md_cell(base, 120)} "
            "fail the replay; their changes are on their own branches, so run this workflow again with "
            "**Use workflow from** set to the pull request's branch:",
            "",
            *(f"- #{p.number}: {md_cell(p.head_ref, 120)}" for p in failing),
        ]
    return "\n".join(lines) + "\n"


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
    action = _set_refresh_branch(gh, repo, branch, commit)
    pull = upsert_pull(gh, repo, head=branch, base=base, title=title, body=body, draft=draft, labels=labels)
    return Proposal(branch=branch, commit=commit, branch_action=action, pull=pull)
