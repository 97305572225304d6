"""How to accept an intended change, as the failing comment and the job summary say it.

Two ways, both named in full so a reader can act without guessing:

- the refresh workflow, dispatched on the pull request's head branch. GitHub's "Run workflow"
  preselects the default branch, where a refresh finds nothing to change, so the branch to pick
  is named. A pull request from a fork has no branch here to dispatch on: only the local way.
- the local command, ``mcp-replay replay --server ... --cassette ... --update``, with this run's
  server, cassettes and comparison options, then a commit of the rewritten cassettes.

The command comes from the workflow's inputs, which may carry secrets (``--api-key ${{ secrets.X
}}`` is masked in the log, not in a comment): it is redacted like every target we show (the
command-line rules, the ``env`` input's values), the ``env`` values are left to the reader's shell
(``--env "NAME=$NAME"``), an HTTP URL loses its query, and the whole goes into a fenced code block,
where nothing is a link, a mention or markup.
"""

from __future__ import annotations

import shlex
import urllib.parse
from dataclasses import dataclass

from mcp_replay_action.github.event import Event
from mcp_replay_action.github.settings import RunContext, Settings
from mcp_replay_action.redact import Redactor
from mcp_replay_action.report import public_target


@dataclass(frozen=True)
class Accept:
    """What the "what to do" line names: where to dispatch the refresh, on which branch, and the
    local command. Plain text; the template escapes it."""

    workflow_url: str = ""  # the refresh workflow's page; empty when the runner did not say
    branch: str = ""  # the branch to pick under "Use workflow from"; empty when there is none here
    command: str = ""  # the local command (redacted, shell-quoted)
    fork: bool = False  # the pull request's branch lives in a fork: no refresh from here


def accept_for(settings: Settings, context: RunContext, event: Event) -> Accept:
    """How this run's change is accepted: the refresh workflow on the pull request's head branch
    (not for a fork's), and the local ``--update`` command."""
    url = context.workflow_url(settings.refresh_workflow)
    branch = "" if event.is_fork else event.head_ref
    return Accept(
        workflow_url="" if event.is_fork else url,
        branch=branch,
        command=local_command(settings),
        fork=event.is_fork,
    )


def local_command(settings: Settings, *, update: bool = True) -> str:
    """``mcp-replay replay --server '...' --cassette '...' [...] --update``: this run, on a
    developer's machine from the repository's root, redacted and quoted for a POSIX shell. Empty
    when these settings name no server (a ``post-comment`` job): the comment then shows the
    command's shape instead. The server is never taken from a report, which a fork's run wrote."""
    if not (settings.server or settings.url):
        return ""
    redactor = Redactor(env_values=dict(settings.env))
    words = ["mcp-replay", "replay"]

    def shown(argv: tuple[str, ...]) -> str:
        return shlex.quote(redactor.apply(public_target(shlex.join(argv))))

    if settings.server:
        words += ["--server", shown(settings.server)]
    if settings.url:
        parts = urllib.parse.urlsplit(settings.url)
        bare = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        words += ["--url", shlex.quote(redactor.apply(public_target(bare)))]
    for pattern in settings.cassettes:
        words += ["--cassette", shlex.quote(pattern)]
    where = settings.relative(settings.working_directory)
    if where != ".":
        words += ["--cwd", shlex.quote(where)]
    for name, _ in settings.env:
        words += ["--env", f'"{name}=${name}"']  # the value from the reader's shell, never ours
    if settings.setup:
        words += ["--setup", shown(settings.setup)]
    if settings.reset:
        words += ["--reset", shown(settings.reset)]
    for path in settings.ignore_paths:
        words += ["--ignore-path", shlex.quote(path)]
    for key in settings.ignore_keys:
        words += ["--ignore-key", shlex.quote(key)]
    if settings.allow_reorder:
        words.append("--allow-reorder")
    if update:
        words.append("--update")
    return " ".join(words)
