"""Issue 8 items 9 and 10 through the CLI: every bad input gets a clear one-line answer and
exit 2 before any session starts (nothing recorded is lost); the files we write follow the umask.
The refusals run in process (click's runner: ``e2e_helpers.run_in_process``); the umask test runs
the real entry point in a process of its own, the umask set for it alone."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from e2e_helpers import run_in_process

pytestmark = pytest.mark.integration

CALC = f"{sys.executable} -m mcp_replay_action.samples.calc_server"
UNPRIVILEGED = hasattr(os, "geteuid") and os.geteuid() != 0


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run_in_process(*args)


def process(*args: str, umask: int) -> subprocess.CompletedProcess[str]:
    """``python -m mcp_replay_action ARGS`` under ``umask``."""
    return subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: os.umask(umask),
    )


@pytest.fixture
def cassette(demo_cassette: Path) -> Path:
    return demo_cassette


def one_line_error(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
def test_timeout_nan_and_inf_are_refused(cassette: Path, value: str) -> None:
    for option in ("--timeout", "--startup-timeout", "--total-timeout"):
        done = cli("replay", "--server", CALC, "--cassette", str(cassette), option, value)
        assert "finite" in one_line_error(done) or "range" in done.stderr


@pytest.mark.parametrize("listen", [":99999", "127.0.0.1:65536", "127.0.0.1:http"])
def test_listen_port_out_of_range_is_a_usage_error(cassette: Path, tmp_path: Path, listen: str) -> None:
    assert "--listen" in one_line_error(cli("serve", "--cassette", str(cassette), "--listen", listen))
    rec = cli("record", "--url", "http://127.0.0.1:9/mcp", "--listen", listen, "--cassette", str(tmp_path / "x.jsonl"))
    assert "--listen" in one_line_error(rec)


def unwritable_dirs(tmp_path: Path) -> list[Path]:
    """Directories nobody can write in: under a regular file (even for root), and a 0555
    directory when we are not root."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    found = [blocker / "sub"]
    if UNPRIVILEGED:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        found.append(locked)
    return found


@pytest.mark.parametrize("option", ["--report", "--markdown", "--junit", "--badge"])
def test_unwritable_report_is_refused_before_the_server_starts(cassette: Path, tmp_path: Path, option: str) -> None:
    marker = tmp_path / "started"
    server = f"{sys.executable} -c \"open('{marker}', 'w')\""
    for where in unwritable_dirs(tmp_path):
        done = cli("replay", "--server", server, "--cassette", str(cassette), option, str(where / "out"))
        assert f"{option} {where / 'out'}: cannot write" in one_line_error(done)
        assert not marker.exists()


def test_unwritable_cassette_is_refused_before_recording(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    server = f"{sys.executable} -c \"open('{marker}', 'w')\""
    for where in unwritable_dirs(tmp_path):
        done = cli("record", "--server", server, "--cassette", str(where / "session.jsonl"))
        assert "--cassette" in one_line_error(done) and "cannot write" in done.stderr
        assert not marker.exists()


def test_directory_as_output_is_refused(cassette: Path, tmp_path: Path) -> None:
    done = cli("replay", "--server", CALC, "--cassette", str(cassette), "--report", str(tmp_path))
    assert "is a directory" in one_line_error(done)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_as_cassette_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "cassette.jsonl"
    os.mkfifo(fifo)
    # If the CLI opened the FIFO it would block; a writer thread that never writes would not help.
    for args in (("inspect", str(fifo)), ("replay", "--server", CALC, "--cassette", str(fifo))):
        assert "not a regular file" in one_line_error(cli(*args))
    assert "--cassette" in one_line_error(cli("record", "--server", CALC, "--cassette", str(fifo)))


def test_device_as_cassette_is_refused() -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    assert "not a regular file" in one_line_error(cli("inspect", "/dev/zero"))


def test_deeply_nested_cassette_is_file_line_and_exit_2(cassette: Path, tmp_path: Path) -> None:
    header = cassette.read_text().splitlines()[0]
    deep = tmp_path / "deep.jsonl"
    deep.write_text(header + "\n" + "[" * 100_000 + "]" * 100_000 + "\n")
    done = cli("replay", "--server", CALC, "--cassette", str(deep))
    assert f"{deep}:2: invalid JSON: nested too deeply" in one_line_error(done)
    recorder = tmp_path / "deep.json"
    recorder.write_text('{"version": "1.0", "interactions": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    assert "nested too deeply" in one_line_error(cli("inspect", str(recorder)))


def test_header_only_cassette_is_a_usage_error_not_grade_a(cassette: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text(cassette.read_text().splitlines()[0] + "\n")
    done = cli("replay", "--server", CALC, "--cassette", str(empty))
    assert f"{empty}: no interactions" in one_line_error(done)
    assert "GRADE" not in done.stdout


@pytest.mark.skipif(not hasattr(os, "umask") or os.name != "posix", reason="POSIX modes")
def test_written_files_follow_the_umask(cassette: Path, tmp_path: Path) -> None:
    """Issue 8 item 9: reports, JUnit, badge and cassettes are 0644 under umask 022 (0600 before)."""
    out = {name: tmp_path / name for name in ("r.json", "r.md", "r.xml", "b.json")}
    done = process(
        "replay", "--server", CALC, "--cassette", str(cassette),
        "--report", str(out["r.json"]), "--markdown", str(out["r.md"]),
        "--junit", str(out["r.xml"]), "--badge", str(out["b.json"]),
        umask=0o022,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    converted = tmp_path / "c.json"
    assert process("convert", str(cassette), str(converted), umask=0o022).returncode == 0
    for path in [*out.values(), converted]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    strict = tmp_path / "strict.json"
    assert process("convert", str(cassette), str(strict), umask=0o077).returncode == 0
    assert stat.S_IMODE(strict.stat().st_mode) == 0o600
    assert json.loads(out["b.json"].read_text())["schemaVersion"] == 1
