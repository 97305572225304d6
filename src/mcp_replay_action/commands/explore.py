"""``mcp-replay explore``: write a cassette by exploring a server, no client needed."""

from __future__ import annotations

from typing import Any

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import (
    F,
    check_outputs,
    cwd_option,
    env_option,
    env_public_option,
    isolate_option,
    make_redactor,
    redact_option,
    redact_pattern_option,
    server_option,
    url_option,
)
from mcp_replay_action.explore.explorer import ERAS, ExploreOptions
from mcp_replay_action.options import from_flags, shared_option


def explore_options(func: F) -> F:
    """What may be called, and how long each call may take: ``explore`` and ``compare-builds``."""
    for option in reversed(
        (
            click.option(
                "--call",
                "calls",
                multiple=True,
                metavar="TOOL",
                help="Call TOOL too, whatever its annotations say (repeatable).",
            ),
            click.option(
                "--read",
                "reads",
                multiple=True,
                metavar="URI",
                help="Read URI too (a resource template's; repeatable).",
            ),
            click.option("--allow-writes", is_flag=True, help="Call every tool, not only the ones marked read-only."),
            click.option(
                "--max-calls",
                type=click.IntRange(min=0),
                default=100,
                show_default=True,
                help="Tool calls, prompt gets and resource reads in all.",
            ),
            click.option(
                "--era",
                "open_era",  # not the table's ``era`` (replay's --era): this one opens the exploration
                type=click.Choice(ERAS),
                default="auto",
                show_default=True,
                help="Protocol era to open the session in (auto: initialize, else server/discover).",
            ),
            shared_option("timeout"),
            shared_option("startup_timeout"),
        )
    ):
        func = option(func)
    return func


def options_from(params: dict[str, Any]) -> ExploreOptions:
    """The ``ExploreOptions`` of ``explore_options``' parsed flags."""
    return ExploreOptions(
        calls=tuple(params["calls"]),
        reads=tuple(params["reads"]),
        allow_writes=bool(params["allow_writes"]),
        max_calls=int(params["max_calls"]),
        timeout=float(params["timeout"]),
        era=str(params["open_era"]),
    )


@click.command(short_help=short_help("explore"))
@server_option
@url_option
@shared_option("headers")
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette file to write.")
@cwd_option
@env_option
@env_public_option
@isolate_option
@explore_options
@redact_option
@redact_pattern_option
@handle_errors
def explore(cassette: str, redact_keys: tuple[str, ...], redact_patterns: tuple[str, ...], **params: Any) -> None:
    """Write a cassette by exploring a server: every list, each resource read, each prompt got, and
    each tool marked read-only called once with arguments made from its input schema (see
    docs/baseline.md). Tools not marked read-only are named, not called, unless --call or
    --allow-writes says so. Two explores of one build send the same requests."""
    from mcp_replay_action.cassette import save
    from mcp_replay_action.explore.explorer import explore as run_explore
    from mcp_replay_action.explore.explorer import skipped_lines
    from mcp_replay_action.options import target_from
    from mcp_replay_action.redact import env_secrets
    from mcp_replay_action.values.safe import visible

    check_outputs(cassette=cassette)
    target = target_from(from_flags(params), command="explore")
    redactor = make_redactor(redact_keys, redact_patterns)
    redactor = redactor.with_env_values(env_secrets(dict(target.env), params["env_public"]))
    explored = run_explore(target, options_from(params), redactor=redactor)
    save(explored.cassette, cassette)
    # On stderr, like record's line: what was not asked for, and why (server names, redacted).
    for line in skipped_lines(explored.skipped):
        click.echo(f"skipped {visible(line)}", err=True)
    click.echo(f"{explored.line}: {cassette}", err=True)
