"""Recording over stdio: a transparent proxy that an MCP client launches in place of the server.

Every byte goes both ways unchanged (line by line, flushed per line, never re-encoded), and every
message is teed into a cassette: a client request paired with the server's response by id
(``request``), a client notification (``notification``), a server-to-client request paired with
the client's answer (``server-request``) and a server notification (``server-notification``).
JSON-RPC ids are scoped per direction, so a server request may reuse the id of an open client
request and still be paired right.

Redaction happens before anything is written, and each interaction is on disk as it completes
(``record/writer.py``). The session ends when the client closes our stdin, when the server exits,
or on SIGTERM/SIGINT/SIGHUP: the cassette is then complete on disk and its line is printed before
the server is stopped. That order matters: the official SDK clients close the server's stdin,
wait 2 s, send SIGTERM, wait 2 s and send SIGKILL, and a server slow to exit must not take the
recording with it. A stop signal while the server is being stopped hurries that stop. A request
that never got an answer is left out (a cassette line promises an answer to compare against) and
counted in the header's ``unanswered``. The server lives exactly as long as the client's session.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from mcp_replay_action.cassette.header import CassetteHeader, recorded_line
from mcp_replay_action.compare.correlate import ThreadRules
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.record.tape import Tape
from mcp_replay_action.record.writer import HOLD_SECONDS, TapeWriter
from mcp_replay_action.redact import Redactor, env_secrets
from mcp_replay_action.redact_argv import redact_argv
from mcp_replay_action.transport import MAX_MESSAGE, message_too_large
from mcp_replay_action.transport.process import SHUTDOWN_GRACE, StderrTail, spawn_server, trap_stop_signals


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
    write_error: str = ""  # why the cassette could not be written (the session went on without it)

    @property
    def line(self) -> str:
        """The line a recording ends with: how many interactions went to which file, in which era."""
        return recorded_line(self.path, self.interactions if self.saved else 0, self.meta, unanswered=self.unanswered)


class _Recording:
    """One proxy session: the server, the two pumps, the tape and its writer."""

    def __init__(
        self,
        argv: list[str],
        path: str,
        redactor: Redactor,
        stderr: IO[bytes] | None,
        hold: float,
        thread_rules: ThreadRules | None = None,
    ) -> None:
        self.argv = argv
        self.thread_rules = thread_rules  # stored in the header (``threading``) when declared
        # Once: the header must not carry a secret flag, and its hits count once.
        self.header = CassetteHeader(transport="stdio", server=redact_argv(redactor, argv))
        self.path = path
        self.redactor = redactor
        self.stderr = stderr
        self.tape = Tape(redactor)
        self.writer = TapeWriter(self.tape, path, self.meta, hold=hold)
        self.done = threading.Event()
        self.hurry = threading.Event()  # a stop signal came: the server's stop is hurried
        self.ended_by = ""

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
        longer than ``cap`` is neither (said on stderr). Once a batch of lines has gone on, what
        it completed goes to disk."""
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
                # answered before it was recorded would lose its pairing). And what the lines
                # completed goes to disk first: an answer the client has is never lost.
                for line in lines:
                    tee(line, seen)
                self.writer.flush(header=False)
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

    def on_stop_signal(self) -> None:
        """SIGINT/SIGTERM/SIGHUP: the session ends, and the server's stop hurries (whoever sent
        it, a client's shutdown or a supervisor, kills us soon if we linger)."""
        self.hurry.set()
        self.end("signal")

    def meta(self, interactions: Sequence[Interaction]) -> JSONObject:
        """The header of ``interactions``, with what the tape counted so far."""
        extra: JSONObject = {"unanswered": self.tape.unanswered}
        if self.tape.unmatched_responses:
            extra["unmatched_responses"] = self.tape.unmatched_responses
        if self.tape.non_json_lines:
            extra["non_json_lines"] = self.tape.non_json_lines
        if self.tape.too_deep:
            extra["too_deep"] = self.tape.too_deep
        if self.thread_rules:
            extra["threading"] = self.thread_rules.to_json()
        return self.header.meta(interactions, extra=extra, redaction=self.redactor.rules())

    def summary_line(self) -> str:
        return recorded_line(
            self.path,
            len(self.tape.placed()) if self.writer.saved else 0,
            self.writer.meta,
            unanswered=self.tape.unanswered,
        )


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
    hold: float = HOLD_SECONDS,
    shutdown_grace: float = SHUTDOWN_GRACE,
    max_message: int = MAX_MESSAGE,
    thread_rules: ThreadRules | None = None,
    announce: Callable[[str], None] | None = None,
) -> RecordSummary:
    """Run ``command`` as an MCP server behind a recording proxy on ``stdin``/``stdout`` (ours by
    default) and write what passes to ``cassette_path``, each interaction as it completes. The
    server's stderr is passed through to ``stderr`` (ours by default). Returns when the client
    closes ``stdin``, the server exits, or SIGTERM/SIGINT/SIGHUP arrives, once the server is
    stopped. ``announce`` is given the recording's line as soon as the session has ended and the
    cassette is complete (before the server is stopped), and again if answers that came while it
    stopped changed it; not when the server failed before anything was recorded (the caller
    says that, from ``server_failure``).

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
    rec = _Recording(server.argv, str(cassette_path), redactor, stderr, hold, thread_rules)
    rec.tape.t0 = time.monotonic()
    popen = server.popen
    assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
    server_in, server_out = popen.stdin, popen.stdout
    tail = StderrTail(popen.stderr, echo=stderr)
    tail.start()
    announced = ""

    def client_closed() -> None:
        try:
            server_in.close()  # the client's EOF is the server's EOF: the spec's shutdown starts here
        except OSError:
            pass
        rec.end("client")

    pumps = [
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
    ]
    restore_signals = trap_stop_signals(rec.on_stop_signal)
    try:
        rec.writer.start()
        for pump in pumps:
            pump.start()
        while not rec.done.wait(0.2):  # a timed wait lets signal handlers run promptly
            pass
        # The session is over: everything complete goes to disk, and its line is said, now. A
        # client's shutdown kills us a few seconds from here, whatever the server does.
        rec.writer.flush(final=True)
        if rec.ended_by != "server" and announce is not None:
            announced = rec.summary_line()
            announce(announced)
    finally:
        try:
            # What was recorded is on disk before the server is given its grace to stop (also when
            # the wait above ended by an error): a client kills us when its own grace ends.
            rec.writer.flush(final=True)
            status = server.stop(grace=shutdown_grace, hurry=rec.hurry)
            pumps[1].join(2.0)  # the server's last answers still reach the client and the tape
            tail.join(1.0)
            rec.writer.close()
        finally:
            restore_signals()
    failure = ""
    if status not in (None, 0):
        what = f"the server exited (status {status})" + ("" if rec.writer.saved else " before anything was recorded")
        failure = server.start_failure(what, tail.text())
    line = rec.summary_line()
    if announce is not None and line != announced and not (failure and not rec.writer.saved):
        announce(line)
    return RecordSummary(
        server_failure=failure,
        meta=rec.writer.meta,
        path=str(cassette_path),
        interactions=len(rec.tape.placed()),
        unanswered=rec.tape.unanswered,
        saved=rec.writer.saved,
        server_exit_status=status,
        stderr_tail=tail.text(),
        non_json_lines=rec.tape.non_json_lines,
        ended_by=rec.ended_by,
        write_error=rec.writer.error.strerror or str(rec.writer.error) if rec.writer.error else "",
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
