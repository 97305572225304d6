"""Event payloads shaped like the ones GitHub writes to GITHUB_EVENT_PATH (the fields the action
reads, plus enough around them to look real)."""

from __future__ import annotations

from typing import Any

REPO = "octo/demo"


def _repo(full_name: str, *, fork: bool = False) -> dict[str, Any]:
    owner, name = full_name.split("/")
    return {"full_name": full_name, "name": name, "owner": {"login": owner}, "fork": fork}


def pull_request(
    number: int = 7, sha: str = "a" * 40, *, head_repo: str = REPO, ref: str = "feature"
) -> dict[str, Any]:
    fork = head_repo != REPO
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "state": "open",
            "user": {"login": "contributor"},
            "head": {"sha": sha, "ref": ref, "repo": _repo(head_repo, fork=fork)},
            "base": {"sha": "0" * 40, "ref": "main", "repo": _repo(REPO)},
        },
        "repository": _repo(REPO),
        "sender": {"login": "contributor"},
    }


def fork_pull_request(number: int = 8, sha: str = "b" * 40) -> dict[str, Any]:
    return pull_request(number, sha, head_repo="stranger/demo", ref="patch-1")


def push(sha: str = "d" * 40) -> dict[str, Any]:
    return {"ref": "refs/heads/main", "before": "0" * 40, "after": sha, "repository": _repo(REPO)}


def workflow_dispatch() -> dict[str, Any]:
    return {"ref": "refs/heads/main", "inputs": {}, "repository": _repo(REPO)}


def workflow_run(
    run_id: int = 99,
    sha: str = "f" * 40,
    *,
    fork: bool = False,
    branch: str = "patch-1",
    pr_numbers: tuple[int, ...] = (),
) -> dict[str, Any]:
    head = "stranger/demo" if fork else REPO
    return {
        "action": "completed",
        "workflow_run": {
            "id": run_id,
            "event": "pull_request",
            "status": "completed",
            "conclusion": "success",
            "head_sha": sha,
            "head_branch": branch,
            "head_repository": _repo(head, fork=fork),
            "repository": _repo(REPO),
            "pull_requests": [{"number": n} for n in pr_numbers],
        },
        "repository": _repo(REPO),
    }


def schedule(cron: str = "17 6 * * *") -> dict[str, Any]:
    return {"schedule": cron, "repository": _repo(REPO)}


def pull_request_review(number: int = 7, sha: str = "a" * 40, *, head_repo: str = REPO) -> dict[str, Any]:
    payload = pull_request(number, sha, head_repo=head_repo)
    return {**payload, "action": "submitted", "review": {"id": 5, "state": "approved", "body": "lgtm"}}


def pull_request_review_comment(number: int = 7, sha: str = "a" * 40, *, head_repo: str = REPO) -> dict[str, Any]:
    payload = pull_request(number, sha, head_repo=head_repo)
    return {**payload, "action": "created", "comment": {"id": 6, "body": "nit", "path": "src/x.py"}}


def issue_comment(number: int = 7, body: str = "/refresh") -> dict[str, Any]:
    issue = {
        "number": number,
        "state": "open",
        "pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"},
    }
    return {"action": "created", "issue": issue, "comment": {"id": 9, "body": body}, "repository": _repo(REPO)}
