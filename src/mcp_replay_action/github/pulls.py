"""Pull requests and issues the action opens: the refresh pull request (one per head branch,
updated in place) and the drift issue (one per marker, like the sticky comment), with labels.

A 403 names what is missing: ``pull-requests: write``, ``issues: write``, or, when GitHub says
"GitHub Actions is not permitted to create or approve pull requests", the repository setting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from mcp_replay_action.github.client import Forbidden, GitHubClient, MissingPermission
from mcp_replay_action.github.comment import is_ours, same_body
from mcp_replay_action.github.gitdata import needs
from mcp_replay_action.model import JSONObject

PULLS_WRITE = "`pull-requests: write` in the workflow's `permissions:`"
ISSUES_WRITE = "`issues: write` in the workflow's `permissions:`"
ALLOW_PRS_SETTING = (
    'the repository setting "Allow GitHub Actions to create and approve pull requests" '
    "(Settings > Actions > General > Workflow permissions)"
)


@dataclass(frozen=True)
class Opened:
    """A pull request or issue we wrote, and what happened to it."""

    number: int
    url: str
    action: Literal["created", "updated", "unchanged", "closed"]


def find_open_pull(gh: GitHubClient, repo: str, branch: str) -> JSONObject | None:
    """The open pull request whose head is ``branch`` of this repository, or None."""
    owner = repo.split("/", 1)[0]
    for pull in gh.paginate(f"repos/{repo}/pulls", {"state": "open", "head": f"{owner}:{branch}"}):
        head = pull.get("head") or {} if isinstance(pull, dict) else {}
        if head.get("ref") == branch and (head.get("repo") or {}).get("full_name", repo) == repo:
            return pull  # type: ignore[no-any-return]
    return None


def upsert_pull(
    gh: GitHubClient,
    repo: str,
    *,
    head: str,
    base: str,
    title: str,
    body: str,
    draft: bool = False,
    labels: Sequence[str] = (),
) -> Opened:
    """Open a pull request from ``head`` into ``base``, or update the open one (title and body)."""
    existing = find_open_pull(gh, repo, head)
    with needs(PULLS_WRITE):
        if existing is not None:
            number = int(existing["number"])
            url = str(existing.get("html_url", ""))
            if existing.get("title") == title and same_body(existing.get("body") or "", body):
                opened = Opened(number, url, "unchanged")
            else:
                data = gh.patch(f"repos/{repo}/pulls/{number}", {"title": title, "body": body})
                opened = Opened(number, str(data.get("html_url", url)), "updated")
        else:
            try:
                data = gh.post(
                    f"repos/{repo}/pulls", {"title": title, "head": head, "base": base, "body": body, "draft": draft}
                )
            except Forbidden as exc:
                if "not permitted to create" in exc.api_message:
                    raise MissingPermission(exc, ALLOW_PRS_SETTING) from None
                raise
            opened = Opened(int(data["number"]), str(data.get("html_url", "")), "created")
    if labels:
        add_labels(gh, repo, opened.number, labels)
    return opened


def add_labels(gh: GitHubClient, repo: str, number: int, labels: Sequence[str]) -> None:
    """Add labels to a pull request or issue (GitHub creates a label that does not exist yet)."""
    with needs(f"{PULLS_WRITE} (or `issues: write`)"):
        gh.post(f"repos/{repo}/issues/{number}/labels", {"labels": list(labels)})


def find_issue(gh: GitHubClient, repo: str, marker: str, login: str) -> JSONObject | None:
    """Our open issue carrying ``marker`` (written by ``login``; pull requests are skipped)."""
    # No ``creator`` filter: how GitHub spells a bot there (``github-actions[bot]`` or
    # ``app/github-actions``) is not something to bet one issue per run on; the author is
    # checked on each item instead.
    found = gh.paginate(f"repos/{repo}/issues", {"state": "open"})
    return next((i for i in found if is_ours(i, marker, login) and "pull_request" not in i), None)


def upsert_issue(
    gh: GitHubClient, repo: str, *, marker: str, login: str, title: str, body: str, labels: Sequence[str] = ()
) -> Opened:
    """Open our marked issue, or update the open one when its title or body changed."""
    if marker not in body:
        raise ValueError("the issue body must contain its marker")
    existing = find_issue(gh, repo, marker, login)
    with needs(ISSUES_WRITE):
        if existing is None:
            payload: JSONObject = {"title": title, "body": body}
            if labels:
                payload["labels"] = list(labels)
            data = gh.post(f"repos/{repo}/issues", payload)
            return Opened(int(data["number"]), str(data.get("html_url", "")), "created")
        number = int(existing["number"])
        url = str(existing.get("html_url", ""))
        if existing.get("title") == title and same_body(existing.get("body") or "", body):
            return Opened(number, url, "unchanged")
        data = gh.patch(f"repos/{repo}/issues/{number}", {"title": title, "body": body})
        return Opened(number, str(data.get("html_url", url)), "updated")


def close_issue(gh: GitHubClient, repo: str, *, marker: str, login: str, comment: str) -> Opened | None:
    """Close our open marked issue with a last comment; None when there is none."""
    existing = find_issue(gh, repo, marker, login)
    if existing is None:
        return None
    number = int(existing["number"])
    with needs(ISSUES_WRITE):
        gh.post(f"repos/{repo}/issues/{number}/comments", {"body": comment})
        data = gh.patch(f"repos/{repo}/issues/{number}", {"state": "closed", "state_reason": "completed"})
    return Opened(number, str(data.get("html_url", existing.get("html_url", ""))), "closed")
