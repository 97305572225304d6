"""Issue 8 items 3 and 4: the redaction gaps (credentials in assignments, query and connection
strings, URL passwords, header lines inside text, command-line flags, the report's target, the
header's pattern list, ``--redact-env`` in the recorded URL and log lines, ``record-scenarios``
env) and no over-redaction of content (SRI hashes, digests, certificates, wrapped base64) that a
replay must send back unchanged. The end-to-end tests drive the real CLI."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from e2e_helpers import cassette_lines, record_through_proxy
from fakes.http_fake_server import FakeHttpServer
from http_helpers import free_port
from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_argv import redact_argv
from mcp_replay_action.report._format import public_target

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("limits")]

R = "[REDACTED]"
FAKES = Path(__file__).parent / "fakes"
ECHO = f"{sys.executable} {FAKES / 'echo_server.py'}"
PW = "hunter2Secret"


def text(value: str) -> str:
    return str(Redactor().apply(value))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (f"DB_PASSWORD={PW}", f"DB_PASSWORD={R}"),
        (f"export API_KEY={PW} && run", f"export API_KEY={R} && run"),
        (f"GITHUB_TOKEN='{PW}'", f"GITHUB_TOKEN='{R}'"),
        (
            f"https://api.test/v1?user=bob&access_token={PW}&page=2",
            f"https://api.test/v1?user=bob&access_token={R}&page=2",
        ),
        (f"Server=db;User Id=sa;Password={PW};Encrypt=true", f"Server=db;User Id=sa;Password={R};Encrypt=true"),
        (f"fatal: postgres://admin:{PW}@db.internal/prod", f"fatal: postgres://admin:{R}@db.internal/prod"),
        (f"mongodb+srv://app:{PW}@cluster0.x.mongodb.net/db", f"mongodb+srv://app:{R}@cluster0.x.mongodb.net/db"),
        (f"redis://:{PW}@cache:6379/0", f"redis://:{R}@cache:6379/0"),
        (f"curl -H 'Authorization: Token {PW}' x", f"curl -H 'Authorization: Token {R}' x"),
        ("Authorization: Basic dXNlcjpwYXNz", f"Authorization: Basic {R}"),
        (f"X-Api-Key: {PW}\nAccept: */*", f"X-Api-Key: {R}\nAccept: */*"),
        ("SESSION=Zx81Lq0Pm3Nv7Rt2Yw5Ks9Hd4Gf6Jb1Cx", f"SESSION={R}"),  # not a secret name: random value
    ],
)
def test_credentials_inside_text_are_redacted(before: str, after: str) -> None:
    assert text(before) == after


@pytest.mark.parametrize(
    "kept",
    [
        "password=$DB_PASSWORD",  # a reference, not a value
        "api_key=<your key here>",
        "max_tokens=4096 and page_token=2",
        "see https://example.com/docs?page=2",
        "ssh://git@github.com/owner/repo",
    ],
)
def test_ordinary_assignments_and_urls_are_kept(kept: str) -> None:
    assert text(kept) == kept


def test_secret_flags_on_the_command_line_and_inside_sh_c() -> None:
    argv = [
        "sh",
        "-c",
        f"server --db-pass {PW} --password {PW} --client-secret={PW} --port 8080",
        "--auth",
        PW,
        "--key",
        PW,
    ]
    shown = redact_argv(Redactor(), argv)
    assert PW not in json.dumps(shown)
    assert shown[2] == f"server --db-pass {R} --password {R} --client-secret={R} --port 8080"
    assert shown[3:] == ["--auth", R, "--key", R]


@pytest.mark.parametrize(
    "argv",
    [
        ["sh", "-c", "mkdir -p /tmp/x/run && cp -p a b"],
        ["mkdir", "-p", "/tmp/x/run"],
        ["ssh", "-p", "2222", "deploy@example.com"],
        ["python", "-m", "http.server", "-p", "8000"],
        ["psql", "-h", "db", "-p", "5432", "-U", "app", "-d", "shop"],
        ["docker", "run", "--rm", "-i", "-p", "8080:80", "-e", "LOG_LEVEL=debug", "mcp/server"],
        ["sh", "-c", "ssh -p 2222 host 'tar -C /srv -xzf -' < dist.tgz"],
        ["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        ["uvx", "mcp-server-time", "--local-timezone", "UTC"],
        ["node", "dist/index.js", "--port", "3000", "--no-auth", "/srv/data"],
        ["git", "log", "-n", "5", "--pretty=format:%h"],
    ],
)
def test_ordinary_command_lines_are_kept_as_they_were(argv: list[str]) -> None:
    assert redact_argv(Redactor(), argv) == argv


@pytest.mark.parametrize("flag", ["-p", "-P", "-k", "-a"])
def test_a_one_letter_flag_hides_a_value_that_looks_like_a_secret(flag: str) -> None:
    key = "sk_live_" + "a1B2c3D4" * 4
    assert redact_argv(Redactor(), ["redis-cli", flag, key]) == ["redis-cli", flag, R]
    assert redact_argv(Redactor(), ["sh", "-c", f"mysql {flag} {key} shop"]) == ["sh", "-c", f"mysql {flag} {R} shop"]


def test_the_reports_target_is_redacted() -> None:
    target = f"sh -c 'node srv.js --db-pass {PW}' postgres://u:{PW}@h/db ghp_{'a1B2' * 9}"
    assert PW not in public_target(target) and "ghp_" not in public_target(target)


def record_stdio(cassette: Path, arguments: dict[str, Any], *options: str) -> None:
    """One ``tools/call echo`` recorded through the real proxy, the official SDK as the client."""

    async def script(client: Client) -> dict[str, Any]:
        await client.call_tool("echo", arguments)
        return {}

    record_through_proxy(ECHO, cassette, script, proxy_args=options)


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def test_a_literal_redact_pattern_never_reaches_the_header(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    record_stdio(cassette, {"text": f"use {PW} now"}, "--redact-pattern", PW, "--redact-pattern", r"pin=(\d+)")
    on_disk = cassette.read_text()
    assert PW not in on_disk
    patterns = json.loads(on_disk.splitlines()[0])["meta"]["redaction"]["patterns"]
    assert patterns == [f"{R} literal pattern 1", r"pin=(\d+)"]


def test_record_scenarios_redacts_secret_named_target_env(tmp_path: Path) -> None:
    secret = "sk-live-" + "Q7w" * 5  # short of every built-in shape: only the env rule can catch it
    scenarios = tmp_path / "scenarios.yml"
    command = json.dumps(f"{sys.executable} {FAKES / 'env_echo_server.py'}")
    scenarios.write_text(
        f"target:\n  command: {command}\n"
        f"  env:\n    SERVICE_TOKEN: {json.dumps(secret)}\n    BUILD: '7'\n"
        "scenarios:\n  one:\n    - call_tool: {name: show, arguments: {}}\n"
    )
    done = cli("record-scenarios", str(scenarios))
    assert done.returncode == 0, done.stderr
    written = (tmp_path / "cassettes" / "one.jsonl").read_text()
    assert secret not in written and "build 7 token [REDACTED]" in written
    assert json.loads(written.splitlines()[0])["meta"]["redaction"]["env"] == ["SERVICE_TOKEN"]


def test_redact_env_scrubs_the_recorded_url_path_and_log_lines(tmp_path: Path) -> None:
    value = "tenant-" + "k3Y9" * 4
    cassette = tmp_path / "http.jsonl"
    port = free_port()
    with FakeHttpServer("json") as fake:
        upstream = fake.url.replace("/mcp", f"/{value}/mcp")
        proc = subprocess.Popen(
            [sys.executable, "-m", "mcp_replay_action", "record", "--url", upstream, "--listen", f"127.0.0.1:{port}",
             "--cassette", str(cassette), "--redact-env", "TENANT"],
            env={**os.environ, "TENANT": value}, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
                    "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
            for _ in range(100):
                try:
                    reply = httpx.post(f"http://127.0.0.1:{port}/{value}/mcp", json=init, timeout=5,
                                       headers={"Accept": "application/json, text/event-stream"})  # fmt: skip
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            assert reply.status_code == 200  # the proxy serves: its stop signals are trapped already
        finally:
            proc.send_signal(signal.SIGINT)
            _, said = proc.communicate(timeout=30)
    assert value not in said and "record: proxy for" in said
    on_disk = cassette.read_text()
    assert value not in on_disk
    assert R in json.loads(on_disk.splitlines()[0])["meta"]["url"]


# -- item 4: content is not a secret -----------------------------------------------------------

CERT_BODY = base64.b64encode(hashlib.sha512(b"cert").digest() * 3).decode()
CERTIFICATE = (
    "-----BEGIN CERTIFICATE-----\n"
    + "\n".join(CERT_BODY[i : i + 64] for i in range(0, len(CERT_BODY), 64))
    + "\n-----END CERTIFICATE-----\n"
)
MIME = "\n".join(CERT_BODY[i : i + 76] for i in range(0, len(CERT_BODY), 76))
SRI = "sha512-" + base64.b64encode(hashlib.sha512(b"left-pad").digest()).decode()
DIGESTS = {
    "sri256": "sha256-" + base64.b64encode(hashlib.sha256(b"x").digest()).decode(),
    "sri384": "sha384-" + base64.b64encode(hashlib.sha384(b"x").digest()).decode(),
    "b64_32": base64.b64encode(hashlib.sha256(b"y").digest()).decode(),
    "b64_48": base64.b64encode(hashlib.sha384(b"y").digest()).decode(),
    "b64_64": base64.b64encode(hashlib.sha512(b"y").digest()).decode(),
    "hex_16": hashlib.md5(b"z").hexdigest(),  # noqa: S324 - a digest shape, not security
    "hex_20": hashlib.sha1(b"z").hexdigest(),  # noqa: S324
    "hex_64": hashlib.sha512(b"z").hexdigest(),
}


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_digests_in_prose_are_content(name: str) -> None:
    prose = f"the package integrity is {DIGESTS[name]} (checked)"
    assert text(prose) == prose


def test_certificates_and_wrapped_base64_are_content() -> None:
    assert text(CERTIFICATE) == CERTIFICATE
    assert text(MIME) == MIME
    assert text(f"integrity: {SRI}") == f"integrity: {SRI}"


def test_a_request_carrying_content_replays_unchanged(tmp_path: Path) -> None:
    """Recorded for real through the proxy, replayed for real against the same server: grade A,
    and the cassette keeps the SRI hash, the digests and the certificate verbatim."""
    cassette = tmp_path / "content.jsonl"
    arguments = {"text": f"npm integrity {SRI}", "cert": CERTIFICATE, "mime": MIME, **DIGESTS}
    record_stdio(cassette, arguments)
    [recorded] = [i for i in cassette_lines(cassette)[1:] if i["message"].get("method") == "tools/call"]
    assert recorded["message"]["params"]["arguments"] == arguments
    done = cli("replay", "--server", ECHO, "--cassette", str(cassette), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["grade"] == "A"
