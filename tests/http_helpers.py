"""Helpers for the HTTP tests: real MCP servers over Streamable HTTP on 127.0.0.1, the CLI's
recording proxy and mock server as subprocesses, and an SDK client session to drive them.

Every server runs in its own process group and is stopped by pid; every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
from mcp import Client
from mcp.client.session import ElicitationFnT, ListRootsFnT, SamplingFnT

from mcp_replay_action.transport.http_client import wait_for_port
from mcp_replay_action.transport.process import spawn_server

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
FAKES = REPO / "tests" / "fakes"
NODE_BIN = REPO / "tests" / "servers" / "node_modules" / ".bin"
FAST_HTTP = FAKES / "http_fast_server.py"
FAST_STDIO = REPO / "tests" / "servers" / "fast_server.py"
EVERYTHING = NODE_BIN / "mcp-server-everything"
BIND_LOCALHOST = FAKES / "node_bind_localhost.cjs"
START_TIMEOUT = 30.0
SESSION_TIMEOUT = 60.0

Script = Callable[[Client], Awaitable[dict[str, Any]]]


def free_port() -> int:
    """A port that was free a moment ago on 127.0.0.1 (for servers that cannot report theirs)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(argv: list[str], url: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start a server command (own process group), wait until ``url`` accepts connections, yield
    the URL, and stop the whole group afterwards."""
    proc = spawn_server(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(url, START_TIMEOUT, alive=lambda: proc.popen.poll() is None)
        yield url
    finally:
        proc.stop()


def fast_http_command(port: int, *, json_response: bool = False) -> list[str]:
    return [PYTHON, str(FAST_HTTP), str(port), *(["--json"] if json_response else [])]


@contextmanager
def fast_http(*, json_response: bool = False) -> Iterator[str]:
    """The SDK (``MCPServer``/FastMCP) task-tracker test server over Streamable HTTP."""
    port = free_port()
    with running(fast_http_command(port, json_response=json_response), f"http://127.0.0.1:{port}/mcp") as url:
        yield url


def everything_env(port: int) -> dict[str, str]:
    return {"PORT": str(port), "NODE_OPTIONS": f"--require {BIND_LOCALHOST}"}


@contextmanager
def everything_http() -> Iterator[str]:
    """``@modelcontextprotocol/server-everything streamableHttp``, bound to 127.0.0.1."""
    port = free_port()
    argv = [str(EVERYTHING), "streamableHttp"]
    with running(argv, f"http://127.0.0.1:{port}/mcp", env=everything_env(port)) as url:
        yield url


def sdk_session(
    target: Any,
    script: Script,
    *,
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    roots: ListRootsFnT | None = None,
    timeout: float | None = None,
    sampling: SamplingFnT | None = None,
    log_level: Any = None,
) -> dict[str, Any]:
    """Run ``script`` in an official-SDK client session against ``target`` (a URL or stdio
    parameters), bounded in time; returns what the script returned. ``log_level``: the SDK's
    opt-in to the server's log messages (2026-07-28 sends none without it)."""

    async def session() -> dict[str, Any]:
        with anyio.fail_after(SESSION_TIMEOUT if timeout is None else timeout):
            async with Client(
                target,
                mode=mode,
                elicitation_callback=elicitation,
                list_roots_callback=roots,
                sampling_callback=sampling,
                read_timeout_seconds=30,
                log_level=log_level,
            ) as client:
                seen = await script(client)
                seen["protocol_version"] = client.protocol_version
                return seen

    return anyio.run(session)


@contextmanager
def cli_process(*args: str | Path, url: str) -> Iterator[subprocess.Popen[bytes]]:
    """``python -m mcp_replay_action ARGS`` as a long-running process (the proxy or the mock),
    ready once ``url`` accepts connections; stopped with SIGTERM (then SIGKILL) afterwards."""
    proc = subprocess.Popen(
        [PYTHON, "-m", "mcp_replay_action", *(str(a) for a in args)],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        wait_for_port(url, START_TIMEOUT, alive=lambda: proc.poll() is None)
        yield proc
    finally:
        stop_cli(proc)


def stop_cli(proc: subprocess.Popen[bytes], timeout: float = 15.0) -> int:
    """SIGTERM the process (as Ctrl-C would end it), wait bounded, SIGKILL its group if needed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
    return proc.returncode


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def record_via_cli(
    upstream: str,
    cassette: Path,
    script: Script,
    *,
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    roots: ListRootsFnT | None = None,
    extra: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Record one SDK session through ``mcp-replay record --url UPSTREAM --listen ...``, stopped
    with SIGTERM afterwards (as Ctrl-C would); returns what the script saw live."""
    port = free_port()
    proxy_url = f"http://127.0.0.1:{port}{urlsplit(upstream).path}"
    argv = ["record", "--url", upstream, "--listen", f"127.0.0.1:{port}", "--cassette", str(cassette), *extra]
    with cli_process(*argv, url=proxy_url) as proc:
        seen = sdk_session(proxy_url, script, mode=mode, elicitation=elicitation, roots=roots)
    err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    assert proc.returncode == 0, f"mcp-replay record exited {proc.returncode}: {err[-2000:]}"
    assert cassette.exists(), err[-2000:]
    return seen
