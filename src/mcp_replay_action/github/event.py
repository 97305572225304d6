"""The event that started the workflow, read from ``GITHUB_EVENT_PATH``: which pull request, which
commit, and whether the pull request comes from a fork (whose token cannot write comments).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mcp_replay_action.host.files import read_json_object
from mcp_replay_action.model import JSON, JSONObject

PULL_REQUEST_EVENTS = ("pull_request", "pull_request_target")
# The events on which the action may write to the repository (a refresh's commit, branch and pull
# request; cassettes calibrated for a later step to commit; the drift issue): each runs the
# workflow on a commit of the repository itself, chosen by someone with write access or by its
# own history. An allowlist: an event not named here (one GitHub adds later too) is refused.
WRITE_EVENTS = ("workflow_dispatch", "schedule", "push")
# Events that run, or are about, a pull request's code.
_PULL_REQUEST_CODE = (*PULL_REQUEST_EVENTS, "pull_request_review", "pull_request_review_comment")
MAX_EVENT_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class WorkflowRun:
    """The run a ``workflow_run`` event is about (GitHub wrote this payload: it is trusted)."""

    id: int
    event: str
    head_sha: str
    head_branch: str
    head_repository: str


@dataclass(frozen=True)
class Event:
    """What this run is about."""

    name: str
    repository: str = ""
    pr_number: int | None = None
    head_sha: str = ""
    head_ref: str = ""
    head_repository: str = ""
    is_fork: bool = False
    workflow_run: WorkflowRun | None = None
    base_sha: str = ""  # a pull request's base commit (input baseline: merge-base)

    @property
    def is_pull_request(self) -> bool:
        return self.name in PULL_REQUEST_EVENTS and self.pr_number is not None


def write_refusal(event: Event) -> str:
    """Why this run may not write to the repository ("" when it may): its event is not one of
    ``WRITE_EVENTS``, or its commit is not the repository's own."""
    name = event.name
    if name in _PULL_REQUEST_CODE:
        why = "it would write to the repository with a token while running the pull request's code"
    elif name == "workflow_run":
        why = (
            "the commit it is about (workflow_run.head_sha) is the triggering run's, which may be "
            "a fork pull request's head"
        )
    elif name == "issue_comment":
        why = "anyone who may comment starts it, and its pull request's code is not the repository's"
    elif name not in WRITE_EVENTS:
        why = f"{name!r} is not an event that runs a commit of the repository itself" if name else "no event named"
    elif event.head_repository.lower() != event.repository.lower() or not event.head_sha.strip("0"):
        # push, schedule and workflow_dispatch run the repository's own commit; a payload that
        # says otherwise (a deleted branch's push: after is all zeros) has no commit to build on.
        why = "its commit is not one of the repository's own"
    else:
        return ""
    return f"{why}; run it on {', '.join(WRITE_EVENTS[:-1])} or {WRITE_EVENTS[-1]}"


def read_event(environ: Mapping[str, str]) -> Event:
    """The event from ``GITHUB_EVENT_NAME`` and ``GITHUB_EVENT_PATH``; an empty event when run
    outside GitHub. Raises ConfigError when the payload file exists but cannot be read."""
    name = environ.get("GITHUB_EVENT_NAME", "")
    repository = environ.get("GITHUB_REPOSITORY", "")
    sha = environ.get("GITHUB_SHA", "")
    path = environ.get("GITHUB_EVENT_PATH", "")
    payload = load_payload(path) if path else {}
    return event_from_payload(name, payload, repository=repository, sha=sha)


def load_payload(path: str) -> JSONObject:
    """The decoded event JSON. Raises ConfigError naming the file."""
    return read_json_object(path, "event payload", MAX_EVENT_BYTES)


def event_from_payload(name: str, payload: Mapping[str, JSON], *, repository: str = "", sha: str = "") -> Event:
    """Pick what we need out of a payload of any event; missing keys give empty values."""
    repository = _str(_get(payload, "repository", "full_name")) or repository
    if name in PULL_REQUEST_EVENTS or "pull_request" in payload:
        pr = payload.get("pull_request")
        if isinstance(pr, Mapping):
            head_repo = _str(_get(pr, "head", "repo", "full_name"))
            base_repo = _str(_get(pr, "base", "repo", "full_name")) or repository
            # A deleted head repository (head.repo null) can only have been a fork.
            fork = not head_repo or head_repo.lower() != base_repo.lower() or _get(pr, "head", "repo", "fork") is True
            return Event(
                name=name,
                repository=repository,
                pr_number=_int(pr.get("number")) or _int(payload.get("number")),
                head_sha=_str(_get(pr, "head", "sha")) or sha,
                head_ref=_str(_get(pr, "head", "ref")),
                head_repository=head_repo,
                is_fork=fork,
                base_sha=_str(_get(pr, "base", "sha")),
            )
    if name == "workflow_run":
        run = payload.get("workflow_run")
        if isinstance(run, Mapping):
            wr = WorkflowRun(
                id=_int(run.get("id")) or 0,
                event=_str(run.get("event")),
                head_sha=_str(run.get("head_sha")),
                head_branch=_str(run.get("head_branch")),
                head_repository=_str(_get(run, "head_repository", "full_name")),
            )
            return Event(
                name=name,
                repository=repository,
                head_sha=wr.head_sha,
                head_ref=wr.head_branch,
                head_repository=wr.head_repository,
                is_fork=bool(wr.head_repository) and wr.head_repository.lower() != repository.lower(),
                workflow_run=wr,
            )
    if name == "push":
        return Event(
            name=name,
            repository=repository,
            head_sha=_str(payload.get("after")) or sha,
            head_ref=_str(payload.get("ref")).removeprefix("refs/heads/"),
            head_repository=repository,
        )
    # workflow_dispatch, schedule and the rest: the commit the workflow runs on.
    return Event(
        name=name,
        repository=repository,
        head_sha=sha,
        head_ref=_str(payload.get("ref")).removeprefix("refs/heads/"),
        head_repository=repository,
    )


def _get(obj: JSON, *keys: str) -> JSON:
    for key in keys:
        if not isinstance(obj, Mapping):
            return None
        obj = obj.get(key)
    return obj


def _str(value: JSON) -> str:
    return value if isinstance(value, str) else ""


def _int(value: JSON) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return None
