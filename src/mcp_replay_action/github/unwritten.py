"""What the warning says when the sticky comment could not be written: the advice that fits the
cause, since each has its own fix and the fork recipe fixes only one of them.

- no token (the ``github-token`` input empty): give the action one;
- a read-only token on a pull request from a fork: the saved comment file and a ``workflow_run``
  job with ``mode: post-comment`` (docs/examples/mcp-replay-comment.yml);
- a 403 on the repository's own pull request: the job's token lacks ``pull-requests: write``;
- the API not reached at all: nothing to change in the workflow, re-run the job;
- any other API error: its one line, and a re-run.

The replay's verdict stands in every case: this is a warning, never the run's outcome.
"""

from __future__ import annotations

from mcp_replay_action.github.client import Forbidden, GitHubError, Unreachable


def unwritten_advice(exc: GitHubError | None, *, fork: bool, saved_to: str, docs: str) -> str:
    """The warning for a comment not written because of ``exc`` (None: there was no token), on a
    pull request from a fork or not. ``saved_to`` is the comment file it was saved to ("" when
    none was); ``docs`` is where the README explains pull requests from forks."""
    saved = f" The report was saved to {saved_to}." if saved_to else ""
    if fork and (exc is None or isinstance(exc, Forbidden)):
        where = f"It was saved to {saved_to}: upload" if saved_to else "Upload the comment file"
        return (
            "Cannot write the PR comment (this pull request comes from a fork, whose token is read-only). "
            f"{where} it as an artifact and post it from a workflow_run job with mode: post-comment. See {docs}"
        )
    if exc is None:
        return (
            "No github-token: the PR comment was not posted. The input defaults to the job's token "
            "(${{ github.token }}); leave it unset, or pass a token that may write pull requests, and give "
            f"the job permissions: pull-requests: write.{saved}"
        )
    if isinstance(exc, Forbidden):
        return (
            f"Cannot write the PR comment ({exc.api_message}): the token may not write to this pull "
            "request. Give the job permissions: pull-requests: write (and, if the repository's Settings > "
            f"Actions > Workflow permissions are read-only, a permissions: block in the workflow).{saved}"
        )
    if isinstance(exc, Unreachable):
        return (
            f"Cannot write the PR comment: {exc.one_line()}. Nothing in the workflow needs changing: "
            f"re-run the job when the API answers (check api-url if it is set).{saved}"
        )
    return f"Cannot write the PR comment: {exc.one_line()}. Re-run the job to post it.{saved}"
