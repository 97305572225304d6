"""The sticky pull-request comment: one per pull request and ``comment-id``, edited in place.

Our comment is the one that carries the hidden marker ``<!-- mcp-replay:<comment-id> -->`` AND
was written by us (the token's own login), searched across every page of comments: a marker
quoted by someone else is never edited. It is updated only when its body changed.

When the token may not write (a pull request from a fork gets a read-only token: 403 "Resource
not accessible by integration"), the JSON report and its metadata go to a file instead, and a
later ``workflow_run`` job (``mode: post-comment``) checks, through the API, that the pull request
number belongs to the run's head branch and commit, checks the report against its JSON Schema,
and renders the comment itself with the trusted template: it never posts text the untrusted run
wrote, and never runs PR code.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import asdict, dataclass, replace
from typing import Literal

from mcp_replay_action.cassette import atomic_write_text
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.github.client import Forbidden, GitHubClient, NotFound, Unprocessable
from mcp_replay_action.github.event import PULL_REQUEST_EVENTS, Event
from mcp_replay_action.github.settings import clean_comment_id
from mcp_replay_action.host.files import read_json_object
from mcp_replay_action.model import JSON, JSONObject

BOT_LOGIN = "github-actions[bot]"
MAX_COMMENT_CHARS = 65536
COMMENT_FILE_SCHEMA = "mcp-replay/comment@2"  # @2: the report, not a rendered body
MAX_COMMENT_FILE_BYTES = 8 * 1024 * 1024


def marker(comment_id: str) -> str:
    """The hidden line that identifies our comment for ``comment_id``."""
    return f"<!-- mcp-replay:{comment_id} -->"


@dataclass(frozen=True)
class Posted:
    """What happened to the sticky comment."""

    id: int
    url: str
    action: Literal["created", "updated", "unchanged"]


@dataclass(frozen=True)
class SavedComment:
    """A comment that could not be posted, with what is needed to post it later."""

    repository: str
    pr_number: int
    head_sha: str
    comment_id: str
    report: JSONObject  # the JSON report (``report.json_report.to_dict``), rendered by the trusted job
    run_id: str = ""
    schema: str = COMMENT_FILE_SCHEMA


def my_login(gh: GitHubClient) -> str:
    """The login comments made with this token show. The job token (an app installation token)
    may not read ``/user``; its comments are by ``github-actions[bot]``."""
    try:
        data = gh.get("user")
    except (Forbidden, NotFound):
        return BOT_LOGIN
    login = data.get("login") if isinstance(data, dict) else None
    return login if isinstance(login, str) and login else BOT_LOGIN


def find_comment(gh: GitHubClient, repo: str, pr_number: int, comment_id: str, login: str) -> JSONObject | None:
    """Our earlier comment on the pull request (marker and author both match), oldest first."""
    mark = marker(comment_id)
    return next((c for c in gh.paginate(f"repos/{repo}/issues/{pr_number}/comments") if is_ours(c, mark, login)), None)


def is_ours(item: JSON, mark: str, login: str) -> bool:
    """Whether a comment or issue from the API is ours: written by ``login`` and carrying ``mark``
    (a marker quoted by someone else is never taken for ours)."""
    if not isinstance(item, dict):
        return False
    body = item.get("body") or ""
    return (item.get("user") or {}).get("login") == login and isinstance(body, str) and mark in body


def upsert_comment(
    gh: GitHubClient,
    repo: str,
    pr_number: int,
    body: str,
    comment_id: str,
    *,
    login: str | None = None,
    fallback: str | None = None,
    create: bool = True,
) -> Posted | None:
    """Create our sticky comment, or edit it when its body changed.

    ``body`` must already carry the marker. When GitHub refuses the body (422, too long by its
    count) and a shorter ``fallback`` is given, that is sent instead. With ``create=False`` only an
    existing comment is refreshed (None when there is none). Raises ``Forbidden`` for a read-only
    token.
    """
    mark = marker(comment_id)
    if mark not in body:
        raise ValueError("the comment body must contain its marker")
    login = login or my_login(gh)
    existing = find_comment(gh, repo, pr_number, comment_id, login)
    if existing is None and not create:
        return None
    try:
        return _write(gh, repo, pr_number, body, existing)
    except Unprocessable:
        if fallback is None or mark not in fallback:
            raise
        return _write(gh, repo, pr_number, fallback, existing)


def _write(gh: GitHubClient, repo: str, pr_number: int, body: str, existing: JSONObject | None) -> Posted:
    if existing is not None:
        comment_id = int(existing["id"])
        url = str(existing.get("html_url", ""))
        if same_body(existing.get("body") or "", body):
            return Posted(comment_id, url, "unchanged")
        data = gh.patch(f"repos/{repo}/issues/comments/{comment_id}", {"body": body})
        return Posted(comment_id, str(data.get("html_url", url)), "updated")
    data = gh.post(f"repos/{repo}/issues/{pr_number}/comments", {"body": body})
    return Posted(int(data["id"]), str(data.get("html_url", "")), "created")


def same_body(old: str, new: str) -> bool:
    """Whether an issue or comment body we read back equals the one we would write."""
    # GitHub may store CRLF for a body sent with LF; that is no change worth an edit.
    return old.replace("\r\n", "\n").rstrip() == new.replace("\r\n", "\n").rstrip()


# -- the comment file (pull requests from forks) ------------------------------------------------


def save_comment_file(path: str | os.PathLike[str], saved: SavedComment) -> None:
    """Write the report and its metadata as JSON, atomically. A report too large for the
    post-comment job's cap loses its findings' values and diffs (the comment then shows less
    detail) rather than the whole comment."""
    text = json.dumps(asdict(saved), indent=2, ensure_ascii=False) + "\n"
    if len(text.encode("utf-8")) > MAX_COMMENT_FILE_BYTES:
        text = json.dumps(asdict(replace(saved, report=slim_report(saved.report))), ensure_ascii=False) + "\n"
    atomic_write_text(path, text)


def slim_report(report: JSONObject) -> JSONObject:
    """The JSON report without the bulky parts: findings' before/after values and diffs, and
    stderr tails."""
    out = copy.deepcopy(report)
    for cassette in out.get("cassettes") or ():
        cassette["stderr_tail"] = ""
        for interaction in cassette.get("interactions") or ():
            for finding in interaction.get("findings") or ():
                finding.update(before=None, after=None, diff="")
    return out


def load_comment_file(path: str | os.PathLike[str]) -> SavedComment:
    """Read a comment file written by ``save_comment_file``. It may come from a fork's run, so
    every field is checked; raises ConfigError naming the file."""
    where = str(path)
    missing = "no comment file (did the replay job upload it as an artifact?)"
    doc = read_json_object(where, "comment file", MAX_COMMENT_FILE_BYTES, missing=missing)
    if doc.get("schema") != COMMENT_FILE_SCHEMA:
        raise ConfigError(f"{where}: not a comment file (expected schema {COMMENT_FILE_SCHEMA!r})")
    number = doc.get("pr_number")
    if not isinstance(number, int) or isinstance(number, bool) or number <= 0:
        raise ConfigError(f"{where}: pr_number must be a positive integer")
    fields = {k: doc.get(k) for k in ("repository", "head_sha", "comment_id", "run_id")}
    for key, value in fields.items():
        if not isinstance(value, str) or len(value) > 200:
            raise ConfigError(f"{where}: {key} must be a string of at most 200 characters")
    report = doc.get("report")
    if not isinstance(report, dict):
        raise ConfigError(f"{where}: report must be a JSON object (the JSON report)")
    try:
        comment_id = clean_comment_id(str(fields["comment_id"]))
    except ConfigError:
        raise ConfigError(f"{where}: comment_id is not a valid comment-id") from None
    return SavedComment(
        repository=str(fields["repository"]),
        pr_number=number,
        head_sha=str(fields["head_sha"]),
        comment_id=comment_id,
        report=report,
        run_id=str(fields["run_id"]),
    )


@dataclass(frozen=True)
class Verification:
    """Whether a saved comment may be posted, and why not."""

    ok: bool
    reason: str = ""


def verify_saved_comment(gh: GitHubClient, repo: str, event: Event, saved: SavedComment) -> Verification:
    """Check, through the API, that the saved comment's pull request is the one the triggering
    run was about: the run is a pull request run, and the pull request's head commit and branch
    (and head repository) are the run's. Raises ConfigError outside a ``workflow_run`` job."""
    if event.name != "workflow_run" or event.workflow_run is None:
        raise ConfigError(f"input mode: post-comment runs in a workflow_run job, not on {event.name or 'this event'!r}")
    run = gh.get(f"repos/{repo}/actions/runs/{event.workflow_run.id}")
    if not isinstance(run, dict):
        return Verification(False, "the API returned no workflow run")
    if run.get("event") not in PULL_REQUEST_EVENTS:
        return Verification(False, f"the triggering run was for {run.get('event')!r}, not a pull request")
    run_sha = run.get("head_sha")
    run_branch = run.get("head_branch")
    run_repo = (run.get("head_repository") or {}).get("full_name")
    numbers = [p.get("number") for p in run.get("pull_requests") or () if isinstance(p, dict)]
    if numbers and saved.pr_number not in numbers:
        return Verification(False, f"pull request #{saved.pr_number} is not one of the run's ({numbers})")
    if saved.head_sha and saved.head_sha != run_sha:
        return Verification(False, "the comment file was made for another commit than the run's")
    try:
        pull = gh.get(f"repos/{repo}/pulls/{saved.pr_number}")
    except NotFound:
        return Verification(False, f"pull request #{saved.pr_number} does not exist")
    head = (pull.get("head") or {}) if isinstance(pull, dict) else {}
    if head.get("sha") != run_sha:
        return Verification(
            False,
            f"pull request #{saved.pr_number} head is now {str(head.get('sha'))[:12]}, the run was for "
            f"{str(run_sha)[:12]} (a newer run will comment)",
        )
    if head.get("ref") != run_branch:
        return Verification(False, f"pull request #{saved.pr_number} head branch is not the run's")
    head_repo = (head.get("repo") or {}).get("full_name")
    if run_repo and head_repo and head_repo != run_repo:
        return Verification(False, f"pull request #{saved.pr_number} comes from another repository than the run")
    return Verification(True)
