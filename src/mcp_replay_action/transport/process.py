"""Process supervision shared by every place that starts a server: the stdio transport, the HTTP
transport's ``--server`` start and the stdio recording proxy (and ``--setup`` commands).

``spawn_server`` starts a server in its own process group (so its children, such as the ``node``
that ``npx`` starts, can be stopped with it) and ``terminate_group`` stops that group the way the
MCP spec asks for (close stdin, wait, SIGTERM, wait, SIGKILL). Every server spawned here is
remembered until it is stopped, and stopped at interpreter exit or on SIGTERM/SIGHUP, so no server
outlives us.

A server can try harder to escape: a grandchild that calls ``setsid()`` leaves the process group,
and a ``kill -9`` of our own process runs no clean-up at all. On Linux, therefore, (1) we make
ourselves a child subreaper, so orphaned descendants are re-parented to us rather than to init;
(2) every process a server starts inherits a marker in its environment (``MARKER_VAR``), and
stopping a server ends every live process that carries its marker, whatever its group or session;
(3) a server started from the main thread gets ``PR_SET_PDEATHSIG``: the kernel kills it when we die.
"""

from __future__ import annotations

import atexit
import collections
import os
import select
import shlex
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import IO

from mcp_replay_action.errors import CommandNotFound, ConfigError, ServerStartError
from mcp_replay_action.host import privilege
from mcp_replay_action.transport.headline import start_failure

# Spec'd shutdown: after stdin closes the server gets this long to exit by itself, then SIGTERM
# and this long again, then SIGKILL.
SHUTDOWN_GRACE = 2.0
TERM_TIMEOUT = 2.0
# Each of those waits once a stop is hurried (a stop signal came while a recorder stops its
# server: whoever sent it kills us soon if we linger).
HURRIED_WAIT = 0.5
_POLL = 0.02

PIPE = subprocess.PIPE
MARKER_VAR = "MCP_REPLAY_SUPERVISED"  # inherited by every descendant of a server we start

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int) -> None:
    """In the child between fork and exec: have the kernel SIGKILL us when our parent dies, even
    by ``kill -9``. If the parent died already, before the request took effect, exit at once."""
    privilege.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os._exit(1)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        return len(affinity(0))
    return os.cpu_count() or 1


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
    marker: str | None = None
    cwd: str | None = None  # where it runs (None: our current directory)
    _stopped: bool = field(default=False, repr=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(
        self,
        *,
        grace: float = SHUTDOWN_GRACE,
        term_timeout: float = TERM_TIMEOUT,
        hurry: threading.Event | None = None,
    ) -> int | None:
        """Stop the whole process group (see ``terminate_group``), remove the scratch dir. Idempotent."""
        if not self._stopped:
            self._stopped = True
            try:
                terminate_group(self.popen, grace=grace, term_timeout=term_timeout, marker=self.marker, hurry=hurry)
            finally:
                _forget(self.popen)
                _cleanup_scratch(self.scratch)
        return self.popen.returncode

    def start_failure(self, what: str, tail: str) -> str:
        """``what`` went wrong at start-up, told with the stderr headline and, when the script
        the server was told to run is not there, a hint (see ``headline.py``)."""
        return start_failure(what, tail, self.argv, self.cwd)


def spawn_server(
    command: str | Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    isolate: bool = False,
    stdin: int | IO[bytes] | None = PIPE,
    stdout: int | IO[bytes] | None = PIPE,
    stderr: int | IO[bytes] | None = PIPE,
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
    full_env = privilege.child_environment(full_env)
    scratch = _scratch_dir() if isolate else None
    if scratch:
        full_env = _isolated_env(full_env, scratch)
    marker = uuid.uuid4().hex
    # Appended, not replaced: a server started by a server we started (``replay --server
    # "mcp-replay record ..."``) still carries the outer marker, and ends with the outer one.
    outer = full_env.get(MARKER_VAR)
    full_env[MARKER_VAR] = f"{outer}:{marker}" if outer else marker
    _install_exit_hooks()
    # PDEATHSIG fires when the thread that forked ends, not the process: only a server started
    # from the main thread (record, the CLI's replay) can have it without dying early.
    parent = os.getpid()
    preexec = (
        (lambda: _die_with_parent(parent))
        if privilege.LIBC and threading.current_thread() is threading.main_thread()
        else None
    )
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
            preexec_fn=preexec,
            **privilege.popen_options(),  # the code under test never runs as the token's holder
        )
    except FileNotFoundError:
        _cleanup_scratch(scratch)
        raise CommandNotFound(argv[0]) from None
    except PermissionError:
        _cleanup_scratch(scratch)
        raise _permission_denied(argv[0], full_env.get("PATH", os.defpath)) from None
    except OSError as exc:
        _cleanup_scratch(scratch)
        raise ServerStartError(f"cannot start server command {argv[0]}: {exc.strerror or exc}") from None
    _remember(popen, marker)
    return ServerProcess(
        argv=argv, popen=popen, scratch=scratch, marker=marker, cwd=os.fspath(cwd) if cwd is not None else None
    )


def _permission_denied(command: str, search_path: str) -> ServerStartError:
    """What an EACCES from exec means: a command that exists and is not executable, or (for a
    bare name) one that is nowhere, where some PATH directory could not be searched (a runner user
    with root's directories on PATH gets EACCES, not ENOENT, for a name that does not exist)."""
    if os.sep in command:
        return ServerStartError(f"server command is not executable: {command}")
    for directory in search_path.split(os.pathsep):
        candidate = os.path.join(directory or ".", command)
        if os.path.exists(candidate):
            return ServerStartError(f"server command is not executable: {candidate}")
    return CommandNotFound(command)


# tempfile and shutil (with random, bz2 and lzma) are imported only with --isolate: every other
# start of a server would pay for them before the spawn.
def _scratch_dir() -> str:
    import tempfile

    scratch = tempfile.mkdtemp(prefix="mcp-replay-")
    privilege.give_to_children(scratch)
    return scratch


def _cleanup_scratch(scratch: str | None) -> None:
    if scratch:
        import shutil

        shutil.rmtree(scratch, ignore_errors=True)


def terminate_group(
    proc: subprocess.Popen[bytes],
    *,
    grace: float = SHUTDOWN_GRACE,
    term_timeout: float = TERM_TIMEOUT,
    marker: str | None = None,
    hurry: threading.Event | None = None,
) -> int | None:
    """Stop a server started by ``spawn_server``, everything in its process group and every process
    that carries its ``marker`` (a ``setsid()`` grandchild left the group, not the marker).

    Close its stdin and give it ``grace`` seconds to exit by itself; then SIGTERM them all and
    wait ``term_timeout``; then SIGKILL. The group is signalled even when the leader has already
    exited, because a wrapper (``npx``, ``sh -c``) can leave its child behind. Once ``hurry`` is
    set, neither wait lasts more than ``HURRIED_WAIT`` from then. Bounded in time; returns the
    leader's exit status (None only if even SIGKILL could not reap it).
    """
    pgid = proc.pid  # start_new_session=True made the server the leader of its own group
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
    if hurry is None:
        wait_leader(proc, grace)
    else:
        _wait_hurried(proc, grace, hurry)
    seen: set[int] = set()
    for sig, wait in ((signal.SIGTERM, term_timeout), (signal.SIGKILL, 2.0)):
        group, strays = _survivors(pgid, marker)
        if proc.poll() is not None and not group and not strays:
            break
        seen.update(strays)
        _signal_group(pgid, sig)
        for pid in strays:
            _signal_pid(pid, sig)
        deadline = time.monotonic() + wait
        hurried = False
        while time.monotonic() < deadline:
            if proc.poll() is not None and _survivors(pgid, marker) == (False, set()):
                break
            if hurry is not None and hurry.is_set() and not hurried:
                hurried = True
                deadline = min(deadline, time.monotonic() + HURRIED_WAIT)
            time.sleep(_POLL)
    if proc.returncode is not None:
        _reap_strays(pgid, seen)
    return proc.returncode


def _wait_hurried(proc: subprocess.Popen[bytes], timeout: float, hurry: threading.Event) -> None:
    """``wait_leader``, in short steps, cut to ``HURRIED_WAIT`` once ``hurry`` is set."""
    deadline = time.monotonic() + timeout
    hurried = False
    while proc.returncode is None:
        now = time.monotonic()
        if hurry.is_set() and not hurried:
            hurried = True
            deadline = min(deadline, now + HURRIED_WAIT)
        if now >= deadline:
            return
        wait_leader(proc, min(0.1, deadline - now))


def wait_leader(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait up to ``timeout`` seconds for ``proc`` to exit."""
    if proc.returncode is None and _exit_seen(proc.pid, timeout):
        timeout = 1.0  # it has exited: reaping it takes no time
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        pass


def _exit_seen(pid: int, timeout: float) -> bool:
    """Whether our (unreaped) child ``pid`` exits within ``timeout``, told by a pidfd the moment
    it does (Linux). ``Popen.wait(timeout)`` polls with sleeps of up to 50 ms instead, which every
    replay would pay once per server stop. False when pidfds are not available."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return False
    try:
        return bool(select.select([fd], [], [], max(0.0, timeout))[0])
    finally:
        os.close(fd)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_pid(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _survivors(pgid: int, marker: str | None) -> tuple[bool, set[int]]:
    """Whether any process of group ``pgid`` still runs, and the live processes outside that group
    that carry ``marker`` in their environment. Zombies do not count: a container whose PID 1 never
    reaps them would otherwise keep a dead group "alive" until SIGKILL."""
    try:
        os.killpg(pgid, 0)
        group_signalled = True
    except ProcessLookupError:
        group_signalled = False
    except PermissionError:
        return True, set()
    if not group_signalled and not marker:
        return False, set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return group_signalled, set()  # no procfs (macOS): the signal probe above is all we can know
    me = os.getpid()
    needle = marker.encode() if marker else b""
    group = False
    strays: set[int] = set()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) < 3 or fields[0] in (b"Z", b"X"):
            continue
        if int(fields[2]) == pgid:
            group = True
        elif needle and _environ_has(entry, needle):
            strays.add(int(entry))
    return group, strays


def _environ_has(pid: str, marker: bytes) -> bool:
    """Whether process ``pid`` carries ``marker`` in its ``MARKER_VAR`` (a ``:``-separated chain)."""
    prefix = MARKER_VAR.encode() + b"="
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            entries = fh.read().split(b"\0")
    except OSError:
        return False  # gone, or another user's process: not ours
    return any(e.startswith(prefix) and marker in e[len(prefix) :].split(b":") for e in entries)


def _reap_strays(pgid: int, pids: Iterable[int] = ()) -> None:
    """Reap group members and marked strays that were re-parented to us (we are a subreaper, or
    PID 1 in a container)."""
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


# Every live server (and its marker), so that interpreter exit or a fatal signal stops them all.
_LIVE: dict[int, tuple[subprocess.Popen[bytes], str | None]] = {}
_LIVE_LOCK = threading.Lock()
_ATEXIT_INSTALLED = False
_SIGNALS_INSTALLED = False


def _remember(proc: subprocess.Popen[bytes], marker: str | None = None) -> None:
    with _LIVE_LOCK:
        _LIVE[proc.pid] = (proc, marker)


def _forget(proc: subprocess.Popen[bytes]) -> None:
    with _LIVE_LOCK:
        _LIVE.pop(proc.pid, None)


def kill_all_servers(timeout: float = 1.0) -> None:
    """SIGTERM every live server group and its marked strays, then SIGKILL whatever is left after
    ``timeout``."""
    with _LIVE_LOCK:
        live = list(_LIVE.values())
        _LIVE.clear()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for proc, marker in live:
            _signal_group(proc.pid, sig)
            for pid in _survivors(proc.pid, marker)[1]:
                _signal_pid(pid, sig)
        if sig == signal.SIGTERM:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and any(
                proc.poll() is None or _survivors(proc.pid, marker) != (False, set()) for proc, marker in live
            ):
                time.sleep(_POLL)
    for proc, _ in live:
        wait_leader(proc, 0.5)


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
        privilege.become_subreaper()
    if _SIGNALS_INSTALLED or threading.current_thread() is not threading.main_thread():
        return
    _SIGNALS_INSTALLED = True
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _on_fatal_signal)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_Handler = Callable[[int, FrameType | None], object] | int | None


def trap_stop_signals(on_stop: Callable[[], None]) -> Callable[[], None]:
    """Turn SIGINT, SIGTERM and SIGHUP (a closed terminal) into ``on_stop()``: a recording ends
    cleanly and is saved, whichever of them arrives. Returns the function that puts the previous
    handlers back. Handlers can only be set from the main thread; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous: dict[int, _Handler] = {}
    for sig in STOP_SIGNALS:
        previous[sig] = signal.signal(sig, lambda signum, frame: on_stop())

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)

    return restore


class StderrTail:
    """Drains a server's stderr on a thread, keeping only the last lines.

    Draining fully matters: a server blocked on a full stderr pipe stops answering on stdout.
    ``echo``, when given, receives every line as it arrives (the recorder passes the server's
    stderr through to the client that launched it), with workflow commands broken: a CI log must
    not obey a server (``::error::``, ``##[``).
    """

    _MAX_LINE = 4000  # characters kept of one very long line

    def __init__(self, stream: IO[bytes], *, lines: int = 40, echo: IO[bytes] | None = None) -> None:
        self._stream = stream
        self._echo = echo
        self._lines: collections.deque[str] = collections.deque(maxlen=max(1, lines))
        self._partial = b""
        self._unechoed = b""
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
            self._pass_on(chunk)
            with self._lock:
                *complete, partial = (self._partial + chunk).split(b"\n")
                for raw in complete[-self._lines.maxlen :] if self._lines.maxlen else complete:
                    self._lines.append(raw[-self._MAX_LINE :].decode("utf-8", "replace").rstrip("\r"))
                self._partial = partial[-self._MAX_LINE :]

        self._pass_on(b"", final=True)

    def _pass_on(self, chunk: bytes, *, final: bool = False) -> None:
        """Echo whole lines (a line split across reads could hide a ``::`` start), neutralised."""
        if self._echo is None:
            return
        from mcp_replay_action.values.safe import no_workflow_commands

        data = self._unechoed + chunk
        cut = len(data) if final or len(data) > 65536 else data.rfind(b"\n") + 1
        self._unechoed = data[cut:]
        if not cut:
            return
        text = no_workflow_commands(data[:cut].decode("utf-8", "surrogateescape"))
        try:
            self._echo.write(text.encode("utf-8", "surrogateescape"))
            self._echo.flush()
        except (OSError, ValueError):
            self._echo = None

    def text(self) -> str:
        """The kept tail, oldest line first."""
        with self._lock:
            lines = list(self._lines)
            if self._partial:
                lines.append(self._partial.decode("utf-8", "replace"))
        return "\n".join(lines)


def run_setup(
    command: str | Sequence[str],
    *,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120.0,
    flag: str = "--setup",
) -> None:
    """Run a ``--setup`` command to completion before a server starts (reset a memory file, load a
    database fixture), or a ``--reset`` one (``flag``: the option messages name) before a pass
    against a server someone else started. It runs like a server command (own process group, our
    environment plus ``env``, in ``cwd``), its output is kept only for the error, and it is stopped
    with its whole group after ``timeout`` seconds. Raises ServerStartError naming the command's
    failure."""
    proc = spawn_server(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=PIPE, stderr=subprocess.STDOUT)
    assert proc.popen.stdout is not None
    output = StderrTail(proc.popen.stdout)
    output.start()
    name = proc.argv[0]
    try:
        try:
            status = proc.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.stop(grace=0.0)
            output.join(1.0)
            raise ServerStartError(
                f"{flag} {name} did not finish within {timeout:g} s", stderr_tail=output.text()
            ) from None
    finally:
        proc.stop(grace=0.0)  # a setup command's leftover children do not outlive it
    output.join(1.0)
    if status != 0:
        tail = output.text()
        raise ServerStartError(
            proc.start_failure(f"{flag} {name} failed with status {status}", tail),
            stderr_tail=tail,
            exit_status=status,
        )
