"""The stdio transport against fault-injection fakes (tests/fakes/) and process-group shutdown."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.errors import ConfigError, ServerExited, ServerStartError, TransportTimeout
from mcp_replay_action.transport import stdio
from mcp_replay_action.transport.process import spawn_server, split_command, terminate_group
from mcp_replay_action.transport.stdio import StdioTransport
from mcp_replay_action.wire.jsonrpc import (
    decode,
    decode_all,
    encode,
)

FAKES = Path(__file__).parent / "fakes"
PY = sys.executable

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits"), pytest.mark.timeout(60)]


def is_response(msg: object) -> bool:
    """An answer to a request: ``id`` and ``result`` or ``error``, no ``method``."""
    return isinstance(msg, dict) and "method" not in msg and "id" in msg and ("result" in msg or "error" in msg)


def fake(name: str, *args: str) -> list[str]:
    return [PY, str(FAKES / f"{name}.py"), *args]


def request(id_: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


INIT = request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}})


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] != b"Z"


def wait_dead(pid: int, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture(params=["look", "sleep"])
def transports(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Transports to start, closed after the test. Every test runs twice: with answers awaited by
    polling the pipe first (as with a second CPU) and by sleeping in select() at once (one CPU)."""
    monkeypatch.setattr(stdio, "usable_cpus", lambda: 2 if request.param == "look" else 1)
    started: list[StdioTransport] = []

    def make(command: Any, **kw: Any) -> StdioTransport:
        t = StdioTransport(command, **kw)
        started.append(t)
        return t

    yield make
    for t in started:
        t.close()


# -- jsonrpc helpers -----------------------------------------------------------------------------


def test_jsonrpc_classification_and_wire_format():
    req = request(1, "tools/list")
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    ok = {"jsonrpc": "2.0", "id": 1, "result": {}}
    err = {"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}}
    assert [is_response(m) for m in (req, note, ok, err)] == [False, False, True, True]
    assert not is_response([ok]) and not is_response("x")
    line = encode({"jsonrpc": "2.0", "id": 1, "result": {"t": "é"}})
    assert line == '{"jsonrpc":"2.0","id":1,"result":{"t":"é"}}\n'.encode()
    assert decode(line) == {"jsonrpc": "2.0", "id": 1, "result": {"t": "é"}}
    assert decode(b"Server ready\n") is None
    assert decode(b'{"level": "info"}') is None  # JSON, but no message
    assert decode(b"[1, 2]") is None
    assert decode(b"\xff\xfe") is None
    assert decode_all(b'[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","method":"b"}]') == [
        {"jsonrpc": "2.0", "method": "a"},
        {"jsonrpc": "2.0", "method": "b"},
    ]


def test_split_command():
    assert split_command("node dist/index.js --flag 'a b'") == ["node", "dist/index.js", "--flag", "a b"]
    assert split_command(("uvx", "my-server")) == ["uvx", "my-server"]
    with pytest.raises(ConfigError, match="No closing quotation"):
        split_command("node 'oops")
    with pytest.raises(ConfigError, match="empty"):
        split_command("   ")


# -- a well-behaved server -------------------------------------------------------------------------


def test_round_trip_in_order(transports):
    t = transports(fake("echo_server"))
    t.start()
    t.send(INIT)
    assert t.receive(10)["result"]["serverInfo"]["name"] == "echo"
    t.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, 51):
        t.send(request(i, "tools/call", {"name": "echo", "arguments": {"i": i}}))
    answers = [t.receive(10) for _ in range(50)]
    assert [a["id"] for a in answers] == list(range(1, 51))
    assert answers[-1]["result"]["structuredContent"] == {"i": 50}
    with pytest.raises(TransportTimeout):
        t.receive(0.1)
    diag = t.diagnostics()
    assert diag["exit_status"] is None and diag["non_json_lines"] == 0
    t.close()
    t.close()  # idempotent
    assert t.diagnostics()["exit_status"] == 0  # it left by itself once stdin closed


def test_big_messages_both_ways_without_reading_in_between_do_not_deadlock(transports):
    # 20 requests of 200 kB sent back to back: the server answers each (twice the size) and soon
    # blocks on a full stdout, stops reading its stdin, and our write would block forever if send
    # did not keep draining stdout meanwhile.
    t = transports(fake("echo_server"))
    t.start()
    blob = "x" * 200_000
    for i in range(20):
        t.send(request(i, "tools/call", {"name": "echo", "arguments": {"blob": blob, "i": i}}))
    answers = [t.receive(30) for _ in range(20)]
    assert [a["result"]["structuredContent"]["i"] for a in answers] == list(range(20))
    assert all(a["result"]["structuredContent"]["blob"] == blob for a in answers)


def test_string_command_cwd_env_and_isolation(tmp_path, transports):
    script = tmp_path / "where.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, os, sys
            facts = {k: os.environ.get(k) for k in ("HOME", "TMPDIR", "MCP_TEST_VAR", "PATH")}
            facts["cwd"] = os.getcwd()
            print(json.dumps({"jsonrpc": "2.0", "method": "facts", "params": facts}), flush=True)
            sys.stdin.read()
            """
        )
    )
    # A command string, run from cwd with a relative script path, with one env override.
    t = transports(f"{PY} where.py", cwd=tmp_path, env={"MCP_TEST_VAR": "yes"})
    t.start()
    facts = t.receive(10)["params"]
    assert facts["cwd"] == str(tmp_path)
    assert facts["MCP_TEST_VAR"] == "yes"
    assert facts["HOME"] == os.environ.get("HOME")
    assert facts["PATH"] == os.environ.get("PATH")  # the caller's environment is inherited

    iso = transports([PY, str(script)], isolate=True)
    iso.start()
    facts = iso.receive(10)["params"]
    home, tmp = Path(facts["HOME"]), Path(facts["TMPDIR"])
    assert home != Path(os.environ.get("HOME", "/")) and home.is_dir() and tmp.is_dir()
    iso.close()
    assert not home.exists() and not tmp.exists()  # the scratch dir is removed on close


def test_shutdown_of_a_server_that_leaves_on_stdin_eof_is_quick(transports):
    t = transports(fake("echo_server"))
    t.start()
    started = time.monotonic()
    t.close()
    # No SIGTERM needed: the server saw EOF and left; close must not have waited out the grace.
    assert t.diagnostics()["exit_status"] == 0
    assert time.monotonic() - started < 1.9


# -- start-up failures -------------------------------------------------------------------------------


def test_missing_binary_is_a_one_line_start_error(transports):
    t = transports("no-such-mcp-server-binary --stdio")
    with pytest.raises(ServerStartError) as info:
        t.start()
    assert str(info.value) == "server command not found: no-such-mcp-server-binary"
    assert info.value.one_line() == str(info.value)


def test_missing_working_directory(tmp_path, transports):
    t = transports(fake("echo_server"), cwd=tmp_path / "nope")
    with pytest.raises(ServerStartError, match="working directory not found"):
        t.start()


def test_not_executable(tmp_path, transports):
    script = tmp_path / "server.sh"
    script.write_text("#!/bin/sh\n")
    t = transports(str(script))
    with pytest.raises(ServerStartError, match="not executable"):
        t.start()


def test_a_bare_name_on_path_that_is_not_executable_is_named_with_its_directory(tmp_path, transports):
    (tmp_path / "my-mcp-server").write_text("#!/bin/sh\n")  # mode 644
    t = transports("my-mcp-server --stdio", env={"PATH": f"{tmp_path}:/usr/bin:/bin"})
    with pytest.raises(ServerStartError) as info:
        t.start()
    assert str(info.value) == f"server command is not executable: {tmp_path / 'my-mcp-server'}"


@pytest.mark.skipif(os.geteuid() == 0, reason="root searches any directory; the act CI job runs this as a user")
def test_a_missing_name_is_not_found_even_when_a_path_directory_cannot_be_searched(tmp_path, transports):
    # A runner user whose PATH keeps root's directories (/root/.pyenv/shims) gets EACCES from exec
    # for a name that exists nowhere: still "not found", never "not executable".
    locked = tmp_path / "locked"
    locked.mkdir(mode=0)
    try:
        t = transports("no-such-mcp-server-binary", env={"PATH": f"{locked}:/usr/bin:/bin"})
        with pytest.raises(ServerStartError) as info:
            t.start()
    finally:
        locked.chmod(0o755)
    assert str(info.value) == "server command not found: no-such-mcp-server-binary"


def test_exit_at_start_is_a_start_error_with_stderr_tail(transports):
    t = transports(fake("crash_server", "--at-start"), exit_check=5.0)
    with pytest.raises(ServerStartError) as info:
        t.start()
    err = info.value
    assert err.exit_status == 2
    assert "cannot open config file settings.toml" in err.stderr_tail
    assert str(err) == "server exited at start-up with status 2: fatal: cannot open config file settings.toml"
    assert t.diagnostics()["exit_status"] == 2


# -- faults in a session -----------------------------------------------------------------------------


def test_crash_mid_session_raises_server_exited_with_tail(transports):
    t = transports(fake("crash_server"))
    t.start()
    t.send(INIT)
    assert "result" in t.receive(10)
    t.send(request(1, "tools/call", {"name": "echo"}))
    with pytest.raises(ServerExited) as info:
        t.receive(10)
    assert info.value.exit_status == 3
    assert "RuntimeError: boom in tools/call" in info.value.stderr_tail
    assert "status 3" in str(info.value) and "boom" in str(info.value)
    with pytest.raises(ServerExited):  # and again: the server stays gone
        t.receive(0.1)
    with pytest.raises(ServerExited):
        t.send(request(2, "ping"))
    assert t.diagnostics()["exit_status"] == 3


def test_hang_times_out_and_close_kills_the_whole_group(tmp_path, transports):
    pidfile = tmp_path / "pids"
    # sh -c stands in for npx: the server is a grandchild, and it starts a child of its own.
    t = transports(["sh", "-c", f"{PY} {FAKES / 'hang_server.py'} --child {pidfile}; true"], shutdown_grace=0.3)
    t.start()
    t.send(INIT)
    assert "result" in t.receive(10)
    t.send(request(1, "tools/call", {"name": "echo"}))
    with pytest.raises(TransportTimeout, match="within 0.2 s"):
        t.receive(0.2)
    child = int(pidfile.read_text())
    leader = t.pid
    assert leader is not None and alive(child)
    t.close()  # the server and its child ignore SIGTERM: only SIGKILL of the group ends them
    assert wait_dead(leader) and wait_dead(child)
    assert t.diagnostics()["exit_status"] == -signal.SIGTERM  # sh died of SIGTERM; the rest needed SIGKILL


def test_stderr_flood_does_not_deadlock_and_keeps_a_bounded_tail(transports):
    t = transports(fake("stderr_flood_server", "8"), stderr_tail_lines=5)
    t.start()
    t.send(INIT)
    t.receive(30)
    t.send(request(1, "tools/call", {"name": "echo"}))
    assert t.receive(30)["result"]["content"][0]["text"] == "still here"
    t.close()  # stderr is drained on its own thread: the tail is final once the server is gone
    tail = t.diagnostics()["stderr_tail"].splitlines()
    assert len(tail) <= 5 and tail[-1] == "last words of the flood"


def test_non_json_stdout_is_skipped_and_counted(transports):
    t = transports(fake("noisy_stdout_server"))
    t.start()
    t.send(INIT)
    assert t.receive(10)["id"] == 0
    t.send(request(1, "tools/call", {"name": "echo"}))
    assert t.receive(10)["id"] == 1
    diag = t.diagnostics()
    # banner + structured log + (DEBUG line + [1, 2, 3]); the blank line is not counted
    assert diag["non_json_lines"] == 4
    assert diag["last_non_json_line"] == "[1, 2, 3]"


def test_wrong_id_is_delivered_as_is(transports):
    t = transports(fake("wrong_id_server"))
    t.start()
    t.send(INIT)
    t.receive(10)
    t.send(request(7, "tools/call", {"name": "echo"}))
    assert t.receive(10)["id"] == 1007  # judging it is replay's job; the transport hides nothing


def test_server_request_with_the_same_id_as_a_pending_client_request(transports):
    t = transports(fake("roots_server"))
    t.start()
    t.send(INIT)
    t.receive(10)
    t.send(request(5, "tools/call", {"name": "where"}))
    asked = t.receive(10)
    assert asked["method"] == "roots/list" and asked["id"] == 5
    t.send({"jsonrpc": "2.0", "id": 5, "result": {"roots": [{"uri": "file:///work"}]}})
    answer = t.receive(10)
    assert is_response(answer) and json.loads(answer["result"]["content"][0]["text"]) == ["file:///work"]


def test_notifications_arrive_before_the_response_in_order(transports):
    t = transports(fake("notify_server"))
    t.start()
    t.send(INIT)
    t.receive(10)
    t.send(request(1, "tools/call", {"name": "x", "_meta": {"progressToken": "p1"}}))
    got = [t.receive(10) for _ in range(3)]
    assert [m.get("method") for m in got] == ["notifications/message", "notifications/progress", None]
    assert got[1]["params"]["progressToken"] == "p1"
    assert got[2]["id"] == 1


def test_close_without_start_and_send_before_start():
    t = StdioTransport(fake("echo_server"))
    t.close()
    assert t.diagnostics() == {"stderr_tail": "", "exit_status": None, "non_json_lines": 0, "last_non_json_line": ""}
    with pytest.raises(RuntimeError):
        StdioTransport(fake("echo_server")).send(INIT)


# -- the process helpers ------------------------------------------------------------------------------


def test_spawn_and_terminate_group_directly():
    server = spawn_server([PY, "-c", "import time; time.sleep(600)"], stdin=subprocess.PIPE, stdout=None, stderr=None)
    assert os.getpgid(server.pid) == server.pid  # its own process group
    assert terminate_group(server.popen, grace=0.1) == -signal.SIGTERM
    server.stop()  # idempotent, and forgets the process


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "exit"])
def test_no_server_outlives_the_process_that_started_it(tmp_path, how):
    pidfile = tmp_path / "pids"
    program = textwrap.dedent(
        f"""
        import signal, sys, time
        # Ctrl-C as a terminal delivers it: a job a non-interactive shell put in the background
        # (a CI run started with &) inherits SIGINT ignored, and Python then leaves it ignored.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        from mcp_replay_action.transport.stdio import StdioTransport
        t = StdioTransport([{PY!r}, {str(FAKES / "hang_server.py")!r}, "--child", {str(pidfile)!r}])
        t.start()
        while not open({str(pidfile)!r}, "a+").tell():
            time.sleep(0.02)  # the server has started its child
        print(t.pid, flush=True)
        if {how!r} == "exit":
            sys.exit(0)  # without close(): atexit must stop it
        time.sleep(600)
        """
    )
    parent = subprocess.Popen([PY, "-c", program], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        leader = int(parent.stdout.readline())
        child = int(pidfile.read_text())
        if how != "exit":
            parent.send_signal(getattr(signal, how))
        parent.wait(timeout=20)
        assert wait_dead(leader) and wait_dead(child)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()


def test_a_last_message_without_newline_is_still_delivered(transports):
    code = 'import sys; sys.stdout.write(\'{"jsonrpc":"2.0","method":"bye"}\'); sys.stdout.flush()'
    t = transports([PY, "-c", code], exit_check=0)
    t.start()
    assert t.receive(10) == {"jsonrpc": "2.0", "method": "bye"}
    with pytest.raises(ServerExited, match="status 0"):
        t.receive(10)


def test_a_line_is_parsed_exactly_as_json_loads_parses_it():
    # parse_line skips json.loads' look for UTF-16/32 on lines that cannot be either: the value,
    # or the kind of error, must be loads' own on every sort of line a server may write.
    import random

    from mcp_replay_action.transport.stdio import parse_line

    rnd = random.Random(7)
    texts = ["é", "日本", "\U0001f600", "\\ud800", "plain", '"quoted"', "1.0", "true", "\u2028"]

    def message() -> str:
        body = {"jsonrpc": "2.0", "id": rnd.choice([1, "a", 1.5, None]), "result": {"t": rnd.choice(texts)}}
        text = json.dumps(body, ensure_ascii=rnd.random() < 0.5)
        return text.replace('"\\\\ud800"', '"\\ud800"')

    lines: list[bytes] = [b"", b"{", b"{}", b"{\x00", b"{\x00\x00\x00", b" {}", b"[]", b"\xef\xbb\xbf{}", b"{\xff}"]
    for _ in range(2000):
        text = rnd.choice([message(), "[" + message() + "]", message()[: rnd.randint(0, 30)], "not json"])
        encoding = rnd.choice(["utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "latin-1"])
        try:
            lines.append(text.encode(encoding))
        except UnicodeEncodeError:
            lines.append(text.encode("utf-8", "surrogatepass"))
    for line in lines:
        try:
            expected: object = json.loads(line)
        except ValueError as exc:
            expected = type(exc)
        try:
            got: object = parse_line(line)
        except ValueError as exc:
            got = type(exc)
        assert repr(got) == repr(expected), line


def test_lines_in_any_pieces_are_read_as_json_loads_reads_each_whole_line(tmp_path: Path, transports: Any) -> None:
    # Long lines arrive in many reads and are grown in one buffer whose bytes are let go before
    # the parse: the messages, the stray count and the last stray line must be what splitting
    # the whole stream on newlines and json.loads of each line give.
    import random

    from mcp_replay_action.wire.jsonrpc import is_message

    rnd = random.Random(3)
    big = "x" * 70_000

    def note(text: str) -> bytes:
        return json.dumps({"jsonrpc": "2.0", "method": "n", "params": {"t": text}}).encode()

    shapes = [
        lambda: note("short"),
        lambda: note(big + str(rnd.random())),
        lambda: json.dumps([{"jsonrpc": "2.0", "method": "b", "params": {"t": big}}]).encode(),
        lambda: b'{"jsonrpc": "2.0", "method": "s", "params": {"t": "\xed\xa0\x80' + big.encode() + b'"}}',
        lambda: b'{"jsonrpc": "2.0", "method": "bad", "params": {"t": "\xff' + big.encode() + b'"}}',
        lambda: b"{not json " + big.encode() + b"   ",
        lambda: json.dumps({"not": "a message", "t": big}).encode(),
        lambda: b"plain words on stdout",
        lambda: b"   ",
        lambda: json.dumps({"jsonrpc": "2.0", "method": "w", "params": {"t": big}}).encode("utf-16"),
    ]
    lines = [rnd.choice(shapes)() for _ in range(60)]
    stream = b"\n".join(lines) + rnd.choice([b"\n", b""])
    expected: list[Any] = []
    strays = 0
    last = ""
    for line in stream.split(b"\n"):
        try:
            value = json.loads(line)
        except ValueError:
            value = None
            if not line.strip():
                continue
        if type(value) is dict and is_message(value):
            expected.append(value)
        elif type(value) is list and value and all(is_message(v) for v in value):
            expected.extend(value)
        else:
            strays += 1
            last = line.decode("utf-8", "replace").strip()[:200]
    (tmp_path / "stream").write_bytes(stream)
    writer = (
        "import os, random, sys, time\n"
        f"data = open({str(tmp_path / 'stream')!r}, 'rb').read()\n"
        "rnd = random.Random(9)\n"
        "i = 0\n"
        "while i < len(data):\n"
        "    n = rnd.choice([1, 7, 4096, 65536, 100000, 300000])\n"
        "    sys.stdout.buffer.write(data[i:i + n]); sys.stdout.buffer.flush(); i += n\n"
        "    if rnd.random() < 0.1: time.sleep(0.001)\n"
    )
    t = transports([PY, "-c", writer], exit_check=0)
    t.start()
    got: list[Any] = []
    with pytest.raises(ServerExited):
        while True:
            got.append(t.receive(20))
    assert got == expected
    assert (t.non_json_lines, t.last_non_json) == (strays, last)


def test_polling_stops_after_misses_in_a_row_and_resumes_after_a_quick_wake() -> None:
    """A server slower than a look costs no busy CPU: after POLL_MISSES empty looks in a row,
    ``wait`` returns at once without polling, until a sleep ends within POLL_FOR of its start;
    a look that finds the pipe readable says so and starts the count again."""
    ready = [False]
    polls = [0]

    def poll(timeout: float) -> list[tuple[int, int]]:
        polls[0] += 1
        return [(3, 1)] if ready[0] else []

    poller = stdio._Poller(poll)
    for _ in range(stdio.POLL_MISSES):
        assert poller.wait(20e-6) is False
    before = polls[0]
    assert before >= stdio.POLL_MISSES and poller.wait(1.0) is False and polls[0] == before
    poller.woken(stdio.POLL_FOR * 2)  # a slow answer: still not looking
    assert poller.wait(1.0) is False and polls[0] == before
    poller.woken(stdio.POLL_FOR / 2)  # an answer a look would have caught: looking again
    ready[0] = True
    assert poller.wait(1.0) is True and polls[0] == before + 1
    ready[0] = False
    for _ in range(stdio.POLL_MISSES - 1):
        assert poller.wait(0.0) is False
    ready[0] = True
    assert poller.wait(0.0) is True  # one short of giving up, then found: the count starts again
    ready[0] = False
    for _ in range(stdio.POLL_MISSES - 1):
        assert poller.wait(0.0) is False
    assert polls[0] > before + 2 * stdio.POLL_MISSES - 2


def test_no_polling_on_one_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio, "usable_cpus", lambda: 1)
    assert stdio._Poller.for_fd(0) is None
    monkeypatch.setattr(stdio, "usable_cpus", lambda: 2)
    assert isinstance(stdio._Poller.for_fd(0), stdio._Poller)


def test_a_long_line_is_decoded_beside_the_text_expected(tmp_path, transports):
    # A real server writes long lines: its answer as expected, changed in one record, a long line
    # that is JSON but no message, and with nothing expected. Each arrives as json.loads reads it;
    # the one the expected text spells holds that very text.
    from mcp_replay_action.values.limits import Limits
    from mcp_replay_action.values.prepared import Prepared

    known = json.dumps({"records": [{"id": i, "name": f"item-{i}", "note": 'é "q"'} for i in range(40000)]})
    changed = known.replace('"item-20000"', '"item-x"')
    assert len(known) > Limits().beside_from

    def answer(id_: int, text: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": id_, "result": {"content": [{"type": "text", "text": text}]}}

    lines = [
        json.dumps(answer(1, known)),
        json.dumps(answer(2, changed), ensure_ascii=False),
        json.dumps({"not": "a message", "text": known}),
        json.dumps(answer(3, changed)),
        json.dumps(answer(4, "short")),
    ]
    (tmp_path / "out.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = (
        "import sys; sys.stdout.write(open(sys.argv[1], encoding='utf-8').read()); sys.stdout.flush(); sys.stdin.read()"
    )
    t = transports([PY, "-c", code, str(tmp_path / "out.jsonl")])
    asked = []

    class Asked(Prepared):
        def beside(self, size: int) -> str | None:
            asked.append(size)
            return super().beside(size) if len(asked) < 4 else None

    prepared = Asked(Limits(), answer(1, known))
    t.start()
    first = t.receive(10, prepared)
    assert first == json.loads(lines[0]) and first["result"]["content"][0]["text"] is known
    second = t.receive(10, prepared)
    assert second == json.loads(lines[1]) and second["result"]["content"][0]["text"] == changed
    assert prepared.taken["beside"] == 2
    third = t.receive(10, prepared)  # the stray line was skipped, named by its start
    assert third == json.loads(lines[3])  # nothing expected: decoded as usual
    assert t.non_json_lines == 1 and t.last_non_json == lines[2][:200]
    assert t.receive(10, prepared) == json.loads(lines[4])
    assert len(asked) == 4  # asked for long lines only
    assert prepared.taken["beside"] == 3  # the stray line too
