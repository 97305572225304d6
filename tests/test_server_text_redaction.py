"""Issue 8 item 1, end to end: text that comes from the server (its stderr tail, the error and
missing-response messages built from it) passes the cassette's redactor in one place, before any
sink sees it. Driven through the real CLI and the real action entrypoint (with the fake GitHub
API), with a server that prints a token and a database password on stderr and crashes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import make_workspace, run_action
from github_events import pull_request
from mcp_replay_action.cassette import save, with_lines
from mcp_replay_action.model.cassette import Cassette, Interaction

pytestmark = pytest.mark.integration

FAKES = Path(__file__).parent / "fakes"
TOKEN = "ghp_" + "Zq8XvT2mLk4Rw9Yp3Hn6Bc1Df5Gj7Ks0Ue2Ia4"[:36]
SECRETS = (TOKEN, "admin:pw@")
SERVER = f"{sys.executable} {FAKES / 'secret_crash_server.py'}"


def _cassette(path: Path) -> Path:
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    info = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}
    call = {"name": "echo", "arguments": {"text": "hi"}}
    answer = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    interactions = (
        Interaction(0, "request", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
                    {"jsonrpc": "2.0", "id": 0, "result": info}),
        Interaction(1, "notification", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Interaction(2, "request", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call},
                    {"jsonrpc": "2.0", "id": 1, "result": answer}),
    )  # fmt: skip
    save(with_lines(Cassette(meta={}, interactions=interactions, path=str(path))), path)
    return path


def _assert_clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{secret!r} leaked into {where}"


@pytest.mark.parametrize("at_start", [False, True], ids=["crash-mid-replay", "crash-at-start"])
def test_cli_never_prints_or_writes_what_the_server_leaked(tmp_path: Path, at_start: bool) -> None:
    cassette = _cassette(tmp_path / "c.jsonl")
    server = SERVER + (" --at-start" if at_start else "")
    files = {name: tmp_path / f"report.{name}" for name in ("json", "md", "xml", "badge")}
    outputs = []
    for fmt in ((), ("--json",), ("-v",)):
        done = subprocess.run(
            [sys.executable, "-m", "mcp_replay_action", "replay", "--server", server, "--cassette", str(cassette),
             "--report", str(files["json"]), "--markdown", str(files["md"]), "--junit", str(files["xml"]),
             "--badge", str(files["badge"]), *fmt],
            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        assert done.returncode == (3 if at_start else 1), done.stdout + done.stderr
        outputs.append(done)
        _assert_clean("stdout", done.stdout)
        _assert_clean("stderr", done.stderr)
    # The server did say it: the redacted line is there for whoever debugs the crash.
    said = outputs[0].stderr if at_start else outputs[0].stdout
    assert "fatal: auth failed using token [REDACTED]" in said
    if not at_start:
        for name, path in files.items():
            _assert_clean(name, path.read_text())
        report = json.loads(files["json"].read_text())
        (result,) = report["cassettes"]
        assert "[REDACTED]" in result["stderr_tail"] and "[REDACTED]" in result["error"]
        assert "[REDACTED]" in files["md"].read_text()  # Markdown shows the server's error, redacted


@pytest.mark.parametrize("at_start", [False, True], ids=["crash-mid-replay", "crash-at-start"])
def test_action_never_publishes_what_the_server_leaked(tmp_path: Path, fake: FakeGitHub, at_start: bool) -> None:
    ws = make_workspace(tmp_path, {"cassettes/c.jsonl": _cassette(tmp_path / "c.jsonl")})
    server = SERVER + (" --at-start" if at_start else "")
    inputs = {
        "server": server,
        "github-token": "app-token",
        "markdown-file": "out/report.md",
        "junit-file": "out/junit.xml",
        "badge-file": "out/badge.json",
        "sarif-file": "out/report.sarif",
    }
    run = run_action(ws, event_name="pull_request", event=pull_request(7, "a" * 40), inputs=inputs, api_url=fake.url)
    assert run.returncode == (3 if at_start else 1), run.stdout + run.stderr
    _assert_clean("the log", run.stdout + run.stderr)
    _assert_clean("the job summary", run.summary)
    _assert_clean("the outputs", json.dumps(run.outputs))
    for path in ws.rglob("*"):
        if path.is_file():
            _assert_clean(str(path.relative_to(ws)), path.read_text(errors="replace"))
    posted = [c["body"] for c in fake.comments.get(("octo/demo", 7), [])]
    for body in posted:
        _assert_clean("the PR comment", body)
    if not at_start:
        assert posted and "token &#91;REDACTED]" in posted[0], posted[0]  # shown, redacted, escaped
        assert "[REDACTED]" in (ws / "out" / "report.md").read_text()
        assert run.outputs["sarif"] == "out/report.sarif"
        sarif = json.loads((ws / "out" / "report.sarif").read_text())
        uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
        assert uris == {"cassettes/c.jsonl"}, sarif  # relative to the workspace
    assert "fatal: auth failed using token [REDACTED]" in run.stdout


def test_record_never_prints_what_a_crashing_server_leaked(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "record", "--server", SERVER + " --at-start",
         "--cassette", str(tmp_path / "c.jsonl")],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    _assert_clean("stdout", done.stdout)
    # The recording proxy passes the server's own stderr through to the terminal that started it
    # (as running the server directly would); what mcp-replay itself says is redacted.
    ours = [line for line in done.stderr.splitlines() if line.startswith("mcp-replay")]
    # The summary line comes first now (printed as the client goes, before the server is
    # stopped: issue 28), then the error that quotes the server.
    assert any("fatal: auth failed using token [REDACTED]" in line for line in ours), ours
    _assert_clean("mcp-replay's own error", "\n".join(ours))


def test_record_scenarios_never_prints_what_a_failing_server_leaked(tmp_path: Path) -> None:
    """The error record-scenarios stops with quotes the server (its last stderr line, its stderr
    tail): both pass the scenario's redaction first, named variables' values included. A value of
    no built-in shape leaked into the one-line message before."""
    secret = "Zq9" * 6  # no built-in shape: only the scenario's env rule knows it is a secret
    leak = 'echo starting >&2; echo "auth with $SERVICE_TOKEN failed" >&2; exit 1'
    scenarios = tmp_path / "scenarios.yml"
    scenarios.write_text(
        f"target:\n  command: {json.dumps(f'sh -c {json.dumps(leak)}')}\n"
        f"  env:\n    SERVICE_TOKEN: {json.dumps(secret)}\n"
        "scenarios:\n  one:\n    - call_tool: {name: show, arguments: {}}\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "record-scenarios", str(scenarios)],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert secret not in done.stdout + done.stderr, done.stderr
    assert "auth with [REDACTED] failed" in done.stderr.splitlines()[0], done.stderr
    assert "server stderr (last lines):" in done.stderr and "starting" in done.stderr, done.stderr


@pytest.mark.parametrize(
    "text",
    [
        "fatal: auth failed using token " + TOKEN,
        "connecting to postgres://admin:pw@db:5432/app as Bearer " + "x" * 32,
        '{"password": "hunter2-hunter2", "api_key": "sk-live-' + "Q7w" * 8 + '"}',
        "Node.js v20.11.1\n    at Object.<anonymous> (/srv/app/index.js:12:5)",
        "uuid 123e4567-e89b-12d3-a456-426614174000 sha " + "ab01" * 10,
    ],
)
def test_the_clis_safety_net_never_changes_or_recounts_redacted_text(text: str) -> None:
    """The CLI passes a server error through the built-in rules once more (a safety net behind the
    cassette's or scenario's redaction): over text a redactor already scrubbed it is a fixed
    point and counts nothing, so it can neither mangle the message nor double a hit."""
    from mcp_replay_action.cli import shown_server_error
    from mcp_replay_action.errors import ServerStartError
    from mcp_replay_action.redact import Redactor

    cassette_rules = Redactor(keys=("db",), patterns=(r"hunter2-\w+",))
    scrubbed = str(cassette_rules.apply(text))
    net = Redactor()
    assert net.apply(scrubbed) == scrubbed and not net.hits, (scrubbed, net.hits)
    shown = shown_server_error(ServerStartError(scrubbed, stderr_tail=scrubbed))
    assert str(shown) == scrubbed and shown.stderr_tail == scrubbed
    assert isinstance(shown, ServerStartError)
