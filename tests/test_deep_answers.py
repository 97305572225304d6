"""A crash is a verdict (issue 28, item 3): an answer nested 900 levels deep (the redactor's
recursion) or 3000 (the JSON parser's) ended ``mcp-replay replay`` in a traceback and exit 1, the
"gate failed" code, and in the action in exit 3 while the sticky comment kept saying "passed".
Now such an answer gets a ``too-deep`` finding naming its depth and the replay goes on; any other
failure of a run is one line and exit 3, and the action's comment says the run could not complete.
Real processes throughout: the CLI, the action's entrypoint, the fake GitHub API."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import make_workspace, record_session, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_GATE, EXIT_INFRA, EXIT_OK

PY = sys.executable
DEEP = Path(__file__).parent / "fakes" / "deep_server.py"
REPO = "octo/demo"
SHA = "abc1234" + "0" * 33

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def server(depth: int, leaf: str = "1") -> str:
    return f"{PY} {DEEP} --depth {depth} --leaf {leaf}"


def record(path: Path) -> Path:
    """deep (recorded 2 levels deep), then echo: the replay must go on past a refused answer."""
    calls = [("tools/call", {"name": "deep", "arguments": {}}), ("tools/call", {"name": "echo", "arguments": {}})]
    record_session(path, server(2), calls)
    return path


def replay(cassette: Path, live: str, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "mcp_replay_action", "replay", "--server", live, "--cassette", str(cassette), *options],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cassette.parent,
    )


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record(tmp_path_factory.mktemp("deep") / "deep.jsonl")


@pytest.mark.parametrize("depth", [900, 3000])
def test_an_answer_too_deep_to_compare_is_a_finding_naming_its_depth(cassette: Path, depth: int) -> None:
    done = replay(cassette, server(depth))
    assert done.returncode == EXIT_GATE, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stdout + done.stderr
    # The structure around the list adds three levels: {"result": {"structuredContent": {"v": ...}}}.
    said = (
        f"$: the answer is nested {depth + 3} levels deep, too deep to compare (past Python's recursion "
        "limit; answers nested up to 200 levels are always compared)"
    )
    assert said in done.stdout, done.stdout
    assert "[FAIL] #2 tools/call deep  breaking structure-change" in done.stdout
    assert "[PASS] #3 tools/call echo" in done.stdout  # the replay went on
    assert "2 passed, 1 failed, 0 missing of 3 interactions" in done.stdout


@pytest.mark.parametrize("depth", [900, 3000])
def test_update_keeps_the_recording_of_an_answer_too_deep(cassette: Path, tmp_path: Path, depth: int) -> None:
    """Neither written (it could not be redacted) nor taken as settled: the gate still fails."""
    copy = tmp_path / "deep.jsonl"
    copy.write_bytes(cassette.read_bytes())
    done = replay(copy, server(depth), "--update")
    assert done.returncode == EXIT_GATE, done.stdout + done.stderr
    assert "1 interaction without a live response (the recording is kept)" in done.stdout + done.stderr
    assert copy.read_bytes() == cassette.read_bytes()


def test_an_answer_200_deep_is_compared_to_its_bottom(cassette: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep200.jsonl"
    record_session(deep, server(200), [("tools/call", {"name": "deep", "arguments": {}})])
    done = replay(deep, server(200, leaf="2"), "--report", str(tmp_path / "report.json"))
    assert done.returncode == EXIT_GATE, done.stdout + done.stderr
    (result,) = [
        r
        for c in json.loads((tmp_path / "report.json").read_text())["cassettes"]
        for r in c["interactions"]
        if r["findings"]
    ]
    (finding,) = result["findings"]
    assert finding["rule"] == "value-changed"  # found where it differs, at the bottom
    assert finding["path"].startswith("$.result.structuredContent.v" + "[0]" * 100)  # shown cut short
    # Below normalize's MAX_DEPTH (128) a subtree is compared by a digest of its content.
    assert finding["before"] != finding["after"] and finding["after"].startswith("<too deep: ")


def test_a_failure_nobody_foresaw_is_one_line_and_exit_3() -> None:
    """The CLI's one error place (``cli.handle_errors``) around a real command that meets a real
    RecursionError: one line, exit 3 (never 1, which says a gate failed), no traceback."""
    code = (
        "import json, click\n"
        "from mcp_replay_action.cli import handle_errors\n"
        "@click.command()\n"
        "@handle_errors\n"
        "def deep():\n"
        "    json.loads('[' * 5000 + ']' * 5000)\n"
        "deep()\n"
    )
    done = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == EXIT_INFRA
    assert done.stderr.splitlines() == [
        "mcp-replay: error: internal error: RecursionError: maximum recursion depth exceeded while decoding "
        "a JSON array from a unicode string (please report it)"
    ], done.stderr


# -- the action ---------------------------------------------------------------------------------------


def comment_body(fake: FakeGitHub) -> str:
    (comment,) = fake.comments.get((REPO, 7), [])
    return str(comment["body"])


def test_the_action_comment_no_longer_says_passed_when_an_answer_is_too_deep(
    cassette: Path, tmp_path: Path, fake: FakeGitHub
) -> None:
    ws = make_workspace(tmp_path, {"cassettes/deep.jsonl": cassette})
    event = pull_request(7, SHA)
    first = run_action(ws, event_name="pull_request", event=event, inputs=_inputs(server(2)), api_url=fake.url)
    assert first.returncode == EXIT_OK, first.stdout + first.stderr
    assert "gate=passed" in comment_body(fake)
    second = run_action(ws, event_name="pull_request", event=event, inputs=_inputs(server(3000)), api_url=fake.url)
    assert second.returncode == EXIT_GATE, second.stdout + second.stderr
    body = comment_body(fake)  # the one sticky comment, updated
    assert "gate=failed" in body and "gate=passed" not in body
    assert "nested 3003 levels deep, too deep to compare" in body
    assert "Traceback" not in second.stdout + second.stderr


def test_the_action_comment_says_a_run_that_could_not_complete(
    cassette: Path, tmp_path: Path, fake: FakeGitHub
) -> None:
    """An error nobody foresaw after the comment was written (here the step's output file is a
    directory): exit 3, and the comment no longer says the run passed."""
    ws = make_workspace(tmp_path, {"cassettes/deep.jsonl": cassette})
    event = pull_request(7, SHA)
    broken = tmp_path / "not-a-file"
    broken.mkdir()
    done = run_action(
        ws,
        event_name="pull_request",
        event=event,
        inputs=_inputs(server(2)),
        api_url=fake.url,
        extra_env={"GITHUB_OUTPUT": str(broken)},
    )
    assert done.returncode == EXIT_INFRA, done.stdout + done.stderr
    assert "::error title=mcp-replay::internal error: IsADirectoryError" in done.stdout
    body = comment_body(fake)
    assert "### ⛔ MCP replay could not complete" in body and "gate=error" in body
    assert "IsADirectoryError" in body


def _inputs(live: str) -> dict[str, str]:
    return {"server": live, "github-token": "app-token", "cassettes": "cassettes/*.jsonl"}


@pytest.mark.parametrize(
    ("depth", "said"),
    [
        (900, "the answer to tools/call deep is nested 903 levels deep, too deep to redact"),
        (3000, "scenario 'a': tools/call deep: a line the server sent is nested 3003 levels deep, too deep to read"),
    ],
)
def test_record_scenarios_refuses_an_answer_too_deep_in_one_line(tmp_path: Path, depth: int, said: str) -> None:
    path = tmp_path / "scenarios.yml"
    path.write_text(f"target: {server(depth)}\nscenarios:\n  a:\n    - call_tool: {{name: deep}}\n")
    done = subprocess.run(
        [PY, "-m", "mcp_replay_action", "record-scenarios", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == EXIT_INFRA
    (line,) = done.stderr.splitlines()
    assert line.startswith("mcp-replay: error: ") and said in line, line
    assert not (tmp_path / "cassettes").exists()  # nothing written, not even a partial file
