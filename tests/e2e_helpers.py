"""Helpers for the end-to-end tests: drive the real ``mcp-replay`` CLI in a subprocess, and record
real sessions through the real recording proxy with the official ``mcp`` SDK as the client.

The SDK's stdio client launches ``mcp-replay record --server CMD --cassette FILE`` exactly as it
would launch the server itself, so a recording here is what a user gets from Claude Desktop or the
inspector pointed at the proxy.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext, ElicitationFnT, ListRootsFnT, SamplingFnT
from mcp.client.stdio import StdioServerParameters
from pydantic import FileUrl

from http_helpers import sdk_session

REPO = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
VENV_BIN = Path(PYTHON).parent
MCP_REPLAY = VENV_BIN / "mcp-replay"  # the console script, as a user's MCP client config names it
SERVERS = REPO / "tests" / "servers"
NODE_BIN = SERVERS / "node_modules" / ".bin"
FAST_SERVER = SERVERS / "fast_server.py"

# Every CLI run is bounded: a hang in the tool under test fails the test instead of the suite.
CLI_TIMEOUT = 120.0
# Recording a whole session through the proxy, SDK start-up included.
RECORD_TIMEOUT = 90.0

Script = Callable[[Client], Awaitable[dict[str, Any]]]


def passed(interaction: dict[str, Any]) -> bool:
    """A clean interaction of a JSON report: it passed, or it is a refused ``server/discover``
    probe, which replay does not send (``protocol.refused_probes``) and reports as skipped."""
    probe = interaction["method"] == "server/discover" and interaction["status"] == "skipped"
    return interaction["status"] == "pass" or probe


def command(*argv: str | Path) -> str:
    """A server command line as ``--server`` takes it (quoted like a POSIX shell)."""
    return shlex.join(str(a) for a in argv)


def python_server(script: str | Path, *args: str) -> str:
    return command(PYTHON, script, *args)


@dataclass(frozen=True)
class CliRun:
    """One finished ``mcp-replay`` invocation."""

    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None  # the JSON report when ``--report`` was asked for and written
    strays: tuple[int, ...] = ()  # processes the run started that outlived it (killed since)

    def describe(self) -> str:
        """Everything needed to understand a failed assertion."""
        return (
            f"$ mcp-replay {shlex.join(self.args)}\nexit {self.code}\n"
            f"--- stdout ---\n{self.stdout[-6000:]}\n--- stderr ---\n{self.stderr[-4000:]}"
        )

    def findings(self) -> list[dict[str, Any]]:
        """Every finding of every interaction, each with its interaction's method and name added."""
        assert self.report is not None, self.describe()
        out = []
        for cassette in self.report["cassettes"]:
            for inter in cassette["interactions"]:
                for finding in inter["findings"]:
                    out.append({**finding, "method": inter["method"], "name": inter["name"], "seq": inter["seq"]})
        return out

    def interactions(self) -> list[dict[str, Any]]:
        assert self.report is not None, self.describe()
        return [i for c in self.report["cassettes"] for i in c["interactions"]]


def run_cli(
    *args: str | Path, timeout: float = CLI_TIMEOUT, report: Path | None = None, cwd: Path | None = None
) -> CliRun:
    """Run ``python -m mcp_replay_action ARGS`` to completion (bounded), capturing everything."""
    argv = [str(a) for a in args]
    if report is not None:
        argv += ["--report", str(report)]
    proc, strays = run_tagged([PYTHON, "-m", "mcp_replay_action", *argv], timeout, cwd or REPO)
    loaded = None
    if report is not None and report.exists():
        loaded = json.loads(report.read_text("utf-8"))
    run = CliRun(tuple(argv), proc.returncode, proc.stdout, proc.stderr, loaded, strays)
    assert not strays, f"server processes outlived mcp-replay: {strays}\n{run.describe()}"
    return run


def run_in_process(
    *args: str | Path, cwd: Path | None = None, umask: int | None = None
) -> subprocess.CompletedProcess[str]:
    """``mcp-replay ARGS`` run by click's test runner in this process, for what needs no process
    of its own (a usage error, help, a plan refused before anything starts): exit code, stdout
    and stderr as ``subprocess.run`` gives them, without an interpreter's start-up. An exception
    the CLI lets escape is raised here: the console script would have printed its traceback."""
    from click.testing import CliRunner

    from mcp_replay_action.cli import main

    argv = [str(a) for a in args]
    here = os.getcwd()
    mask = os.umask(umask) if umask is not None else None
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = CliRunner().invoke(main, argv, prog_name="mcp-replay")
    finally:
        os.chdir(here)
        if mask is not None:
            os.umask(mask)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return subprocess.CompletedProcess(["mcp-replay", *argv], result.exit_code, result.stdout, result.stderr)


# Servers inherit the caller's environment, so a tag in mcp-replay's environment marks every
# process a run started, however it was spawned (own process group, grandchildren).
TAG_VAR = "MCP_REPLAY_E2E_TAG"


def tagged_processes(tag: str) -> list[int]:
    """Live (non-zombie) processes whose environment carries ``tag``."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                if needle not in fh.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                    continue
        except OSError:
            continue
        found.append(int(entry))
    return found


def reap_strays(tag: str, grace: float = 3.0) -> tuple[int, ...]:
    """Processes tagged ``tag`` still alive ``grace`` seconds after the run ended; they are
    killed (by pid) so one leak cannot disturb the next test, and returned so the test fails."""
    deadline = time.monotonic() + grace
    while (alive := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return tuple(alive)


def run_tagged(
    argv: list[str], timeout: float, cwd: Path = REPO
) -> tuple[subprocess.CompletedProcess[str], tuple[int, ...]]:
    """Run ``argv`` to completion (bounded, no stdin, output captured) with every process it
    starts tagged, then the tagged processes still alive (``reap_strays``: killed)."""
    tag = uuid.uuid4().hex
    try:
        proc = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            env={**os.environ, TAG_VAR: tag},
        )
    finally:
        strays = reap_strays(tag)
    return proc, strays


def replay(
    server: str,
    cassette: Path,
    *extra: str,
    report: Path,
    gate: bool = True,
    timeout: float = CLI_TIMEOUT,
) -> CliRun:
    """``mcp-replay replay --server SERVER --cassette CASSETTE [gate] EXTRA --report REPORT``."""
    args: list[str] = ["replay", "--server", server, "--cassette", str(cassette)]
    if gate:
        args += ["--fail-on-regression", "--min-grade", "A"]
    args += list(extra)
    if report.exists():
        report.unlink()
    return run_cli(*args, report=report, timeout=timeout)


def record_through_proxy(
    server: str,
    cassette: Path,
    script: Script,
    *,
    proxy_args: Sequence[str] = (),
    mode: str = "auto",
    elicitation: ElicitationFnT | None = None,
    roots: ListRootsFnT | None = None,
    timeout: float = RECORD_TIMEOUT,
    sampling: SamplingFnT | None = None,
    log_level: Any = None,
) -> dict[str, Any]:
    """Record one session: the SDK client launches ``mcp-replay record`` in place of ``server``
    and ``script`` drives it. Returns what the script returned (values it saw live), after the
    proxy has exited and the cassette is on disk."""
    tag = uuid.uuid4().hex
    params = StdioServerParameters(
        command=str(MCP_REPLAY),
        args=["record", "--server", server, "--cassette", str(cassette), *proxy_args],
        cwd=str(REPO),
        env={TAG_VAR: tag},
    )

    try:
        seen = sdk_session(
            params,
            script,
            mode=mode,
            elicitation=elicitation,
            roots=roots,
            timeout=timeout,
            sampling=sampling,
            log_level=log_level,
        )
    finally:
        strays = reap_strays(tag)
    # The SDK closed the proxy's stdin and waited for it to exit (then killed it): by now the
    # proxy must have stopped the server and written the cassette.
    assert not strays, f"the recording proxy left processes behind: {strays}"
    assert cassette.exists(), f"the recording proxy wrote no cassette at {cassette}"
    return seen


def cassette_lines(path: Path) -> list[dict[str, Any]]:
    """The cassette's JSONL lines, parsed (line 1 is the header)."""
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def requests(path: Path, method: str | None = None) -> list[dict[str, Any]]:
    """The client requests recorded in a cassette (optionally of one method)."""
    out = []
    for entry in cassette_lines(path)[1:]:
        if entry.get("kind") == "request" and (method is None or entry["message"].get("method") == method):
            out.append(entry)
    return out


def tool_call(path: Path, tool: str) -> list[dict[str, Any]]:
    """The recorded ``tools/call`` interactions of one tool, in order."""
    return [e for e in requests(path, "tools/call") if e["message"]["params"]["name"] == tool]


# Client-side answers to server-to-client requests, as a user's client would give them.


async def accept_elicitation(context: ClientRequestContext, params: Any) -> types.ElicitResult:
    """Accept any elicitation, filling a boolean ``confirm`` or the first choice offered."""
    schema = getattr(params, "requested_schema", None) or {}
    content: dict[str, Any] = {}
    formats = {"email": "ada@example.com", "uri": "https://example.com/ada", "date": "1815-12-10"}
    for name, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            content[name] = prop["default"]
        elif prop.get("type") == "boolean":
            content[name] = True
        elif prop.get("enum"):
            content[name] = prop["enum"][0]
        elif prop.get("oneOf"):
            content[name] = prop["oneOf"][0].get("const", "")
        elif prop.get("type") in ("number", "integer"):
            content[name] = prop.get("minimum", 1)
        elif prop.get("type") == "string":
            content[name] = formats.get(prop.get("format", ""), "yes")
    return types.ElicitResult(action="accept", content=content)


def roots_for(*directories: Path) -> ListRootsFnT:
    async def list_roots(context: ClientRequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=FileUrl(d.resolve().as_uri()), name=d.name) for d in directories]
        )

    return list_roots


async def ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    """A progress callback: asking for progress makes the SDK send a ``progressToken``."""


def steady(value: Any) -> Any:
    """A JSON report without what differs between any two runs (timings, freshly minted values)."""
    if isinstance(value, dict):
        return {
            k: steady_noise(v) if k == "noise" else steady(v)
            for k, v in value.items()
            if k not in ("latency_ms", "duration_s", "live")
        }
    if isinstance(value, list):
        return [steady(v) for v in value]
    return value


def steady_noise(noise: Any, each: Callable[[Any], Any] = steady) -> Any:
    """A result's noise without its live values (each item through ``each``): a value minted
    afresh by each start (a job id the confirmation pass settled as noise) is another one in
    every run."""
    if not isinstance(noise, list):
        return each(noise)
    return [each({k: v for k, v in n.items() if k != "after"}) if isinstance(n, dict) else n for n in noise]


def untimed(text: str) -> str:
    """Console output without its timings."""
    return re.sub(r"\d+(\.\d+)? ?(ms|s)\b", "T", text)
