"""The one line that says why a server stopped (transport/headline.py), read from what real node
and python processes print when they fail at start, and shown by `record` and `replay`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcp_replay_action.transport.headline import headline, missing_script_hint

pytestmark = pytest.mark.integration

MCP_REPLAY = [sys.executable, "-m", "mcp_replay_action"]
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")
CASSETTE = Path(__file__).parent / "data" / "summary_handshake.jsonl"


def stderr_of(argv: list[str], cwd: Path) -> str:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    return done.stderr


def built(tmp_path: Path) -> Path:
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "index.js").write_text("console.log('never run')\n", encoding="utf-8")
    return tmp_path


@needs_node
def test_node_missing_entry_file_is_headed_by_cannot_find_module_not_the_banner(tmp_path: Path) -> None:
    tail = stderr_of([str(NODE), "dist/indx.js"], built(tmp_path))
    assert tail.strip().splitlines()[-1].startswith("Node.js v")  # what the last line would have said
    assert headline(tail) == f"Error: Cannot find module '{tmp_path / 'dist' / 'indx.js'}'"


@needs_node
def test_node_esm_missing_package_and_a_thrown_type_error(tmp_path: Path) -> None:
    (tmp_path / "server.mjs").write_text("import x from 'no-such-package-zz';\n", encoding="utf-8")
    line = headline(stderr_of([str(NODE), "server.mjs"], tmp_path))
    assert line.startswith("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'no-such-package-zz'")
    (tmp_path / "boom.js").write_text("null.f();\n", encoding="utf-8")
    line = headline(stderr_of([str(NODE), "boom.js"], tmp_path))
    assert line.startswith("TypeError: Cannot read properties of null"), line


def test_python_traceback_is_headed_by_its_exception_line(tmp_path: Path) -> None:
    (tmp_path / "srv.py").write_text("import json\nimport no_such_dep_zz\n", encoding="utf-8")
    tail = stderr_of([sys.executable, "srv.py"], tmp_path)
    assert headline(tail) == "ModuleNotFoundError: No module named 'no_such_dep_zz'"
    # Chained: the last traceback's exception, not the first one's.
    (tmp_path / "chain.py").write_text(
        "try:\n    {}['k']\nexcept KeyError as e:\n    raise RuntimeError('config key k is missing') from e\n",
        encoding="utf-8",
    )
    assert headline(stderr_of([sys.executable, "chain.py"], tmp_path)) == "RuntimeError: config key k is missing"
    # A module that is not there at all: python's own one line.
    line = headline(stderr_of([sys.executable, "-m", "no_such_mod_zz"], tmp_path))
    assert line.endswith("No module named no_such_mod_zz")


def test_plain_last_line_and_nothing() -> None:
    assert headline("starting\nlistening failed: port 3000 in use\n") == "listening failed: port 3000 in use"
    assert headline("warn: x\nfatal: cannot open settings.toml\nbye\n") == "fatal: cannot open settings.toml"
    assert headline("\n  \n") == ""
    assert len(headline("Error: " + "x" * 5000)) == 200


def test_the_hint_is_given_only_for_a_script_that_is_not_there(tmp_path: Path) -> None:
    built(tmp_path)
    assert missing_script_hint(["node", "dist/index.js"], str(tmp_path)) == ""
    assert missing_script_hint(["node", "dist/indx.js"], str(tmp_path)) == (
        f"dist/indx.js does not exist in {tmp_path} (did you mean dist/index.js? did you build it?)"
    )
    assert missing_script_hint(["node", "build/index.js"], str(tmp_path)) == (
        f"build/index.js does not exist in {tmp_path} (did you build it?)"
    )
    assert missing_script_hint(["python", "server.py"], str(tmp_path)) == f"server.py does not exist in {tmp_path}"
    assert missing_script_hint(["python", "-m", "my_server"], str(tmp_path)) == ""
    assert missing_script_hint(["npx", "-y", "@modelcontextprotocol/server-everything"], str(tmp_path)) == ""


@needs_node
@pytest.mark.parametrize("command", ["record", "replay"])
def test_record_and_replay_head_a_failed_node_start_with_its_cause_and_the_hint(command: str, tmp_path: Path) -> None:
    built(tmp_path)
    args = ["--cassette", "out.jsonl"] if command == "record" else ["--cassette", str(CASSETTE)]
    done = subprocess.run(
        [*MCP_REPLAY, command, "--server", "node dist/indx.js", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 3, done.stderr
    error = next(line for line in done.stderr.splitlines() if line.startswith("mcp-replay: error:"))
    assert f"Error: Cannot find module '{tmp_path / 'dist' / 'indx.js'}'" in error
    assert error.endswith(f"dist/indx.js does not exist in {tmp_path} (did you mean dist/index.js? did you build it?)")
    assert "Node.js v" not in error
    assert not (tmp_path / "out.jsonl").exists()


def test_replay_heads_a_failed_python_start_with_the_exception_line(tmp_path: Path) -> None:
    (tmp_path / "srv.py").write_text("import no_such_dep_zz\n", encoding="utf-8")
    done = subprocess.run(
        [*MCP_REPLAY, "replay", "--server", f"{sys.executable} srv.py", "--cassette", str(CASSETTE)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, done.stderr
    error = done.stderr.splitlines()[0]
    assert error == (
        "mcp-replay: error: server exited at start-up with status 1: "
        "ModuleNotFoundError: No module named 'no_such_dep_zz'"
    )
