"""The local command that accepts a run's changes, in the tool's own words: ``mcp-replay replay
--server '...' --cassette '...' [...] --update``, this run's server, cassettes and comparison
options. The CLI's console and Markdown report, the action's comment and summary
(``github/accept.py``) name it; the pytest plugin names its own (``--mcp-replay-update``).

The options may carry secrets (``--server 'srv --api-key s3cret'``, ``--env TOKEN=...``, a URL's
query): the command is redacted like every target we show (the command-line rules, the ``env``
values), the ``env`` values are left to the reader's shell (``--env "NAME=$NAME"``) and an HTTP
URL loses its query. It is plain text; each sink escapes it as its own.
"""

from __future__ import annotations

import shlex
import urllib.parse
from collections.abc import Sequence

from mcp_replay_action.redact import Redactor
from mcp_replay_action.report import public_target


def update_command(
    *,
    server: Sequence[str] = (),
    url: str | None = None,
    cassettes: Sequence[str] = (),
    cwd: str = ".",
    env: Sequence[tuple[str, str]] = (),
    setup: Sequence[str] = (),
    reset: Sequence[str] = (),
    ignore_paths: Sequence[str] = (),
    ignore_keys: Sequence[str] = (),
    ignore_notifications: Sequence[str] = (),
    allow_reorder: bool = False,
    update: bool = True,
) -> str:
    """``mcp-replay replay ... --update`` for these options (``update`` False: without it), or
    empty when they name no server."""
    if not (server or url):
        return ""
    redactor = Redactor(env_values=dict(env))
    words = ["mcp-replay", "replay"]

    def shown(argv: Sequence[str]) -> str:
        return shlex.quote(str(redactor.apply(public_target(shlex.join(argv)))))

    if server:
        words += ["--server", shown(server)]
    if url:
        parts = urllib.parse.urlsplit(url)
        bare = urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        words += ["--url", shlex.quote(str(redactor.apply(public_target(bare))))]
    for pattern in cassettes:
        words += ["--cassette", shlex.quote(pattern)]
    if cwd != ".":
        words += ["--cwd", shlex.quote(cwd)]
    for name, _ in env:
        words += ["--env", f'"{name}=${name}"']  # the value from the reader's shell, never ours
    if setup:
        words += ["--setup", shown(setup)]
    if reset:
        words += ["--reset", shown(reset)]
    for flag, values in (
        ("--ignore-path", ignore_paths),
        ("--ignore-key", ignore_keys),
        ("--ignore-notifications", ignore_notifications),
    ):
        for value in values:
            words += [flag, shlex.quote(value)]
    if allow_reorder:
        words.append("--allow-reorder")
    if update:
        words.append("--update")
    return " ".join(words)
