"""The stdio transport: an MCP server as a subprocess speaking newline-delimited JSON-RPC.

Starting, watching and stopping the process is ``transport/process.py``'s job.
"""

from __future__ import annotations

import collections
import json
import os
import select
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from mcp_replay_action.errors import (
    MessageTooDeep,
    MessageTooLarge,
    ServerExited,
    ServerExitedAtStart,
    ServerStartError,
    TransportTimeout,
)
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.transport import MAX_MESSAGE, message_too_large
from mcp_replay_action.transport.headline import headline
from mcp_replay_action.transport.process import (
    SHUTDOWN_GRACE,
    ServerProcess,
    StderrTail,
    run_setup,
    spawn_server,
    split_command,
    usable_cpus,
    wait_leader,
)
from mcp_replay_action.values.depth import text_depth, too_deep
from mcp_replay_action.wire.jsonrpc import encode, is_message

if TYPE_CHECKING:
    from mcp_replay_action.values.beside import Reader
    from mcp_replay_action.values.prepared import Prepared

# ---------------------------------------------------------------------------------------------
# The transport
# ---------------------------------------------------------------------------------------------


def parse_line(line: bytes | bytearray) -> JSON:
    """``json.loads(line)``, exactly, without its look for a UTF-16 or UTF-32 encoding on a line
    that cannot be one (see ``_utf8_object``). Raises ValueError (``JSONDecodeError``,
    ``UnicodeDecodeError``) as ``loads`` does."""
    if _utf8_object(line):
        return _DECODE(line.decode("utf-8", "surrogatepass"))
    return json.loads(line)


def _utf8_object(line: bytes | bytearray) -> bool:
    """Whether ``json.loads`` reads ``line`` as UTF-8 without looking further:
    ``json.detect_encoding`` calls a line UTF-8 when it starts with ``{`` and its second byte is
    not NUL, and ``loads`` then decodes it with ``surrogatepass``."""
    return line[:1] == b"{" and line[1:2] != b"\x00"


_CHUNK = 1 << 16
_DECODE = json.JSONDecoder().decode  # what json.loads decodes text with, given no options
_CRASH_CHECK = 0.25  # seconds between looks at whether a silent server is still alive
# How long ``receive`` looks at the pipe without sleeping before it sleeps in select(). A process
# that sleeps until the server writes is woken by the kernel, and on a VM that wake-up costs tens
# of microseconds per answer, about as much as a fast server takes to answer at all; a look costs
# a quarter of a microsecond. Only with a second CPU for the server to run on, and only while it
# pays (see ``_Poller``).
POLL_FOR = 100e-6
# After this many looks in a row that ended without an answer, ``receive`` sleeps at once, until
# an answer comes within ``POLL_FOR`` of the sleep again: a slow server costs no busy CPU.
POLL_MISSES = 4


class StdioTransport:
    """A server subprocess spoken to over stdin/stdout with newline-delimited JSON-RPC.

    ``command`` is a string (split like a shell would, so ``node dist/index.js`` or
    ``uvx my-server`` work unchanged) or an argv. The server runs in ``cwd`` with our environment
    plus ``env``; ``setup``, when given, runs to completion before each start. ``receive`` returns messages in arrival order; lines on stdout that are not
    JSON-RPC are skipped and counted. stderr is drained on a thread and only its last
    ``stderr_tail_lines`` are kept. ``start`` watches the first ``exit_check`` seconds for a server
    that dies at once (none by default: waiting would cost every replay that time, and a server
    that exits before it says anything is reported as a start-up failure by whichever call sees it).

    stdout is read in the caller's thread with ``select``: a replay is lock-step, and handing every
    message across threads would cost more than the parsing. A fast server's answer is awaited by
    polling first (``POLL_FOR``). It cannot deadlock: ``send`` keeps reading stdout into a buffer
    for as long as the server's stdin is full. One thread at a time may use a transport.

    ``receive``'s ``prepared``, when given, is asked for each line that grows long
    (``Limits.beside_from``) which long text it most likely holds (a replay knows the recording it
    awaits): the rest of the line is then read beside that text as it arrives (``beside.Reader``:
    the bytes that spell it are let go as they come).

    A line longer than ``max_message`` bytes is dropped as it grows, whichever way it is held, and
    stdout read no further: ``receive`` raises MessageTooLarge, which names the cap.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        isolate: bool = False,
        setup: str | Sequence[str] | None = None,
        setup_timeout: float = 120.0,
        exit_check: float = 0.0,
        stderr_tail_lines: int = 40,
        shutdown_grace: float = SHUTDOWN_GRACE,
        max_message: int = MAX_MESSAGE,
    ) -> None:
        self.argv = split_command(command)
        self.max_message = max_message
        self.cwd = cwd
        self.env = dict(env) if env else None
        self.isolate = isolate
        self.setup = split_command(setup) if setup else None
        self.setup_timeout = setup_timeout
        self.exit_check = exit_check
        self.stderr_tail_lines = stderr_tail_lines
        self.shutdown_grace = shutdown_grace
        self._server: ServerProcess | None = None
        self._stderr: StderrTail | None = None
        self._in_fd = -1  # the server's stdin (ours to write), non-blocking
        self._out_fd = -1  # the server's stdout (ours to read)
        self._messages: collections.deque[JSONObject] = collections.deque()
        # The start of a line not yet ended by \n, grown in place: a long line's pieces and their
        # join are never held at once.
        self._partial = bytearray()
        self._eof = False  # the server's stdout has closed
        self._closed = False
        self.non_json_lines = 0
        self.last_non_json = ""
        self._heard = False  # the server has sent at least one message
        self._poller: _Poller | None = None  # set by start() when looking without sleeping may pay
        # What the replay prepared for the answer it awaits, while ``receive`` is given it.
        self._prepared: Prepared | None = None
        # The line not yet ended, once long and read beside the text ``_prepared`` named (it then
        # holds the line's bytes, not ``_partial``); whether ``_prepared`` was asked for this line;
        # the line's first bytes, to name it should it be no message.
        self._reader: Reader | None = None
        self._asked = False
        self._head = b""
        # Bytes of the line not yet ended, however they are held (``_partial`` or the reader);
        # past ``max_message`` the line is dropped and stdout read no further.
        self._line_size = 0
        self._too_large = False

    # -- lifecycle --------------------------------------------------------------------------

    def start(self) -> None:
        """Spawn the server. Raises ServerStartError when it cannot start or exits at once."""
        if self._server is not None:
            raise RuntimeError("StdioTransport.start() called twice")
        if self.setup:
            run_setup(self.setup, cwd=self.cwd, env=self.env, timeout=self.setup_timeout)
        server = spawn_server(self.argv, cwd=self.cwd, env=self.env, isolate=self.isolate)
        self._server = server
        popen = server.popen
        assert popen.stdin is not None and popen.stdout is not None and popen.stderr is not None
        self._in_fd = popen.stdin.fileno()
        self._out_fd = popen.stdout.fileno()
        os.set_blocking(self._in_fd, False)
        self._poller = _Poller.for_fd(self._out_fd)
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
            raise ServerStartError(
                server.start_failure(f"server exited at start-up with status {status}", tail),
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

    def send(self, message: JSONObject) -> None:
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

    def receive(self, timeout: float, prepared: Prepared | None = None) -> JSONObject:
        """The next message from the server, in arrival order.

        Raises TransportTimeout after ``timeout`` seconds, ServerExited once the server's stdout
        has closed and every message it sent before has been returned, MessageTooDeep in the
        place of a line nested too deeply to parse (what follows is read on). A long line read
        meanwhile is decoded beside the text ``prepared`` names (``Prepared.beside``), if any.
        """
        messages = self._messages
        if messages:
            message = messages.popleft()
        else:
            if self._server is None:
                raise RuntimeError("StdioTransport.receive() before start()")
            self._prepared = prepared
            try:
                message = self._receive(timeout)
            finally:
                self._prepared = None
        if type(message) is _TooDeep:
            raise MessageTooDeep(too_deep("a line the server sent", message.depth, to="read"), depth=message.depth)
        return message

    def _receive(self, timeout: float) -> JSONObject:
        messages = self._messages
        deadline = time.monotonic() + timeout
        assert self._server is not None  # ``receive`` looked
        popen = self._server.popen
        poller = self._poller
        waiting = time.perf_counter()
        while not messages:
            if self._eof or self._closed:
                raise self._exited()
            left = deadline - time.monotonic()
            if poller is not None and poller.wait(min(POLL_FOR, left)):
                self._read_chunk()
                continue
            left = deadline - time.monotonic()
            readable, _, _ = select.select([self._out_fd], [], [], min(max(0.0, left), _CRASH_CHECK))
            if readable:
                if poller is not None:
                    poller.woken(time.perf_counter() - waiting)
                self._read_chunk()
            elif popen.poll() not in (None, 0):
                # The server crashed, but something it started (a setsid() grandchild) still holds
                # its stdout open: no EOF will come, and waiting out the timeout would call a crash
                # a timeout. (A clean exit 0 may be a launcher that handed stdout on: keep reading.)
                raise self._exited()
            elif left <= 0 or time.monotonic() >= deadline:
                raise TransportTimeout(f"no message from the server within {timeout:g} s")
        return messages.popleft()

    def _read_chunk(self) -> None:
        """Read what stdout has, and queue every message on the complete lines in it."""
        if self._too_large:
            return
        try:
            chunk = os.read(self._out_fd, _CHUNK)
        except OSError:
            chunk = b""
        if not chunk:
            self._eof = True
            if self._partial or self._reader is not None:  # a last line without its newline
                self._take_partial()
            return
        if b"\n" not in chunk:
            self._grow(chunk)  # a long line arriving in pieces
            return
        lines = chunk.split(b"\n")
        last = lines.pop()
        if self._partial or self._reader is not None:
            self._grow(lines.pop(0))
            self._take_partial()
        for line in lines:
            self._take_line(line)
        if last:  # most reads end on a newline
            self._grow(last)

    def _grow(self, piece: bytes) -> None:
        """Add ``piece`` to the line not yet ended. Once that line is long and ``receive``'s
        ``prepared`` names the text it most likely holds, it is read beside that text as it comes
        (``beside.Reader``): the bytes that spell the text are let go as they arrive."""
        if self._too_large:
            return
        self._line_size += len(piece)
        if self._line_size > self.max_message:
            self._drop_line()
            return
        if self._reader is not None:
            self._reader.feed(piece)
            return
        self._partial += piece
        prepared = self._prepared
        if prepared is None or self._asked or len(self._partial) < prepared.limits.beside_from:
            return
        self._asked = True
        known = prepared.beside(len(self._partial)) if _utf8_object(self._partial) else None
        if known is not None:
            from mcp_replay_action.values.beside import Reader

            self._head = bytes(self._partial[:1024])  # ``_count_stray`` keeps 200 characters
            self._reader = Reader(known, self._partial)
            self._partial = bytearray()

    def _take_partial(self) -> None:
        """Queue the line that ``_partial`` holds, which may be a long one grown from many pieces:
        its bytes are let go once decoded, before the parse builds the value, so a 50 MiB answer
        is held twice at most (text and value), not three times."""
        reader, self._reader, self._asked, self._line_size = self._reader, None, False, 0
        if self._too_large:
            return
        if reader is not None:
            try:
                if self._take_beside(reader):
                    return
            except RecursionError:
                pass  # decoded plainly below, which says how deep it is
            line = reader.line()
        else:
            line, self._partial = self._partial, bytearray()
        if not _utf8_object(line):
            self._take_line(line)
            return
        try:
            text = line.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            self._take_line(line)  # not JSON: counted as a stray line, as any other
            return
        del line
        try:
            value = _DECODE(text)
        except ValueError:
            self._count_stray(text)  # it starts with "{": never blank
            return
        except RecursionError:
            self._messages.append(_TooDeep(text_depth(text)))
            return
        self._take_value(value, text)

    def _take_beside(self, reader: Reader) -> bool:
        """Queue what the line ``reader`` read holds, decoded beside its text (``Reader.finish``,
        or ``decode_beside`` over the whole line, which also finds a text whose start changed):
        False when it cannot be decoded so with certainty (``reader.line()`` gives it back)."""
        from mcp_replay_action.values.beside import decode_beside

        value = reader.finish()
        if value is None:
            value = decode_beside(reader.line(), reader.known)
            if value is None:
                return False
        if self._prepared is not None:
            self._prepared.taken["beside"] += 1
        self._take_value(value, self._head)
        return True

    def _drop_line(self) -> None:
        """The line passed ``max_message``: let go of it, and read no further (``receive`` says
        why once the messages before it are taken)."""
        self._reader, self._partial, self._asked, self._line_size = None, bytearray(), False, 0
        self._too_large = self._eof = True

    def _take_line(self, line: bytes | bytearray) -> None:
        if self._too_large:
            return
        if len(line) > self.max_message:
            self._drop_line()
            return
        try:
            value = parse_line(line)
        except ValueError:
            if line.strip():
                self._count_stray(line)
            return
        except RecursionError:
            self._messages.append(_TooDeep(text_depth(line)))
            return
        self._take_value(value, line)

    def _take_value(self, value: JSON, line: bytes | bytearray | str) -> None:
        if type(value) is dict and is_message(value):
            self._heard = True
            self._messages.append(value)
        elif type(value) is list and value and all(is_message(v) for v in value):
            self._heard = True
            self._messages.extend(value)  # a batch (protocol versions before 2025-06-18)
        else:
            self._count_stray(line)

    def _count_stray(self, line: bytes | bytearray | str) -> None:
        if isinstance(line, str):  # decoded with surrogatepass: these are the line's own bytes
            line = line.encode("utf-8", "surrogatepass")
        self.non_json_lines += 1
        self.last_non_json = line.decode("utf-8", "replace").strip()[:200]

    def _exited(self, what: str = "") -> ServerExited:
        if self._too_large:
            tail = self._stderr.text() if self._stderr else ""
            return MessageTooLarge(message_too_large(self.max_message, "line"), stderr_tail=tail)
        status = self._exit_status(wait=1.0)
        if self._stderr is not None:
            self._stderr.join(0.5)  # let the last words of a crash reach the tail
        tail = self._stderr.text() if self._stderr else ""
        if not what:
            what = f"the server exited with status {status}" if status is not None else "the server closed its stdout"
        if not self._heard and status is not None and self._server is not None:
            return ServerExitedAtStart(
                self._server.start_failure(f"server exited at start-up with status {status}", tail),
                stderr_tail=tail,
                exit_status=status,
            )
        why = headline(tail)
        return ServerExited(what + (f"; stderr: {why}" if why else ""), stderr_tail=tail, exit_status=status)

    def _exit_status(self, wait: float = 0.0) -> int | None:
        if self._server is None:
            return None
        popen = self._server.popen
        if popen.returncode is None and wait > 0:
            wait_leader(popen, wait)
        return popen.poll()

    # -- facts ------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._server.pid if self._server else None

    def diagnostics(self) -> JSONObject:
        """``stderr_tail``, ``exit_status``, ``non_json_lines`` (and the last such line)."""
        return {
            "stderr_tail": self._stderr.text() if self._stderr else "",
            "exit_status": self._exit_status(),
            "non_json_lines": self.non_json_lines,
            "last_non_json_line": self.last_non_json,
        }


class _TooDeep(dict):  # type: ignore[type-arg]
    """Queued in the place of a line too deep to parse: ``receive`` raises MessageTooDeep there."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.depth = depth


class _Poller:
    """Looks at a pipe without sleeping, for as long as that pays: ``wait`` polls for up to a
    given time, and stops being tried after ``POLL_MISSES`` waits in a row saw nothing (the
    server is slower than a look lasts); ``woken`` tries it again once a sleep ended sooner than
    a look would have."""

    def __init__(self, poll: Callable[[float], list[tuple[int, int]]]) -> None:
        self._poll = poll
        self._misses = 0

    @classmethod
    def for_fd(cls, fd: int) -> _Poller | None:
        """A poller for ``fd``, or None where looking cannot pay: one CPU (the server needs it
        to answer while we look), or no ``select.poll``."""
        if not hasattr(select, "poll") or usable_cpus() < 2:
            return None
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        return cls(poll.poll)

    def wait(self, seconds: float) -> bool:
        """Whether the pipe became readable (or closed) within ``seconds`` of polling; False at
        once while looking does not pay."""
        if self._misses >= POLL_MISSES:
            return False
        poll, clock = self._poll, time.perf_counter
        end = clock() + seconds
        while not poll(0):
            if clock() >= end:
                self._misses += 1
                return False
        self._misses = 0
        return True

    def woken(self, waited: float) -> None:
        """The pipe became readable ``waited`` seconds after the wait began, in a sleep: a wait
        that short would have been caught by a look, so looking is tried again."""
        if waited < POLL_FOR:
            self._misses = 0
