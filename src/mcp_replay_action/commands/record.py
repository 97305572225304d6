"""``mcp-replay record``: a transparent recording proxy."""

from __future__ import annotations

import sys

import click

from mcp_replay_action.cli import handle_errors, short_help
from mcp_replay_action.commands.common import (
    check_outputs,
    cwd_option,
    env_option,
    env_public_option,
    env_values,
    isolate_option,
    make_redactor,
    max_message_option,
    no_thread_option,
    parse_listen,
    redact_option,
    redact_pattern_option,
    server_option,
    thread_option,
    thread_rules,
    url_option,
)
from mcp_replay_action.errors import CassetteError, ConfigError, ServerStartError
from mcp_replay_action.options import parse_env

# The proxy reads the client's messages on stdin: typed at a prompt, it waits with nothing to say.
WAITING_ON_A_TERMINAL = (
    "record waits for an MCP client on stdin (JSON-RPC, one message a line), and this is a terminal. "
    "It is a proxy: an MCP client starts 'mcp-replay record --server ... --cassette ...' in place of your "
    "server and drives the session. For a client in a few lines (the MCP Inspector CLI, a Python or "
    "TypeScript SDK client), see docs/recording.md "
    "(https://github.com/mcp-replay/mcp-replay-action/blob/main/docs/recording.md#2-a-python-sdk-client); "
    "for a cassette with no client, 'mcp-replay explore'. Ctrl-D ends this session."
)


@click.command(short_help=short_help("record"))
@server_option
@url_option
@click.option("--listen", metavar="HOST:PORT", help="With --url: where the recording HTTP proxy listens.")
@click.option("--cassette", required=True, type=click.Path(dir_okay=False), help="Cassette file to write.")
@cwd_option
@env_option
@env_public_option
@isolate_option
@max_message_option
@redact_option
@redact_pattern_option
@click.option("--no-default-redaction", is_flag=True, help="Only redact what --redact/--redact-pattern name.")
@click.option(
    "--redact-env",
    "redact_env",
    multiple=True,
    metavar="VAR",
    help="Redact the value of environment variable VAR wherever it appears (repeatable; the header keeps "
    "only the name, and replay redacts the live value the same way).",
)
@thread_option
@no_thread_option
@handle_errors
def record(
    server: str | None,
    url: str | None,
    listen: str | None,
    cassette: str,
    cwd: str | None,
    env: tuple[str, ...],
    env_public: tuple[str, ...],
    isolate: bool,
    max_message: int,
    redact_keys: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    no_default_redaction: bool,
    redact_env: tuple[str, ...],
    thread: tuple[str, ...],
    no_thread: tuple[str, ...],
) -> None:
    """Record a session: a transparent proxy between a real client and a real server.

    stdio: point your MCP client at 'mcp-replay record --server CMD --cassette FILE' in place of
    the server. HTTP: '--url UPSTREAM --listen 127.0.0.1:PORT' and point the client at the proxy.
    """
    check_outputs(cassette=cassette)
    if listen:
        parse_listen(listen)
    rules = thread_rules(thread, no_thread)
    redactor = make_redactor(redact_keys, redact_patterns, not no_default_redaction)
    if redact_env:
        redactor = redactor.with_env_values(env_values(redact_env, parse_env(env)))
    if url:
        from mcp_replay_action.record.http_proxy import record_http

        host, port = parse_listen(listen or "127.0.0.1:5555")
        record_http(url, host, port, cassette, redactor=redactor, max_message=max_message, thread_rules=rules)
        return
    if not server:
        raise ConfigError("record needs --server CMD (stdio) or --url URL (HTTP)")
    from mcp_replay_action.record.stdio_proxy import record_stdio
    from mcp_replay_action.redact import env_secrets
    from mcp_replay_action.transport.httpd import log

    if sys.stdin.isatty():  # typed in a terminal: say what it waits for, or it looks hung
        log(WAITING_ON_A_TERMINAL)
    server_env = parse_env(env)
    # What the server is given in its environment is secret in its words too (the error below).
    redactor = redactor.with_env_values(env_secrets(server_env, env_public))
    summary = record_stdio(
        server,
        cassette,
        redactor=redactor,
        cwd=cwd,
        env=server_env,
        public_env=env_public,
        isolate=isolate,
        max_message=max_message,
        thread_rules=rules,
        # On stderr (stdout is the client's channel to the server), as soon as the session ends:
        # a client's shutdown may kill us while the server takes its time to stop.
        announce=log,
    )
    if summary.write_error:
        raise CassetteError(cassette, None, f"cannot write the cassette: {summary.write_error}")
    if not summary.saved and summary.server_failure:
        # The server's own words pass the recording's redactor, like everything it recorded.
        raise ServerStartError(
            str(redactor.apply(summary.server_failure)), stderr_tail=str(redactor.apply(summary.stderr_tail))
        )
