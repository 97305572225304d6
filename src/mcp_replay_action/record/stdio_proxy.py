"""Recording over stdio: a transparent proxy that an MCP client launches in place of the server.

Every byte goes both ways unchanged (line by line, flushed per line, never re-encoded), and every
message is teed into a cassette: a client request paired with the server's response by id
(``request``), a client notification (``notification``), a server-to-client request paired with
the client's answer (``server-request``) and a server notification (``server-notification``).
JSON-RPC ids are scoped per direction, so a server request may reuse the id of an open client
request and still be paired right.

Redaction happens before anything is written; the cassette is written atomically now and then
while recording (so a killed recording loses little) and once more at the end: when the client
closes our stdin, when the server exits, or on SIGTERM/SIGINT. A request that never got an answer
is left out (a cassette line promises an answer to compare against) and counted in the header's
``unanswered``. The server lives exactly as long as the client's session.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from mcp_replay_action.cassette import save
from mcp_replay_action.cassette.header import CassetteHeader, recorded_line
from mcp_replay_action.compare.correlate import ThreadRules
from mcp_replay_action.errors import ReplayError
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.record.tape import Tape
from mcp_replay_action.redact import Redactor, env_secrets
from mcp_replay_action.redact_argv import redact_argv
from mcp_replay_action.transport import MAX_MESSAGE, message_too_large
from mcp_replay_action.transport.process import SHUTDOWN_GRACE, StderrTail, spawn_server, trap_stop_signals

SAVE_EVERY_INTERACTIONS = 25
SAVE_EVERY_SECONDS = 2.0


@dataclass(frozen=True)
class RecordSummary:
    """How a recording ended."""

    path: str
    interactions: int
    unanswered: int
    saved: bool  # False when nothing was recorded (an existing cassette is then left alone)
    server_exit_status: int | None
    stderr_tail: str
    non_json_lines: int
    ended_by: str  # "client" (stdin closed), "server" (it exited) or "signal"
    meta: JSONObject | None = None  # the header last saved (None when nothing was)
    server_failure: str = ""  # a server that exited non-zero: what happened, its stderr headline, a hint

    @property
    def line(self) -> str:
        """The line a recording ends with: how many interactions went to which file, in which era."""
        return recorded_line(self.path, self.interactions if self.saved else 0, self.meta, unanswered=self.unanswered)


class _Recording:
    """One proxy session: the server, the two pumps, the tape and the saver."""

    def __init__(
        self,
        argv: list[str],
        path: str,
        redactor: Redactor,
        stdin: IO[bytes],
        stdout: IO[bytes],
        stderr: IO[bytes] | None,
        save_every: int,
        save_seconds: float,
        thread_rules: ThreadRules | None = None,
    ) -> None:
        self.argv = argv
        self.thread_rules = thread_rules  # stored in the header (``threading``) when declared
        # Once: the header must not carry a secret flag, and its hits count once.
        self.header = CassetteHeader(transport="stdio", server=redact_argv(redactor, argv))
        self.path = path
        self.redactor = redactor
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.save_every = save_every
        self.save_seconds = save_seconds
        self.tape = Tape(redactor)
        self.done = threading.Event()
        self.ended_by = ""
        self._save_lock = threading.Lock()
        self._saved_completed = 0
        self.saved = False
        self.meta: JSONObject | None = None

    def end(self, why: str) -> None:
        if not self.done.is_set():
            self.ended_by = why
            self.done.set()

    def pump(
        self,
        src: IO[bytes],
        dst: IO[bytes],
        tee: Callable[[bytes, float], None],
        on_eof: Callable[[], None],
        cap: int = MAX_MESSAGE,
    ) -> None:
        """Copy ``src`` to ``dst`` line by line, flushing each line, and tee every line; a line
        longer than ``cap`` is neither (said on stderr)."""
        clock = time.monotonic
        writable = True

        def dropped() -> None:
            note = f"mcp-replay record: {message_too_large(cap, 'line')}\n"
            try:
                if self.stderr is not None:
                    self.stderr.write(note.encode())
                    self.stderr.flush()
            except (OSError, ValueError):
                pass

        try:
            for lines in _read_lines(src, cap, dropped):
                seen = clock()
                # Tee before forwarding: once the peer has the line it may answer at once, and the
                # answer must find this message already on the tape (a server-to-client request
                # answered before it was recorded would lose its pairing).
                for line in lines:
                    tee(line, seen)
                if writable:
                    try:
                        dst.write(b"".join(lines) if len(lines) > 1 else lines[0])
                        dst.flush()
                    except (OSError, ValueError):
                        writable = False  # the reader went away; keep recording what still comes
        except (OSError, ValueError):
            pass  # our end of the pipe was closed during shutdown
        finally:
            on_eof()

    def save(self, *, final: bool = False) -> None:
        """Write what is complete so far; nothing at all until one interaction is complete."""
        with self._save_lock:
            completed = self.tape.completed
            if completed == 0 or (completed == self._saved_completed and not final):
                return
            interactions = self.tape.interactions()
            if not interactions:
                return
            self._saved_completed = completed
            cassette = self.cassette(interactions)
            save(cassette, self.path)
            self.saved = True
            self.meta = dict(cassette.meta)

    def cassette(self, interactions: list[Interaction]) -> Cassette:
        extra: JSONObject = {"unanswered": self.tape.unanswered}
        if self.tape.unmatched_responses:
            extra["unmatched_responses"] = self.tape.unmatched_responses
        if self.tape.non_json_lines:
            extra["non_json_lines"] = self.tape.non_json_lines
        if self.thread_rules:
            extra["threading"] = self.thread_rules.to_json()
        meta = self.header.meta(interactions, extra=extra, redaction=self.redactor.rules())
        return Cassette(meta=meta, interactions=tuple(interactions), path=self.path)

    def saver(self) -> None:
        """Save every ``save_seconds``, or sooner once ``save_every`` interactions are new."""
        last = time.monotonic()
        while not self.done.wait(0.1):
            fresh = self.tape.completed - self._saved_completed
            if fresh and (fresh >= self.save_every or time.monotonic() - last >= self.save_seconds):
                self.save()
                last = time.monotonic()


def record_stdio(
    command: str | Sequence[str],
    cassette_path: str,
    *,
    redactor: Redactor | None = None,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    public_env: Sequence[str] = (),
    isolate: bool = False,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    stderr: IO[bytes] | None = None,
    save_every: int = SAVE_EVERY_INTERACTIONS,
    save_seconds: float = SAVE_EVERY_SECONDS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    max_message: int = MAX_MESSAGE,
    thread_rules: ThreadRules | None = None,
) -> RecordSummary:
    """Run ``command`` as an MCP server behind a recording proxy on ``stdin``/``stdout`` (ours by
    default) and write what passes to ``cassette_path``. The server's stderr is passed through to
    ``stderr`` (ours by default). Returns when the client closes ``stdin``, the server exits, or
    SIGTERM/SIGINT/SIGHUP arrives; the server is stopped and the cassette saved before it returns.

    Raises ConfigError for an unparsable command and ServerStartError when it cannot be started.
    """
    redactor = redactor if redactor is not None else Redactor()
    # What is handed to the server in its environment is secret wherever it shows up, unless
    # declared public (``--env-public``).
    secret_env = env_secrets(env, public_env)
    if secret_env:
        redactor = redactor.with_env_values(secret_env)
    stdin = stdin if stdin is not None else sys.stdin.buffer
    stdout = stdout if stdout is not None else sys.stdout.buffer
    stderr = stderr if stderr is not None else sys.stderr.buffer
    server = spawn_server(command, cwd=cwd, env=env, isolate=isolate)
    rec = _Recording(
        server.argv, str(cassette_path), redactor, stdin, stdout, stderr, save_every, save_seconds, thread_rules
    )
    rec.tape.t0 = time.monotonic()
    popen = server.popen
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    server_in, server_out = popen.stdin, popen.stdout
    tail = StderrTail(popen.stderr, echo=stderr)
    tail.start()

    def client_closed() -> None:
        try:
            server_in.close()  # the client's EOF is the server's EOF: the spec's shutdown starts here
        except OSError:
            pass
        rec.end("client")

    threads = [
        threading.Thread(
            target=rec.pump,
            args=(stdin, server_in, rec.tape.client_line, client_closed, max_message),
            daemon=True,
            name="record-in",
        ),
        threading.Thread(
            target=rec.pump,
            args=(server_out, stdout, rec.tape.server_line, lambda: rec.end("server"), max_message),
            daemon=True,
            name="record-out",
        ),
        threading.Thread(target=rec.saver, daemon=True, name="record-save"),
    ]
    restore_signals = trap_stop_signals(lambda: rec.end("signal"))
    try:
        for thread in threads:
            thread.start()
        while not rec.done.wait(0.2):  # a timed wait lets signal handlers run promptly
            pass
    finally:
        try:
            # What was recorded is on disk before the server is given its grace to stop: a client
            # that kills this proxy when its own grace ends (the 1.x SDK: 2 s after closing our
            # stdin, then SIGKILL) loses none of it while a server with timers running stops.
            rec.save(final=True)
            status = server.stop(grace=shutdown_grace)
            threads[1].join(2.0)  # the server's last answers still reach the client and the tape
            threads[2].join(1.0)
            tail.join(1.0)
            rec.save(final=True)
        finally:
            restore_signals()
    failure = ""
    if status not in (None, 0):
        what = f"the server exited (status {status})" + ("" if rec.saved else " before anything was recorded")
        failure = server.start_failure(what, tail.text())
    return RecordSummary(
        server_failure=failure,
        meta=rec.meta,
        path=str(cassette_path),
        interactions=len(rec.tape.interactions()),
        unanswered=rec.tape.unanswered,
        saved=rec.saved,
        server_exit_status=status,
        stderr_tail=tail.text(),
        non_json_lines=rec.tape.non_json_lines,
        ended_by=rec.ended_by,
    )


def _read_lines(
    src: IO[bytes], cap: int = MAX_MESSAGE, dropped: Callable[[], None] = lambda: None
) -> Iterator[list[bytes]]:
    """The complete lines that have arrived on ``src``, a batch per read, as soon as they arrive;
    at EOF, a last line without its newline. A line longer than ``cap`` is let go as it grows
    and never handed on (``dropped`` is told): a line that never ends is not held whole.

    Reads the file descriptor directly when there is one: a thread parked in a buffered read of
    our stdin holds that buffer's lock, and the interpreter aborts at exit when it finds it held.
    """
    try:
        fd = src.fileno()
    except (OSError, ValueError, AttributeError):
        fd = -1
    if fd < 0:
        for line in iter(lambda: src.readline(cap + 1), b""):
            if len(line) > cap:
                dropped()
                while line and not line.endswith(b"\n"):
                    line = src.readline(cap + 1)
                continue
            yield [line]
        return
    partial: list[bytes] = []  # a long line arrives in pieces: joined once, at its end
    size = 0  # of ``partial``
    dropping = False  # the line being read passed ``cap``: skipped to its end
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        if b"\n" not in chunk:
            if not dropping:
                partial.append(chunk)
                size += len(chunk)
                if size > cap:
                    dropped()
                    partial, size, dropping = [], 0, True
            continue
        lines = chunk.split(b"\n")
        last = lines.pop()
        if dropping:
            del lines[0]  # the end of the dropped line
            dropping = False
        elif partial:
            partial.append(lines[0])
            lines[0] = b"".join(partial)
        kept = []
        for line in lines:
            if len(line) > cap:
                dropped()
            else:
                kept.append(line + b"\n")
        partial, size = ([last], len(last)) if last else ([], 0)
        if size > cap:
            dropped()
            partial, size, dropping = [], 0, True
        if kept:
            yield kept
    if partial and not dropping:
        yield [b"".join(partial)]


def _main(argv: Sequence[str]) -> int:
    """``--server CMD --cassette PATH [--redact KEY]... [--redact-pattern RE]... [--cwd DIR]
    [--isolate] [--shutdown-grace S]``: the proxy without the CLI, for tests that run it as a
    subprocess. The real command line is ``mcp-replay record``."""
    args = list(argv)
    opts: JSONObject = {"keys": [], "patterns": [], "isolate": False, "cwd": None, "grace": SHUTDOWN_GRACE}
    command = cassette = None
    while args:
        flag = args.pop(0)
        if flag == "--isolate":
            opts["isolate"] = True
            continue
        value = args.pop(0)
        if flag == "--server":
            command = value
        elif flag == "--cassette":
            cassette = value
        elif flag == "--redact":
            opts["keys"].append(value)
        elif flag == "--redact-pattern":
            opts["patterns"].append(value)
        elif flag == "--cwd":
            opts["cwd"] = value
        elif flag == "--shutdown-grace":
            opts["grace"] = float(value)
        else:
            raise SystemExit(f"unknown option {flag}")
    if not command or not cassette:
        raise SystemExit("--server and --cassette are required")
    try:
        summary = record_stdio(
            command,
            cassette,
            redactor=Redactor(keys=opts["keys"], patterns=opts["patterns"]),
            cwd=opts["cwd"],
            isolate=opts["isolate"],
            shutdown_grace=opts["grace"],
        )
    except ReplayError as exc:
        sys.stderr.write(f"mcp-replay: error: {exc.one_line()}\n")
        return exc.exit_code
    sys.stderr.write(f"mcp-replay: {summary.line}\n")
    return 0
