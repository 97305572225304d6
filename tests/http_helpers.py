"""Helpers for the HTTP tests: real MCP servers over Streamable HTTP on 127.0.0.1, the CLI's
recording proxy and mock server as subprocesses, and an SDK client session to drive them.

Every server runs in its own process group and is stopped by pid; every wait is bounded.
"""

from __future__ import annotations

import itertools
import os
import random
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


def _port_block() -> range:
    """The ports this process hands out: below the kernel's ephemeral range, so no outgoing
    connection of any process takes one between the probe and the server's bind (the race of
    asking the kernel for a free port, closing it and starting a server on it), and one block per
    pytest-xdist worker, so two workers never hand out the same port."""
    try:
        ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768  # Linux's default start
    low = 10_000
    if ephemeral - low < 2_000:  # an unusual range starts low: share the space above it
        low, ephemeral = 40_000, 60_000
    workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0) % workers
    size = (ephemeral - low) // workers
    return range(low + worker * size, low + (worker + 1) * size)


_PORTS = _port_block()
# From a random place in the block: another test run on the machine (another worktree's, or the
# nested one tests/act/ci-job.sh starts) starts somewhere else in the same block.
_next_port = itertools.count(random.randrange(len(_PORTS)))
_handed: set[int] = set()


def free_port() -> int:
    """A port on 127.0.0.1 for a server that cannot report its own: free when probed, from this
    process's block (``_port_block``), never handed out twice by this process."""
    for _ in range(len(_PORTS)):
        port = _PORTS[next(_next_port) % len(_PORTS)]
        if port in _handed:
            continue
        with socket.socket() as probe:  # no SO_REUSEADDR: a port still in TIME_WAIT is skipped too
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed.add(port)
        return port
    raise RuntimeError(f"no free port left in {_PORTS}")


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
