"""Issue 8 item 7, the CLI half: nothing a server says can become a GitHub workflow command in
anything ``mcp-replay`` prints (a CI job that runs the CLI directly has no action to fence its
output), and issue/PR references and bare URLs from a server cannot link or notify."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from github_action_run import HOSTILE
from mcp_replay_action.values.safe import md_cell, no_references
from runner_parse import parse_commands

pytestmark = pytest.mark.integration

PY = sys.executable
HOSTILE_TEXT = "::error::injected\n  ::warning::indented\r\n##[error]legacy\n| x |\ncc @octocat #12"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "mcp_replay_action", *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_no_workflow_command_in_anything_the_cli_prints(hostile_cassette: Path, tmp_path: Path) -> None:
    # A cassette from a fork may say anything too: the hostile text in its answers and server name.
    forked = tmp_path / "forked.jsonl"
    forked.write_text(
        hostile_cassette.read_text()
        .replace("a calm page", json.dumps(HOSTILE_TEXT)[1:-1])
        .replace('"found"', json.dumps("::error::x\n" + HOSTILE_TEXT))
    )
    write = "import sys; sys.stderr.write('##[error]boom\\n::error::boom\\n'); sys.stderr.flush()"
    shout, crash = f'{PY} -c "{write}"', f'{PY} -c "{write}; sys.exit(3)"'
    runs = [
        cli("replay", "--server", HOSTILE, "--cassette", str(hostile_cassette)),
        cli("replay", "--server", HOSTILE, "--cassette", str(hostile_cassette), "-v"),
        cli("replay", "--server", HOSTILE, "--cassette", str(forked), "-v"),
        cli("inspect", str(forked)),
        cli("diff", str(hostile_cassette), str(forked)),
        cli("replay", "--server", crash, "--cassette", str(forked)),
        cli("record", "--server", shout, "--cassette", str(tmp_path / "shout.jsonl")),
        cli("replay", "--server", HOSTILE, "--cassette", str(tmp_path / "##[error]x.jsonl")),
    ]
    for done in runs:
        for stream in (done.stdout, done.stderr):
            assert parse_commands(stream) == [], stream[-2000:]
    assert "injected" in runs[1].stdout  # the hostile text is shown, only defused


Z = "\u200d"


@pytest.mark.parametrize(
    ("reference", "broken"),
    [
        ("see #123 now", f"see #{Z}123 now"),
        ("fixed in owner/repo#45", f"fixed in owner/repo#{Z}45"),
        ("GH-7 regressed, gh-12 too", f"GH-{Z}7 regressed, gh-{Z}12 too"),
        ("docs at https://evil.example/x", f"docs at https{Z}://evil.example/x"),
        ("or http://a.example and www.evil.example", f"or http{Z}://a.example and www{Z}.evil.example"),
        ("C# 10, issue#, x#y, 2#3 and #hashtag stay", "C# 10, issue#, x#y, 2#3 and #hashtag stay"),
    ],
)
def test_references_and_bare_urls_are_broken(reference: str, broken: str) -> None:
    assert no_references(reference) == broken
    assert md_cell(reference) == md_cell(broken)  # the cells every report and comment use
