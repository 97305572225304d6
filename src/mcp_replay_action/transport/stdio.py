"""The stdio transport: an MCP server as a subprocess speaking newline-delimited JSON-RPC.

Also home to the process helpers the recorder and the HTTP transport reuse: ``spawn_server``
starts a server in its own process group (so its children, such as the ``node`` that ``npx``
starts, can be stopped with it) and ``terminate_group`` stops that group the way the MCP spec
asks for (close stdin, wait, SIGTERM, wait, SIGKILL). Every server spawned here is remembered
until it is stopped, and stopped at interpreter exit or on SIGTERM/SIGHUP, so no server outlives us.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import IO, Any

from mcp_replay_action.errors import ConfigError, ServerExited, ServerStartError, TransportTimeout
from mcp_replay_action.jsonrpc import encode, is_message

# Spec'd shutdown: after stdin closes the server gets this long to exit by itself, then SIGTERM
# and this long again, then SIGKILL.
SHUTDOWN_GRACE = 2.0
TERM_TIMEOUT = 2.0
_POLL = 0.02

PIPE = subprocess.PIPE

# ---------------------------------------------------------------------------------------------
# Process helpers (shared with record.py and the HTTP transport)
# ---------------------------------------------------------------------------------------------


def split_command(command: str | Sequence[str]) -> list[str]:
    """The argv of a server command: a string is split like a POSIX shell would (no expansion)."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"cannot parse server command {command!r}: {exc}") from None
    else:
        argv = [str(part) for part in command]
    if not argv or not argv[0]:
        raise ConfigError("the server command is empty")
    return argv


def _isolated_env(base: dict[str, str], scratch: str) -> dict[str, str]:
    """A fresh HOME, TMPDIR and XDG dirs under ``scratch``.

    Package-manager caches stay where they were: isolation is about the server's own state, and a
    cold cache would make ``npx``/``uvx`` try the network on every run.
    """
    home = os.path.join(scratch, "home")
    tmp = os.path.join(scratch, "tmp")
    os.makedirs(home)
    os.makedirs(tmp)
    old_home = base.get("HOME") or os.path.expanduser("~")
    old_cache = base.get("XDG_CACHE_HOME") or os.path.join(old_home, ".cache")
    env = dict(base)
    env.setdefault("npm_config_cache", os.path.join(old_home, ".npm"))
    env.setdefault("UV_CACHE_DIR", os.path.join(old_cache, "uv"))
    env.update(
        HOME=home,
        TMPDIR=tmp,
        TMP=tmp,
        TEMP=tmp,
        XDG_CONFIG_HOME=os.path.join(home, ".config"),
        XDG_DATA_HOME=os.path.join(home, ".local", "share"),
        XDG_STATE_HOME=os.path.join(home, ".local", "state"),
        XDG_CACHE_HOME=os.path.join(home, ".cache"),
    )
    return env


@dataclass
class ServerProcess:
    """A spawned server: its argv, the Popen, and the scratch dir of an isolated run."""

    argv: list[str]
    popen: subprocess.Popen[bytes]
    scratch: str | None = None
    _stopped: bool = field(default=False, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self, *, grace: float = SHUTDOWN_GRACE, term_timeout: float = TERM_TIMEOUT) -> int | None:
        """Stop the whole process group (see ``terminate_group``), remove the scratch dir. Idempotent."""
        if not self._stopped:
            self._stopped = True
            try:
                terminate_group(self.popen, grace=grace, term_timeout=term_timeout)
            finally:
                _forget(self.popen)
                if self.scratch:
                    shutil.rmtree(self.scratch, ignore_errors=True)
        return self.popen.returncode


def spawn_server(
    command: str | Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    isolate: bool = False,
    stdin: int | IO[Any] | None = PIPE,
    stdout: int | IO[Any] | None = PIPE,
    stderr: int | IO[Any] | None = PIPE,
) -> ServerProcess:
    """Start a server in its own process group, in ``cwd`` (default: the current directory), with
    the caller's environment plus ``env``; ``isolate`` gives it a fresh temporary HOME and TMPDIR.

    Raises ConfigError for an unparsable command and ServerStartError, with a one-line message,
    when the command or the directory does not exist or cannot be executed.
    """
    argv = split_command(command)
    if cwd is not None and not os.path.isdir(cwd):
        raise ServerStartError(f"server working directory not found: {os.fspath(cwd)}")
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    scratch = tempfile.mkdtemp(prefix="mcp-replay-") if isolate else None
    if scratch:
        full_env = _isolated_env(full_env, scratch)
    _install_exit_hooks()
    try:
        popen = subprocess.Popen(
            argv,
            cwd=cwd,
            env=full_env,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # own process group: stoppable as a whole, immune to our Ctrl-C
            bufsize=-1,
        )
    except FileNotFoundError:
        _cleanup_scratch(scratch)
        raise ServerStartError(f"server command not found: {argv[0]}") from None
    except PermissionError:
        _cleanup_scratch(scratch)
        raise ServerStartError(f"server command is not executable: {argv[0]}") from None
    except OSError as exc:
        _cleanup_scratch(scratch)
        raise ServerStartError(f"cannot start server command {argv[0]}: {exc.strerror or exc}") from None
    _remember(popen)
    return ServerProcess(argv=argv, popen=popen, scratch=scratch)


def _cleanup_scratch(scratch: str | None) -> None:
    if scratch:
        shutil.rmtree(scratch, ignore_errors=True)


def terminate_group(
    proc: subprocess.Popen[bytes], *, grace: float = SHUTDOWN_GRACE, term_timeout: float = TERM_TIMEOUT
) -> int | None:
    """Stop a server started by ``spawn_server`` and everything in its process group.

    Close its stdin and give it ``grace`` seconds to exit by itself; then SIGTERM the group and
    wait ``term_timeout``; then SIGKILL the group. The group is signalled even when the leader has
    already exited, because a wrapper (``npx``, ``sh -c``) can leave its child behind. Bounded in
    time; returns the leader's exit status (None only if even SIGKILL could not reap it).
    """
    pgid = proc.pid  # start_new_session=True made the server the leader of its own group
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
    _wait_leader(proc, grace)
    for sig, wait in ((signal.SIGTERM, term_timeout), (signal.SIGKILL, 2.0)):
        if proc.poll() is not None and not _group_alive(pgid):
            break
        _signal_group(pgid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if proc.poll() is not None and not _group_alive(pgid):
                break
            time.sleep(_POLL)
    if proc.returncode is not None:
        _reap_strays(pgid)
    return proc.returncode


def _wait_leader(proc: subprocess.Popen[bytes], timeout: float) -> None:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    """Whether any process of the group still runs. Zombies do not count: a container whose PID 1
    never reaps them would otherwise keep a dead group "alive" until SIGKILL."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no procfs (macOS): the signal probe above is all we can know
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) >= 3 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _reap_strays(pgid: int) -> None:
    """Reap group members that were re-parented to us (we may be PID 1 in a container)."""
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


# Every live server, so that interpreter exit or a fatal signal stops them all.
_LIVE: dict[int, subprocess.Popen[bytes]] = {}
_LIVE_LOCK = threading.Lock()
_ATEXIT_INSTALLED = False
_SIGNALS_INSTALLED = False


def _remember(proc: subprocess.Popen[bytes]) -> None:
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc


def _forget(proc: subprocess.Popen[bytes]) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)


def kill_all_servers(timeout: float = 1.0) -> None:
    """SIGTERM every live server group, then SIGKILL whatever is left after ``timeout``."""
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
        _LIVE.clear()
    for proc in procs:
        _signal_group(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(_group_alive(p.pid) and p.poll() is None for p in procs):
        time.sleep(_POLL)
    for proc in procs:
        _signal_group(proc.pid, signal.SIGKILL)
        _wait_leader(proc, 0.5)


def _on_fatal_signal(signum: int, frame: FrameType | None) -> None:
    kill_all_servers()
    # Then die of the same signal, as if we had never handled it.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_exit_hooks() -> None:
    """Stop servers at exit and on SIGTERM/SIGHUP. SIGINT already unwinds through atexit (Python
    raises KeyboardInterrupt), and the server never sees it: it lives in its own session. A signal
    handler someone else installed is left alone; handlers can only be set from the main thread,
    so a first spawn from another thread leaves that to a later one."""
    global _ATEXIT_INSTALLED, _SIGNALS_INSTALLED
    if not _ATEXIT_INSTALLED:
        _ATEXIT_INSTALLED = True
        atexit.register(kill_all_servers)
    if _SIGNALS_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    _SIGNALS_INSTALLED = True
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _on_fatal_signal)


class StderrTail:
    """Drains a server's stderr on a thread, keeping only the last lines.

    Draining fully matters: a server blocked on a full stderr pipe stops answering on stdout.
    ``echo``, when given, receives every byte as it arrives (the recorder passes the server's
    stderr through to the client that launched it).
    """

    _MAX_LINE = 4000  # characters kept of one very long line

    def __init__(self, stream: IO[bytes], *, lines: int = 40, echo: IO[bytes] | None = None) -> None:
        self._stream = stream
        self._echo = echo
        self._lines: collections.deque[str] = collections.deque(maxlen=max(1, lines))
        self._partial = b""
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="mcp-replay-stderr", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float) -> None:
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        read = getattr(self._stream, "read1", self._stream.read)
        while True:
            try:
                chunk = read(65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            if self._echo is not None:
                try:
                    self._echo.write(chunk)
                    self._echo.flush()
                except (OSError, ValueError):
                    self._echo = None
            with self._lock:
                *complete, partial = (self._partial + chunk).split(b"\n")
                for raw in complete[-self._lines.maxlen :] if self._lines.maxlen else complete:
                    self._lines.append(raw[-self._MAX_LINE :].decode("utf-8", "replace").rstrip("\r"))
                self._partial = partial[-self._MAX_LINE :]

    def text(self) -> str:
        """The kept tail, oldest line first."""
        with self._lock:
            lines = list(self._lines)
            if self._partial:
                lines.append(self._partial.decode("utf-8", "replace"))
        return "\n".join(lines)


def last_line(text: str) -> str:
    """The last non-blank line of ``text``, shortened for a one-line message."""
    for line in reversed(text.splitlines()):
        if line.strip():
            return line.strip()[:200]
    return ""


# ---------------------------------------------------------------------------------------------
# The transport
# ---------------------------------------------------------------------------------------------

_CHUNK = 1 << 16


class StdioTransport:
    """A server subprocess spoken to over stdin/stdout with newline-delimited JSON-RPC.

    ``command`` is a string (split like a shell would, so ``node dist/index.js`` or
    ``uvx my-server`` work unchanged) or an argv. The server runs in ``cwd`` with our environment
    plus ``env``. ``receive`` returns messages in arrival order; lines on stdout that are not
    JSON-RPC are skipped and counted. stderr is drained on a thread and only its last
    ``stderr_tail_lines`` are kept. ``start`` watches the first ``exit_check`` seconds for a server
    that dies at once.

    stdout is read in the caller's thread with ``select``: a replay is lock-step, and handing every
    message across threads would cost more than the parsing. It cannot deadlock: ``send`` keeps
    reading stdout into a buffer for as long as the server's stdin is full. One thread at a time
    may use a transport.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        isolate: bool = False,
        exit_check: float = 0.2,
        stderr_tail_lines: int = 40,
        shutdown_grace: float = SHUTDOWN_GRACE,
    ) -> None:
        self.argv = split_command(command)
        self.cwd = cwd
        self.env = dict(env) if env else None
        self.isolate = isolate
        self.exit_check = exit_check
        self.stderr_tail_lines = stderr_tail_lines
        self.shutdown_grace = shutdown_grace
        self._server: ServerProcess | None = None
        self._stderr: StderrTail | None = None
        self._in_fd = -1  # the server's stdin (ours to write), non-blocking
        self._out_fd = -1  # the server's stdout (ours to read)
        self._messages: collections.deque[dict[str, Any]] = collections.deque()
        self._partial: list[bytes] = []  # the start of a line not yet ended by \n
        self._eof = False  # the server's stdout has closed
        self._closed = False
        self.non_json_lines = 0
        self.last_non_json = ""

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the server. Raises ServerStartError when it cannot start or exits at once."""
        if self._server is not None:
            raise RuntimeError("StdioTransport.start() called twice")
        server = spawn_server(self.argv, cwd=self.cwd, env=self.env, isolate=self.isolate)
        self._server = server
        popen = server.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self._in_fd = popen.stdin.fileno()
        self._out_fd = popen.stdout.fileno()
        os.set_blocking(self._in_fd, False)
        self._stderr = StderrTail(popen.stderr, lines=self.stderr_tail_lines)
        self._stderr.start()
        if self.exit_check > 0:
            try:
                status = popen.wait(timeout=self.exit_check)
            except subprocess.TimeoutExpired:
                return
            self._stderr.join(0.5)
            tail = self._stderr.text()
            self.close()
            why = last_line(tail)
            raise ServerStartError(
                f"server exited at start-up with status {status}" + (f": {why}" if why else ""),
                stderr_tail=tail,
                exit_status=status,
            )

    def close(self) -> None:
        """Close stdin, wait, SIGTERM then SIGKILL the server's group; reap. Idempotent."""
        if self._closed or self._server is None:
            self._closed = True
            return
        self._closed = True
        self._server.stop(grace=self.shutdown_grace)
        if self._stderr is not None:
            self._stderr.join(1.0)
        popen = self._server.popen
        if popen.stdout is not None:
            popen.stdout.close()

    def __enter__(self) -> StdioTransport:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- messages ---------------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        """Write one message as a JSON line. Raises ServerExited when the server is gone."""
        if self._server is None:
            raise RuntimeError("StdioTransport.send() before start()")
        if self._closed:
            raise self._exited("the transport is closed")
        data = memoryview(encode(message))
        try:
            while data:
                try:
                    written = os.write(self._in_fd, data)
                except BlockingIOError:
                    written = 0
                data = data[written:]
                if data:
                    # The server's stdin is full; it may be blocked writing its stdout to us.
                    readable, _, _ = select.select([self._out_fd] if not self._eof else [], [self._in_fd], [])
                    if readable:
                        self._read_chunk()
        except (OSError, ValueError):  # BrokenPipeError, or stdin already closed
            raise self._exited("the server is gone (its stdin is closed)") from None

    def receive(self, timeout: float) -> dict[str, Any]:
        """The next message from the server, in arrival order.

        Raises TransportTimeout after ``timeout`` seconds, ServerExited once the server's stdout
        has closed and every message it sent before has been returned.
        """
        messages = self._messages
        if messages:
            return messages.popleft()
        if self._server is None:
            raise RuntimeError("StdioTransport.receive() before start()")
        deadline = time.monotonic() + timeout
        while not messages:
            if self._eof or self._closed:
                raise self._exited()
            left = deadline - time.monotonic()
            readable, _, _ = select.select([self._out_fd], [], [], max(0.0, left))
            if readable:
                self._read_chunk()
            elif left <= 0 or time.monotonic() >= deadline:
                raise TransportTimeout(f"no message from the server within {timeout:g} s")
        return messages.popleft()

    def _read_chunk(self) -> None:
        """Read what stdout has, and queue every message on the complete lines in it."""
        try:
            chunk = os.read(self._out_fd, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self._eof = True
            if self._partial:  # a last line without its newline
                self._take_line(b"".join(self._partial))
                self._partial = []
            return
        if b"\n" not in chunk:
            self._partial.append(chunk)  # a long line arriving in pieces: join once, at its end
            return
        lines = chunk.split(b"\n")
        if self._partial:
            self._partial.append(lines[0])
            lines[0] = b"".join(self._partial)
        last = lines.pop()
        self._partial = [last] if last else []
        for line in lines:
            self._take_line(line)

    def _take_line(self, line: bytes) -> None:
        try:
            value = json.loads(line)
        except ValueError:
            if line.strip():
                self._count_stray(line)
            return
        if type(value) is dict and is_message(value):
            self._messages.append(value)
        elif type(value) is list and value and all(is_message(v) for v in value):
            self._messages.extend(value)  # a batch (protocol versions before 2025-06-18)
        else:
            self._count_stray(line)

    def _count_stray(self, line: bytes) -> None:
        self.non_json_lines += 1
        self.last_non_json = line.decode("utf-8", "replace").strip()[:200]

    def _exited(self, what: str = "") -> ServerExited:
        status = self._exit_status(wait=1.0)
        if self._stderr is not None:
            self._stderr.join(0.5)  # let the last words of a crash reach the tail
        tail = self._stderr.text() if self._stderr else ""
        if not what:
            what = f"the server exited with status {status}" if status is not None else "the server closed its stdout"
        why = last_line(tail)
        return ServerExited(what + (f"; stderr: {why}" if why else ""), stderr_tail=tail, exit_status=status)

    def _exit_status(self, wait: float = 0.0) -> int | None:
        if self._server is None:
            return None
        popen = self._server.popen
        if popen.returncode is None and wait > 0:
            _wait_leader(popen, wait)
        return popen.poll()

    # -- facts ------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._server.pid if self._server else None

    def diagnostics(self) -> dict[str, Any]:
        """``stderr_tail``, ``exit_status``, ``non_json_lines`` (and the last such line)."""
        return {
            "stderr_tail": self._stderr.text() if self._stderr else "",
            "exit_status": self._exit_status(),
            "non_json_lines": self.non_json_lines,
            "last_non_json_line": self.last_non_json,
        }
