"""How to accept an intended change, as the failing comment and the job summary say it.

Two ways, both named in full so a reader can act without guessing:

- the refresh workflow, dispatched on the pull request's head branch. GitHub's "Run workflow"
  preselects the default branch, where a refresh finds nothing to change, so the branch to pick
  is named. A pull request from a fork has no branch here to dispatch on: only the local way.
- the local command, ``mcp-replay replay --server ... --cassette ... --update``, with this run's
  server, cassettes and comparison options, then a commit of the rewritten cassettes
  (``accept_command.update_command``, which the CLI's reports name too).

The command comes from the workflow's inputs, which may carry secrets (``--api-key ${{ secrets.X
}}`` is masked in the log, not in a comment): it is redacted (``update_command`` says how), and
the whole goes into a fenced code block, where nothing is a link, a mention or markup.
"""

from __future__ import annotations

from dataclasses import dataclass

from mcp_replay_action.accept_command import update_command
from mcp_replay_action.github.event import Event
from mcp_replay_action.github.settings import RunContext, Settings


@dataclass(frozen=True)
class Accept:
    """What the "what to do" line names: where to dispatch the refresh, on which branch, and the
    local command. Plain text; the template escapes it."""

    workflow_url: str = ""  # the refresh workflow's page; empty when the runner did not say
    branch: str = ""  # the branch to pick under "Use workflow from"; empty when there is none here
    command: str = ""  # the local command (redacted, shell-quoted)
    fork: bool = False  # the pull request's branch lives in a fork: no refresh from here
    baseline: bool = False  # compared with a base build (input baseline): merging accepts that part


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
        baseline=bool(settings.baseline),
    )


def local_command(settings: Settings, *, update: bool = True) -> str:
    """``mcp-replay replay --server '...' --cassette '...' [...] --update``: this run, on a
    developer's machine from the repository's root, redacted and quoted for a POSIX shell. Empty
    when these settings name no server (a ``post-comment`` job): the comment then shows the
    command's shape instead. The server is never taken from a report, which a fork's run wrote."""
    return update_command(
        server=settings.server,
        url=settings.url,
        cassettes=settings.cassettes,
        cwd=settings.relative(settings.working_directory),
        env=settings.env,
        setup=settings.setup,
        reset=settings.reset,
        ignore_paths=settings.ignore_paths,
        ignore_keys=settings.ignore_keys,
        ignore_notifications=settings.ignore_notifications,
        allow_reorder=settings.allow_reorder,
        update=update,
    )
