"""Issue 28 item 5: secrets in arguments (``redact_argv.py``), and an ``env`` value echoed inside
JSON text, kept out of every sink. The command-line rules are tested on argv lists and command
texts; then one secret of each kind goes through the real CLI (console, JSON report, Markdown,
JUnit, and the cassette ``record`` writes) and the real action entrypoint (log and annotations,
job summary, PR comment on the fake GitHub, report files)."""

from __future__ import annotations

import html
import json
import shlex
from pathlib import Path

import pytest

from fakegithub import FakeGitHub
from github_action_run import FAKES, PY, make_workspace, record_session, run_action
from github_events import pull_request
from mcp_replay_action.errors import EXIT_GATE
from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_argv import looks_like_password, redact_argv, redact_command
from mcp_replay_action.report import public_target
from test_redact_env import cli

pytestmark = pytest.mark.integration

R = "[REDACTED]"
TOKEN = "mcpRemoteToken-5521-quiet"  # short and plain: only its place says it is a secret
RANDOM = "Xk3fQ9mZp2LwR7tYb4NcV8hJ"  # 24 mixed-case letters and digits: shorter than the token rules look for
PASSWORD = "Hunter2secret"
VALUE = 'q"uiet\\build-7781'  # an env value with a quote and a backslash
SERVER = (
    f"{PY} {FAKES / 'env_echo_server.py'} --header 'Authorization: Bearer {TOKEN}' -p {RANDOM} "
    f"--db -p{PASSWORD}"
)
SECRETS = (TOKEN, RANDOM, PASSWORD)


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        # the mcp-remote pattern: one quoted word holds the header and its credential
        (f"npx mcp-remote https://x.example/mcp --header 'Authorization: Bearer {TOKEN}'",
         f"npx mcp-remote https://x.example/mcp --header 'Authorization: {R}'"),
        (f'npx mcp-remote https://x.example/mcp --header "Authorization:Bearer {TOKEN}"',
         f'npx mcp-remote https://x.example/mcp --header "Authorization:{R}"'),
        (f'srv --header="X-Api-Key: {TOKEN}"', f"srv '--header=X-Api-Key: {R}'"),
        (f"srv -p {RANDOM}", f"srv -p {R}"),
        (f"mysql -p{PASSWORD} shop", f"mysql -p{R} shop"),
        ("mysql -ps3cret42 shop", f"mysql -p{R} shop"),
        (f"sh -c 'mysql -p{PASSWORD} shop && srv -p {RANDOM}'", f"sh -c 'mysql -p{R} shop && srv -p {R}'"),
    ],
)  # fmt: skip
def test_secrets_in_a_command_line_are_hidden(command: str, shown: str) -> None:
    assert public_target(command) == shown
    argv = shlex.split(command)
    assert not any(secret in word for word in redact_argv(Redactor(), argv) for secret in (*SECRETS, "s3cret42"))


@pytest.mark.parametrize(
    "command",
    [
        "python -m http.server -p 8000",
        "mkdir -p /tmp/x/run && cp -pR a b",
        "ssh -p 2222 deploy@example.com",
        "docker run -p8080:80 -p 127.0.0.1:9000:9000 img",
        "gcc -pthread -pedantic -Xmx512m -O2 x.c",
        "mysql -p$DB_PASSWORD shop",
        "psql -h db -p 5432 -U app -d shop",
        "node dist/index.js --local-timezone Europe/Berlin -c config.yaml",
        "sh -c 'echo \"it'\\''s\" && ls -la'",
        "x 'a b'  \"c\\\" d\"\te\\ f",
        "unbalanced 'quote here",
    ],
)
def test_ordinary_command_lines_are_kept_exactly(command: str) -> None:
    assert public_target(command) == command
    assert redact_command(Redactor(), command) == command


@pytest.mark.parametrize(
    ("value", "secret"),
    [(RANDOM, True), ("Hunter2secret", True), ("8000", False), ("/tmp/Dir2Name", False), ("2222", False),
     ("LOG_LEVEL=Debug2", False), ("http.server", False), ("Ab1", False), ("$Db_Pass2", False)],
)  # fmt: skip
def test_what_looks_like_a_password_after_a_one_letter_flag(value: str, secret: bool) -> None:
    assert looks_like_password(value) is secret


def test_an_env_value_is_hidden_in_its_json_spelling_too() -> None:
    redactor = Redactor(env_values={"BUILD": VALUE, "NAME": "Grüße-aus-Köln"})
    for doc in ({"build": VALUE}, {"name": "Grüße-aus-Köln"}):
        for text in (json.dumps(doc), json.dumps(doc, ensure_ascii=False)):
            assert redactor.apply(text) == text.replace(text.split(": ")[1].rstrip("}"), f'"{R}"'), text


def spellings(secret: str) -> list[str]:
    """``secret`` as each sink might write it: as it is, and JSON-escaped once and twice."""
    once = json.dumps(secret)[1:-1]
    return [secret, once, json.dumps(once)[1:-1]]


def assert_nowhere(*texts: str) -> None:
    published = "\n".join(texts)
    published += "\n" + html.unescape(published)  # Markdown's and XML's character references
    for secret in (*SECRETS, VALUE):
        for spelled in spellings(secret):
            assert spelled not in published, f"{spelled!r} was published"


@pytest.fixture(scope="module")
def json_cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rec") / "echo.jsonl"
    record_session(path, SERVER, [("tools/call", {"name": "json", "arguments": {}})])  # BUILD unset: "1"
    return path


def test_record_keeps_the_command_lines_secrets_out_of_the_cassette(json_cassette: Path) -> None:
    text = json_cassette.read_text(encoding="utf-8")
    assert_nowhere(text)
    server = json.loads(text.splitlines()[0])["meta"]["server"]
    assert server[-6:] == ["--header", f"Authorization: {R}", "-p", R, "--db", f"-p{R}"]


def test_the_cli_publishes_no_secret_in_any_sink(tmp_path: Path, json_cassette: Path) -> None:
    files = [tmp_path / name for name in ("report.json", "report.md", "report.xml")]
    done = cli("replay", "--server", SERVER, "--cassette", str(json_cassette), "--env", f"BUILD={VALUE}",
               "--fail-on", "any", "--report", str(files[0]), "--markdown", str(files[1]), "--junit", str(files[2]),
               env={})  # fmt: skip
    assert done.returncode == EXIT_GATE, done.stdout + done.stderr  # the echo changed: it is shown, redacted
    written = [path.read_text(encoding="utf-8") for path in files]
    assert_nowhere(done.stdout, done.stderr, *written)
    report = json.loads(written[0])
    assert f"-p {R}" in report["target"] and f"Authorization: {R}" in report["target"]
    assert R in html.unescape(written[1]) and R in written[2]


def test_the_action_publishes_no_secret_in_any_sink(tmp_path: Path, json_cassette: Path) -> None:
    with FakeGitHub() as fake:
        fake.add_token("app-token")
        fake.add_pull("octo/demo", 7, head_sha="e" * 40, head_ref="feature")
        ws = make_workspace(tmp_path, {"cassettes/echo.jsonl": json_cassette})
        inputs = {"server": SERVER, "env": f"BUILD={VALUE}", "github-token": "app-token", "fail-on": "any",
                  "markdown-file": "report.md", "junit-file": "report.xml"}  # fmt: skip
        run = run_action(ws, event_name="pull_request", event=pull_request(7, "e" * 40), inputs=inputs,
                         api_url=fake.url)  # fmt: skip
        bodies = [comment["body"] for thread in fake.comments.values() for comment in thread]
    assert run.returncode == EXIT_GATE, run.stdout + run.stderr
    assert bodies, "no comment was written"
    assert any("mcp-replay replay --server" in body for body in bodies)  # the local command, redacted
    assert run.annotations("error"), "no annotation was written"
    files = [(ws / name).read_text(encoding="utf-8") for name in ("mcp-replay-report.json", "report.md", "report.xml")]
    assert_nowhere(run.stdout, run.stderr, run.summary, *bodies, *files)
    assert f"Authorization: {R}" in run.stdout and f"-p {R}" in run.summary
