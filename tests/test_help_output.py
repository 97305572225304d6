"""Every help page, usage error and suggestion the CLI prints, byte for byte, at several terminal
widths, against ``tests/data/help/`` (first written from main at f59552c, before the commands were
loaded lazily; rewritten when the command list got whole-sentence short helps and the help texts
lost their reST backticks): how the commands are loaded must never show in what a user reads.

Regenerate after an intended change of a help text: ``python tests/test_help_output.py``.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import click
import pytest

pytestmark = pytest.mark.integration

GOLDEN = Path(__file__).parent / "data" / "help"
COMMANDS = (
    "calibrate",
    "compare-builds",
    "convert",
    "demo",
    "diff",
    "explore",
    "inspect",
    "merge",
    "record",
    "record-scenarios",
    "replay",
    "serve",
    "verify",
)
# What a user may type to read help, or type wrong: each is run as its own process.
INVOCATIONS: tuple[tuple[str, ...], ...] = (
    (),
    ("--help",),
    ("-h",),
    ("--version",),
    *((name, "--help") for name in COMMANDS),
    ("replai",),  # a typo: click suggests the command it is closest to
    ("record-scenario", "--help"),
    ("verfy", "--cassette", "x"),
    ("--bogus",),
    ("replay",),  # a missing required option
    ("replay", "--cassette", "x", "--timeout", "nan"),
    ("record", "--cassette"),
    ("merge",),
)
# None: no COLUMNS, and stdout is a pipe, so the width is the fallback (80 columns).
WIDTHS = (None, 50, 72, 100, 200)
# The console script, as a user runs it (the program name shows in every usage line).
SCRIPT = Path(sys.executable).with_name("mcp-replay")


def _env(columns: int | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


def render(columns: int | None) -> str:
    """Every invocation's exit code, stdout and stderr, one block each."""
    blocks = []
    for args in INVOCATIONS:
        done = subprocess.run(
            [str(SCRIPT), *args],
            capture_output=True,
            text=True,
            env=_env(columns),
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
        blocks.append(f"$ mcp-replay {' '.join(args)}\n[exit {done.returncode}]\n{done.stdout}[stderr]\n{done.stderr}")
    return "\n".join(blocks)


# A terminal's own width (no COLUMNS): the help as it is read on a terminal of these columns.
TERMINALS = (40, 64, 90, 132)


def render_on_terminal(columns: int) -> str:
    """The top-level and replay help with stdout on a pseudo-terminal ``columns`` wide."""
    blocks = []
    for args in (("--help",), ("replay", "--help"), ("inspect", "--help")):
        leader, follower = pty.openpty()
        try:
            fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
            proc = subprocess.Popen(
                [str(SCRIPT), *args], stdout=follower, stderr=subprocess.PIPE, env=_env(None), stdin=subprocess.DEVNULL
            )
            os.close(follower)
            follower = -1
            out = b""
            while True:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: the pseudo-terminal's last writer closed it
                    break
                if not chunk:
                    break
                out += chunk
            assert proc.wait(timeout=60) == 0
        finally:
            os.close(leader)
            if follower >= 0:
                os.close(follower)
        blocks.append(f"$ mcp-replay {' '.join(args)}\n{out.decode()}")
    return "\n".join(blocks)


def golden_path(columns: int | None, kind: str = "columns") -> Path:
    return GOLDEN / f"{kind}-{columns or 'unset'}.txt"


@pytest.mark.parametrize("columns", WIDTHS)
def test_help_and_usage_errors_are_byte_identical(columns: int | None) -> None:
    assert render(columns) == golden_path(columns).read_text(encoding="utf-8")


@pytest.mark.parametrize("columns", TERMINALS)
def test_help_on_a_terminal_is_byte_identical(columns: int) -> None:
    assert render_on_terminal(columns) == golden_path(columns, "terminal").read_bytes().decode()


if __name__ == "__main__":
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        golden_path(width).write_text(render(width), encoding="utf-8")
    for width in TERMINALS:
        golden_path(width, "terminal").write_bytes(render_on_terminal(width).encode())


def test_every_summary_is_its_commands_short_help_and_whole_in_the_list() -> None:
    from mcp_replay_action.cli import COMMANDS, main

    for name, (_, _, summary) in COMMANDS.items():
        command = main.commands[name]
        assert command.help is not None
        assert command.name == ("replay" if name == "verify" else name)
        if name != "verify":  # the same command as replay, listed with what it does differently
            assert command.short_help == summary, name
        # A whole sentence on one line of an 80-column listing: never cut mid-sentence.
        assert summary.endswith(".") and len(summary) <= 80 - 6 - len("record-scenarios"), name
    listing = golden_path(None).read_text(encoding="utf-8")
    assert "..." not in listing.split("Commands:", 1)[1].split("$ ", 1)[0]


def test_no_help_page_shows_rest_markup_and_every_option_says_what_it_does() -> None:
    from mcp_replay_action.cli import COMMANDS, main

    for name in COMMANDS:
        command = main.commands[name]
        for text in (command.help or "", *(getattr(p, "help", None) or "" for p in command.params)):
            assert "`" not in text, f"{name}: {text!r}"
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert param.help, f"{name} {param.opts[0]} has no help text"


def _commands_loaded(*args: str) -> list[str]:
    program = (
        "import json, sys\n"
        "from mcp_replay_action.cli import main\n"
        "try:\n"
        f"    main({list(args)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('mcp_replay_action.commands.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    loaded: list[str] = json.loads(done.stdout.splitlines()[-1])
    return loaded


def test_a_command_module_loads_only_when_its_command_is_asked_for() -> None:
    assert _commands_loaded("--help") == []
    assert _commands_loaded("replai") == []  # a typo is suggested a name without loading anything
    assert _commands_loaded("inspect", "--help") == ["mcp_replay_action.commands.inspection"]
    assert _commands_loaded("verify", "--help") == [
        "mcp_replay_action.commands.common",
        "mcp_replay_action.commands.replay",
    ]


@pytest.mark.parametrize("columns", [None, "", "0", "-3", "abc", "1", "49", "120", " 90 ", "99999"])
def test_terminal_columns_is_shutils_without_shutil(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from mcp_replay_action.cli import terminal_columns

    monkeypatch.delenv("LINES", raising=False)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert terminal_columns() == shutil.get_terminal_size().columns


def test_help_imports_no_shutil() -> None:
    program = "import sys\nfrom mcp_replay_action.cli import entry\ntry:\n    entry()\nexcept SystemExit:\n    pass\n"
    program += "print(sorted(m for m in ('shutil', 'bz2', 'lzma') if m in sys.modules))\n"
    for args in (["--help"], ["replay", "--help"], ["replai"]):
        done = subprocess.run([sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=60)
        assert done.stdout.splitlines()[-1] == "[]", (args, done.stdout, done.stderr)
