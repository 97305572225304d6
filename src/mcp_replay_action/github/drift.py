"""The drift watch: on a ``schedule`` event there is no pull request to comment on, so a gating
failure opens one issue (found again by its hidden marker and author, like the sticky comment)
and later failures update it; the first clean scheduled replay closes it with a comment.

Users run it against third-party servers they depend on: the issue says what changed upstream,
and its body is the same safe Markdown as the PR comment, refresh link included.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_replay_action.github.client import GitHubClient
from mcp_replay_action.github.comment import my_login
from mcp_replay_action.github.pulls import Opened, close_issue, upsert_issue
from mcp_replay_action.github.template import Links, render_comment
from mcp_replay_action.model.results import Report
from mcp_replay_action.values.safe import md_cell

TITLE = "MCP replay: drift against the recorded cassettes"


def drift_marker(comment_id: str) -> str:
    """The hidden line that identifies our drift issue for ``comment_id``."""
    return f"<!-- mcp-replay-drift:{comment_id} -->"


def publish_drift(
    gh: GitHubClient,
    repo: str,
    report: Report,
    *,
    gate_passed: bool,
    comment_id: str,
    links: Links,
    labels: Sequence[str] = (),
) -> Opened | None:
    """Open or update the drift issue when the gate failed; close it when it passed. None when
    it passed and no issue was open."""
    mark = drift_marker(comment_id)
    login = my_login(gh)
    if gate_passed:
        run = f": [workflow run]({links.run_url})" if links.run_url else "."
        return close_issue(gh, repo, marker=mark, login=login, comment=f"The scheduled replay is clean again{run}")
    title = TITLE if comment_id == "default" else f"{TITLE} ({md_cell(comment_id, 64)})"
    body = render_comment(report, marker=mark, comment_id=comment_id, links=links)
    return upsert_issue(gh, repo, marker=mark, login=login, title=title, body=body, labels=labels)
