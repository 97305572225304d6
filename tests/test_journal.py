"""The cassette a recording writes as it goes (``cassette/journal.py``, ``record/writer.py``): lines
appended whole, the header rewritten with every other line's bytes kept, nothing on disk before
there is something to keep; a last line cut short by a kill is named and left out by every reader."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import cut_short_line, load
from mcp_replay_action.cassette.journal import Journal
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.record.tape import Tape
from mcp_replay_action.record.writer import TapeWriter
from mcp_replay_action.redact import Redactor

PY = sys.executable

pytestmark = pytest.mark.integration  # inspect and replay run as processes


def call(seq: int, text: str = "ok") -> Interaction:
    message = {"jsonrpc": "2.0", "id": seq, "method": "tools/call", "params": {"name": "echo"}}
    response = {"jsonrpc": "2.0", "id": seq, "result": {"content": [{"type": "text", "text": text}]}}
    return Interaction(seq=seq, kind="request", message=message, response=response)


def test_the_first_write_makes_the_file_and_later_lines_are_appended(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("precious\n")
    journal = Journal(path)
    assert not journal.started and path.read_text() == "precious\n"  # nothing to put in its place yet
    journal.rewrite({"n": 1}, new=[call(0)])
    journal.append([call(1), call(2)])
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["meta"] == {"n": 1}
    assert [json.loads(line)["seq"] for line in lines[1:]] == [0, 1, 2]
    assert [i.seq for i in load(path).interactions] == [0, 1, 2]


def test_a_rewrite_keeps_every_unchanged_line_byte_for_byte(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    journal = Journal(path)
    journal.rewrite({"n": 1}, new=[call(0), call(1, "é"), call(2)])
    before = path.read_bytes().splitlines(keepends=True)
    journal.rewrite({"n": 2}, changed={1: call(1, "changed")}, new=[call(3)])
    journal.close()
    after = path.read_bytes().splitlines(keepends=True)
    assert json.loads(after[0])["meta"] == {"n": 2}
    assert after[1] == before[1] and after[3] == before[3]
    assert json.loads(after[2])["response"]["result"]["content"][0]["text"] == "changed"
    assert json.loads(after[4])["seq"] == 3
    assert not [p for p in tmp_path.iterdir() if p.name != "c.jsonl"]  # no temp file left


def test_a_lone_surrogate_is_written_escaped_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    journal = Journal(path)
    journal.rewrite({}, new=[call(0, "\ud800 lone")])
    journal.append([call(1, "\udfff too")])
    texts = [i.response["result"]["content"][0]["text"] for i in load(path).interactions]  # type: ignore[index]
    assert texts == ["\ud800 lone", "\udfff too"]


def cut(path: Path, interactions: int) -> Path:
    """A cassette of ``interactions`` whole lines and one more cut short, as a kill leaves it."""
    journal = Journal(path)
    journal.rewrite({"recorded_at": "2026-01-01T00:00:00Z"}, new=[call(i) for i in range(interactions)])
    journal.close()
    whole = (tmp := path.read_bytes()) + (json.dumps(call(interactions).to_json()).encode()[:40])
    path.write_bytes(whole)
    assert tmp != whole
    return path


def test_a_last_line_cut_short_is_left_out_and_named(tmp_path: Path) -> None:
    path = cut(tmp_path / "c.jsonl", 3)
    cassette = load(path)
    assert [i.seq for i in cassette.interactions] == [0, 1, 2] and cassette.cut_short == 5
    assert cut_short_line(path) == 5
    streamed = load(path, stream=True)
    assert [i.seq for i in streamed.interactions] == [0, 1, 2]
    shown = subprocess.run(
        [PY, "-m", "mcp_replay_action", "inspect", str(path)], capture_output=True, text=True, timeout=60
    )
    assert shown.returncode == 0, shown.stderr
    assert (
        f"{path}:5: the last line is cut short (the recording was killed while it wrote it): left out" in shown.stdout
    )


def test_a_broken_line_that_ends_is_still_an_error_naming_it(tmp_path: Path) -> None:
    path = cut(tmp_path / "c.jsonl", 2)
    path.write_bytes(path.read_bytes() + b"\n")  # it ends: not a kill's doing
    proc = subprocess.run(
        [PY, "-m", "mcp_replay_action", "inspect", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2 and f"{path}:4: invalid JSON" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert cut_short_line(path) == 0


def test_replay_reads_a_cassette_cut_short_and_names_the_line(tmp_path: Path) -> None:
    server = f"{PY} -m mcp_replay_action.samples.calc_server"
    path = tmp_path / "calc.jsonl"
    session = b"".join(
        json.dumps(m).encode() + b"\n"
        for m in (
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    )
    recorded = subprocess.run(
        [PY, "-m", "mcp_replay_action", "record", "--server", server, "--cassette", str(path)],
        input=session,
        capture_output=True,
        timeout=60,
    )
    assert recorded.returncode == 0, recorded.stderr
    path.write_bytes(path.read_bytes() + b'{"seq":3,"kind":"request","ts":0.1,"message":{"jsonrpc"')
    done = subprocess.run(
        [PY, "-m", "mcp_replay_action", "replay", "--server", server, "--cassette", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning: calc.jsonl:5: the last line is cut short" in done.stderr, done.stderr


# -- the writer: what the tape places goes to disk -------------------------------------------------------


def line(msg: dict[str, Any]) -> bytes:
    return json.dumps(msg).encode() + b"\n"


def test_the_writer_puts_each_interaction_on_disk_as_the_tape_places_it(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    tape = Tape(Redactor())
    metas: list[int] = []

    def meta(interactions: Any) -> dict[str, Any]:
        metas.append(len(interactions))
        return {"interactions": len(interactions), "unanswered": tape.unanswered}

    writer = TapeWriter(tape, str(path), meta, hold=1000.0, header_every=1000.0)
    t = time.monotonic()  # the tape's clock
    tape.client_line(line({"jsonrpc": "2.0", "id": 1, "method": "slow"}), t + 1.0)
    tape.client_line(line({"jsonrpc": "2.0", "method": "notifications/initialized"}), t + 1.1)
    writer.flush()
    assert not path.exists()  # held behind the open request: nothing complete in order yet
    tape.server_line(line({"jsonrpc": "2.0", "id": 1, "result": {}}), t + 1.2)
    writer.flush()
    assert [i.method for i in load(path).interactions] == ["slow", "notifications/initialized"]
    tape.client_line(line({"jsonrpc": "2.0", "id": 2, "method": "never"}), t + 1.3)
    tape.client_line(line({"jsonrpc": "2.0", "id": 3, "method": "quick"}), t + 1.4)
    tape.server_line(line({"jsonrpc": "2.0", "id": 3, "result": {}}), t + 1.5)
    writer.flush()
    assert len(load(path).interactions) == 2  # "never" still holds "quick" back
    writer.close()  # the session ended: nothing is held back any more
    cassette = load(path)
    assert [i.method for i in cassette.interactions] == ["slow", "notifications/initialized", "quick"]
    assert cassette.meta == {"interactions": 3, "unanswered": 1}
    assert metas == [2, 3]  # the header was made at the first write and once more at the end
