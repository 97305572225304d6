"""scenarios.yml: loading (lines, interpolation, every mistake a file:line one-liner) and scripted
recording against fakes and real servers in both protocol eras."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from http_helpers import free_port
from mcp_replay_action import __version__, cassette
from mcp_replay_action.errors import ConfigError, ServerStartError, TransportTimeout
from mcp_replay_action.scenarios import Action, Scenarios, Target, load_scenarios, record_scenarios

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent
TIME_SERVER = VENV_BIN / "mcp-server-time"
EVERYTHING = ROOT / "tests" / "servers" / "node_modules" / ".bin" / "mcp-server-everything"
CALC = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]


def write(tmp_path: Path, text: str, name: str = "scenarios.yml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def load_error(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_scenarios(path, environ=environ or {})
    message = str(info.value)
    assert "\n" not in message
    return message.replace(str(path), "FILE")


# --------------------------------------------------------------------------- loading

SEED_LIKE = """
schema_version: "1.0"

target:
  command: "node"
  args: ["dist/index.js", "--port", 3]
  env:
    API_KEY: "${API_KEY}"
    REGION: "${AWS_REGION:-us-east-1}"

redact:
  server_url: true
  env:
    - API_KEY
  patterns:
    - "sk-[a-zA-Z0-9]+"

scenarios:
  tools_and_schemas:
    description: "Discover tools and call search"
    actions:
      - list_tools
      - call_tool:
          name: search
          arguments:
            query: "${QUERY:-test}"
            limit: 5
            since: 2024-01-01

  error_handling:
    description: Invalid inputs return proper errors
    protocol: stateless
    actions:
      - call_tool:
          name: search
          arguments: {}
      - get_prompt: {name: greet, arguments: {who: "$${literal}"}}
      - read_resource: {uri: "file:///tmp/${USER_NAME}.txt"}
      - list_prompts
      - list_resources
      - list_resource_templates
      - ping
      - request: {method: completion/complete, params: {ref: {type: ref/prompt, name: greet}}}
      - notify: {method: notifications/roots/list_changed}
"""


def test_loads_the_seed_shape_with_lines_and_interpolation(tmp_path: Path) -> None:
    path = write(tmp_path, SEED_LIKE)
    loaded = load_scenarios(path, environ={"API_KEY": "k-123456", "USER_NAME": "ada"})
    assert loaded.target.command == ("node", "dist/index.js", "--port", "3")
    assert loaded.target.env == {"API_KEY": "k-123456", "REGION": "us-east-1"}
    # The current directory, as mcp-recorder runs a stdio target (not the file's directory).
    assert loaded.target.cwd == str(Path.cwd())
    assert loaded.redact.env == ("API_KEY",) and loaded.redact.patterns == ("sk-[a-zA-Z0-9]+",)
    assert loaded.names == ("tools_and_schemas", "error_handling")
    first, second = loaded.scenarios
    assert first.protocol_version == "2025-11-25" and first.era == "handshake"
    assert second.protocol_version == "2026-07-28" and second.era == "stateless"
    lines = path.read_text().splitlines()

    def line_of(fragment: str, after: int = 0) -> int:
        return next(n for n, text in enumerate(lines, 1) if n > after and fragment in text)

    assert [a.line for a in first.actions] == [line_of("- list_tools"), line_of("- call_tool:")]
    call = first.actions[1]
    assert call == Action(
        kind="call_tool",
        method="tools/call",
        params={"name": "search", "arguments": {"query": "test", "limit": 5, "since": "2024-01-01"}},
        line=line_of("- call_tool:"),
    )
    methods = [a.method for a in second.actions]
    assert methods == [
        "tools/call",
        "prompts/get",
        "resources/read",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "ping",
        "completion/complete",
        "notifications/roots/list_changed",
    ]
    assert second.actions[1].params == {"name": "greet", "arguments": {"who": "${literal}"}}
    assert second.actions[2].params == {"uri": "file:///tmp/ada.txt"}
    assert second.actions[8].notification and not second.actions[7].notification
    start = line_of("error_handling:")
    assert [a.line for a in second.actions][:3] == [
        line_of("- call_tool:", start),
        line_of("- get_prompt:"),
        line_of("- read_resource:"),
    ]


def test_url_target_and_top_level_options(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        target: https://mcp.example.com/${TOKEN}/mcp
        protocol: "2025-06-18"
        timeout: 5
        startup_timeout: 12.5
        client_capabilities: {roots: {listChanged: false}}
        scenarios:
          quick: [list_tools, ping]
        """,
    )
    loaded = load_scenarios(path, environ={"TOKEN": "abc"})
    assert loaded.target.url == "https://mcp.example.com/abc/mcp"
    assert loaded.target.describe() == "https://mcp.example.com"
    assert loaded.timeout == 5.0 and loaded.startup_timeout == 12.5
    assert loaded.client_capabilities == {"roots": {"listChanged": False}}
    (quick,) = loaded.scenarios
    assert quick.protocol_version == "2025-06-18" and quick.era == "handshake"
    assert [a.method for a in quick.actions] == ["tools/list", "ping"]


def test_a_string_command_is_split_like_a_shell(tmp_path: Path) -> None:
    path = write(tmp_path, "target: python -m 'my server' --flag\nscenarios: {a: [ping]}\n")
    assert load_scenarios(path, environ={}).target.command == ("python", "-m", "my server", "--flag")


def test_a_mapping_target_keeps_every_field(tmp_path: Path) -> None:
    text = """
    target: {command: node, args: [dist/index.js, true], env: {A: 1}, cwd: ., isolate: true, setup: make seed}
    startup_timeout: 7
    scenarios: {a: [ping]}
    """
    loaded = load_scenarios(write(tmp_path, text), environ={})
    here = str(Path.cwd().resolve())
    assert loaded.target == Target(
        command=("node", "dist/index.js", "true"),
        env={"A": "1"},
        cwd=here,
        isolate=True,
        setup=("make", "seed"),
        startup_timeout=7.0,
    )
    text = "target: {url: 'http://127.0.0.1:9/mcp', headers: {X-Key: k}}\nscenarios: {a: [ping]}\n"
    loaded = load_scenarios(write(tmp_path, text), environ={})
    assert loaded.target == Target(url="http://127.0.0.1:9/mcp", headers={"X-Key": "k"}, cwd=here)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("target: x\nscenarios: {a: [ping]}\nbogus: 1\n", "FILE:3: unknown key 'bogus'"),
        ("scenarios: {a: [ping]}\n", "FILE:1: missing 'target'"),
        ("target: x\n", "FILE:1: missing 'scenarios'"),
        ('schema_version: "2.0"\ntarget: x\nscenarios: {a: [ping]}\n', "FILE:1: unknown schema_version '2.0'"),
        ("target: x\nscenarios:\n  a:\n    actions:\n      - fly_away\n", "FILE:5: unknown action 'fly_away'"),
        (
            "target: x\nscenarios:\n  a:\n    actions:\n      - call_tool: {arguments: {}}\n",
            "FILE:5: call_tool needs 'name'",
        ),
        (
            "target: x\nscenarios:\n  a:\n    actions:\n      - call_tool: {name: t, argumnets: {}}\n",
            "FILE:5: call_tool: unknown field 'argumnets'",
        ),
        (
            "target: x\nscenarios:\n  a:\n    actions:\n      - call_tool: {name: t}\n        ping: {}\n",
            "FILE:5: an action is one key",
        ),
        ("target: x\nscenarios:\n  a:\n    actions: []\n", "FILE:4: actions of scenario 'a' must be a non-empty list"),
        ("target: x\nscenarios:\n  a:\n    description: d\n", "FILE:3: scenario 'a' has no actions"),
        ("target: x\nscenarios:\n  ../evil: [ping]\n", "FILE:3: scenario name '../evil'"),
        ("target: x\nscenarios: {}\n", "FILE:2: scenarios is empty"),
        ("target: x\nprotocol: modern\nscenarios: {a: [ping]}\n", "FILE:2: protocol must be handshake, stateless"),
        ("target: x\ntimeout: -1\nscenarios: {a: [ping]}\n", "FILE:2: timeout must be a number"),
        (
            "target: x\nredact:\n  patterns: ['ok', '(unclosed']\nscenarios: {a: [ping]}\n",
            "FILE:3: redact.patterns: '(unclosed' is not a valid regular expression",
        ),
        ("target: x\nredact: {env: [not-a-name]}\nscenarios: {a: [ping]}\n", "FILE:2: redact.env: 'not-a-name'"),
        ("target: x\nredact: {colour: red}\nscenarios: {a: [ping]}\n", "FILE:2: unknown key redact.colour"),
        ("target: {args: [a]}\nscenarios: {a: [ping]}\n", "FILE:1: target needs a command (stdio) or a url"),
        ("target: {url: ftp://x}\nscenarios: {a: [ping]}\n", "FILE:1: target.url must start with http://"),
        ("target: {command: x, cwd: nowhere}\nscenarios: {a: [ping]}\n", "target.cwd"),
        # An empty program is named at its line here, not by the target builder (no file:line).
        ("target:\n  command: ['', a]\nscenarios: {a: [ping]}\n", "FILE:2: target.command must not be empty"),
        ("target:\n  command: x\n  setup: ['']\nscenarios: {a: [ping]}\n", "FILE:3: target.setup must be a command"),
        (
            "target: x\nscenarios:\n  a: [ping]\n  a: [ping]\n",
            "FILE:4: duplicate key 'a' in scenarios (first on line 3)",
        ),
        ("target: x\nscenarios:\n  a: [ping\n", "FILE:4: invalid YAML"),
        ("target: [x\n", "invalid YAML"),
        ("- just\n- a list\n", "FILE:1: the file must be a mapping"),
        ("", "FILE: empty file"),
        ("target: x\nscenarios:\n  a:\n    - read_resource: {uri: !!binary aGk=}\n", "FILE:4: binary"),
        ("target: !custom x\nscenarios: {a: [ping]}\n", "FILE:1: invalid YAML"),
    ],
)
def test_every_mistake_is_one_line_with_file_and_line(tmp_path: Path, text: str, expected: str) -> None:
    assert expected in load_error(tmp_path, text)


def test_missing_variable_names_it_and_its_line(tmp_path: Path) -> None:
    text = "target: x\nscenarios:\n  a:\n    - call_tool:\n        name: t\n        arguments: {key: '${SECRET}'}\n"
    message = load_error(tmp_path, text)
    assert message.startswith("FILE:6: environment variable SECRET is not set")
    assert "${SECRET:-default}" in message


def test_interpolation_forms(tmp_path: Path) -> None:
    text = """
    target: x
    scenarios:
      a:
        - request:
            method: m
            params:
              empty_colon: "${EMPTY:-fallback}"
              empty_dash: "${EMPTY-fallback}"
              unset_dash: "${UNSET-fallback}"
              two: "${A}${A}"
              escaped: "$${A} and ${A}"
              untouched: "$A and ${"
              number: 7
              key_${A}: not expanded
    """
    params = load_scenarios(write(tmp_path, text), environ={"EMPTY": "", "A": "x"}).scenarios[0].actions[0].params
    assert params == {
        "empty_colon": "fallback",
        "empty_dash": "",
        "unset_dash": "fallback",
        "two": "xx",
        "escaped": "${A} and x",
        "untouched": "$A and ${",
        "number": 7,
        "key_${A}": "not expanded",
    }
    bad = "target: x\nscenarios: {a: [{request: {method: '${1BAD}'}}]}\n"
    assert "invalid variable reference ${1BAD}" in load_error(tmp_path, bad)


def test_anchors_and_merge_keys_work(tmp_path: Path) -> None:
    text = """
    target: x
    scenarios:
      a:
        - call_tool: &add {name: add, arguments: {a: 1, b: 2}}
        - call_tool: {<<: *add, arguments: {a: 5, b: 6}}
    """
    actions = load_scenarios(write(tmp_path, text), environ={}).scenarios[0].actions
    assert actions[0].params == {"name": "add", "arguments": {"a": 1, "b": 2}}
    assert actions[1].params == {"name": "add", "arguments": {"a": 5, "b": 6}}


def _laughs(tmp_path: Path, merge: bool) -> Path:
    """Nine aliases of nine aliases, nine deep, inside a valid scenario's arguments: 9^9 values as
    lists; as ``<<`` merges of mappings, which PyYAML merges by key (17 keys, however deep)."""
    if merge:
        rows = ["m0: &m0 {" + ", ".join(f"k{i}: {i}" for i in range(9)) + "}"]
        rows += [f"m{n}: &m{n} {{<<: [{', '.join([f'*m{n - 1}'] * 9)}], own{n}: {n}}}" for n in range(1, 9)]
    else:
        rows = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
        rows += [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]" for n in range(1, 9)]
    head = "target: x\nscenarios:\n  s:\n    - call_tool:\n        name: add\n        arguments:\n"
    return write(tmp_path, head + "".join(f"          {row}\n" for row in rows))


def test_an_alias_bomb_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _laughs(tmp_path, merge=False)
    # In a child process with a memory ceiling: unrefused, the expansion runs on for minutes.
    code = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 29, 1 << 29))\n"
        "from mcp_replay_action.errors import ConfigError\n"
        "from mcp_replay_action.scenarios import load_scenarios\n"
        "try:\n    load_scenarios(sys.argv[1], environ={})\n"
        "except ConfigError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and not done.stderr, done.stderr[-2000:]
    # Line 11 is a4's list, whose aliases (each a3: 9^4 values) pass the bound.
    assert done.stdout == f"{path}:11: aliases here expand to more than 10000 values (an alias bomb?)\n"


@pytest.mark.parametrize("style", ["flow", "block"])
def test_a_file_nested_5000_deep_is_one_line_naming_it(tmp_path: Path, style: str) -> None:
    """PyYAML's composer recurses per level: 5000 levels were a RecursionError traceback."""
    if style == "flow":
        body = "  a: " + "[" * 5000 + "]" * 5000 + "\n"
    else:
        body = "  a:\n" + "".join(" " * (i + 4) + f"k{i}:\n" for i in range(5000))
    path = write(tmp_path, "target: x\nscenarios:\n" + body)
    done = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "record-scenarios", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    line = 3 if style == "flow" else 101  # where the 101st level (a key of the 100th mapping) is
    assert done.stderr == f"mcp-replay: error: {path}:{line}: invalid YAML: nested deeper than 100 levels\n"
    assert not (tmp_path / "cassettes").exists()


def test_merges_nine_deep_are_not_a_bomb(tmp_path: Path) -> None:
    arguments = load_scenarios(_laughs(tmp_path, merge=True), environ={}).scenarios[0].actions[0].params["arguments"]
    assert {key: len(value) for key, value in arguments.items()} == {f"m{n}": 9 + n for n in range(9)}


def test_an_alias_used_often_within_the_bound_is_read(tmp_path: Path) -> None:
    args = "{" + ", ".join(f"k{i}: *add" for i in range(500)) + "}"
    text = f"target: x\nscenarios:\n  s:\n    - call_tool: &add {{name: add, arguments: {{a: 1, b: 2}}}}\n    - call_tool: {{name: many, arguments: {args}}}\n"
    actions = load_scenarios(write(tmp_path, text), environ={}).scenarios[0].actions
    assert actions[1].params["arguments"]["k499"] == {"name": "add", "arguments": {"a": 1, "b": 2}}


def test_unknown_scenario_name_is_a_config_error(tmp_path: Path) -> None:
    loaded = load_scenarios(write(tmp_path, "target: x\nscenarios: {one: [ping]}\n"), environ={})
    with pytest.raises(ConfigError, match=r"no scenario named 'two' \(have: one\)"):
        record_scenarios(loaded, tmp_path / "out", only=["two"])


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match="no such file"):
        load_scenarios("/nonexistent/scenarios.yml")


# --------------------------------------------------------------------------- recording (fake server)


class FakeServer:
    """An in-process Transport: ``handler(message)`` returns the messages the server sends back."""

    def __init__(self, handler: Callable[[dict[str, Any]], list[dict[str, Any]]]) -> None:
        self.handler = handler
        self.sent: list[dict[str, Any]] = []
        self.queue: list[dict[str, Any]] = []
        self.started = False
        self.closed = False

    def start(self) -> None:
        self.started = True

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.queue.extend(self.handler(message))

    def receive(self, timeout: float, prepared: Any = None) -> dict[str, Any]:
        if not self.queue:
            raise TransportTimeout(f"no message from the server within {timeout:g} s", stderr_tail="fake: stuck")
        return self.queue.pop(0)

    def close(self) -> None:
        self.closed = True

    def diagnostics(self) -> dict[str, Any]:
        return {"stderr_tail": "fake: stuck", "exit_status": None, "non_json_lines": 0}


def ok(msg: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def handshake_server(msg: dict[str, Any]) -> list[dict[str, Any]]:
    method = msg.get("method")
    if method is None or "id" not in msg:
        return []  # notifications and our answers to its requests
    if method == "initialize":
        info = {"name": "fake", "version": "9.9"}
        return [ok(msg, {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": info})]
    if method == "tools/call" and msg["params"]["name"] == "ask":
        return [
            {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "asking"}},
            {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"},
            {"jsonrpc": "2.0", "id": "s2", "method": "sampling/createMessage", "params": {}},
            {"jsonrpc": "2.0", "id": 999, "result": {}},  # an answer to nothing we sent
            ok(msg, {"content": [{"type": "text", "text": f"token {FAKE_SECRET} sk-abcdefghijklmnop"}]}),
        ]
    if method == "tools/call" and msg["params"]["name"] == "hang":
        return []
    return [ok(msg, {"echo": msg.get("params")})]


FAKE_SECRET = "s3cr3t-value-42"


def load_text(tmp_path: Path, text: str, environ: dict[str, str] | None = None) -> Scenarios:
    return load_scenarios(write(tmp_path, text), environ=environ or {})


def test_handshake_recording_answers_server_requests_and_keeps_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_TOKEN", FAKE_SECRET)
    loaded = load_text(
        tmp_path,
        """
        target: {command: "fake-server --token ${FAKE_TOKEN}"}
        protocol: "2025-06-18"
        redact: {env: [FAKE_TOKEN], patterns: ["sk-[a-z]+"]}
        scenarios:
          main:
            description: the fake
            actions:
              - list_tools
              - call_tool: {name: ask}
              - notify: {method: notifications/roots/list_changed}
        """,
        environ={"FAKE_TOKEN": FAKE_SECRET},
    )
    fake = FakeServer(handshake_server)
    (path,) = record_scenarios(loaded, tmp_path / "out", make_transport=lambda target: fake)
    assert path == tmp_path / "out" / "main.jsonl"
    assert fake.started and fake.closed
    # what went over the wire: handshake, actions, answers to the two server requests
    wire = [(m.get("method"), m.get("id")) for m in fake.sent]
    assert wire == [
        ("initialize", 0),
        ("notifications/initialized", None),
        ("tools/list", 1),
        ("tools/call", 2),
        (None, "s1"),
        (None, "s2"),
        ("notifications/roots/list_changed", None),
    ]
    assert fake.sent[0]["params"]["protocolVersion"] == "2025-06-18"
    assert fake.sent[4]["result"] == {"roots": []}
    assert fake.sent[5]["error"]["code"] == -32601
    assert "_meta" not in json.dumps(fake.sent)  # handshake era: no per-request envelope

    c = cassette.load(path)
    kinds = [(i.seq, i.kind, i.method) for i in c.interactions]
    assert kinds == [
        (0, "request", "initialize"),
        (1, "notification", "notifications/initialized"),
        (2, "request", "tools/list"),
        (3, "request", "tools/call"),
        (4, "server-notification", "notifications/message"),
        (5, "server-request", "roots/list"),
        (6, "server-request", "sampling/createMessage"),
        (7, "notification", "notifications/roots/list_changed"),
    ]
    assert [i.line for i in c.interactions] == list(range(2, 10))
    call = c.interactions[3]
    assert call.response is not None and call.response["id"] == 2  # the stray id 999 was not taken
    text = call.response["result"]["content"][0]["text"]
    assert FAKE_SECRET not in path.read_text()
    assert text == "token [REDACTED] [REDACTED]"
    assert c.interactions[5].response == {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}
    meta = c.meta
    assert meta["server"] == ["fake-server", "--token", "[REDACTED]"]
    assert meta["url"] is None and meta["transport"] == "stdio"
    assert (meta["protocol_version"], meta["era"]) == ("2025-06-18", "handshake")
    assert meta["server_info"] == {"name": "fake", "version": "9.9"}
    assert meta["tool_version"] == __version__
    assert meta["scenario"] == "main" and meta["description"] == "the fake"
    assert meta["recorded_at"].endswith("Z")
    assert meta["redaction"]["env"] == ["FAKE_TOKEN"]
    assert meta["redaction"]["patterns"] == ["sk-[a-z]+"]
    assert meta["redaction"]["hits"]["env"] == 1  # the response; --token X fell to the argv rule


def stateless_server(msg: dict[str, Any]) -> list[dict[str, Any]]:
    if "id" not in msg:
        return []
    meta = (msg.get("params") or {}).get("_meta") or {}
    if meta.get("io.modelcontextprotocol/protocolVersion") != "2026-07-28":
        return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": "no envelope"}}]
    method = msg["method"]
    if method == "server/discover":
        info = {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "2"}}
        return [ok(msg, {"supportedVersions": ["2026-07-28"], "capabilities": {}, "_meta": info})]
    params = msg["params"]
    if method == "tools/call" and params.get("name") in ("confirm", "sample"):
        if "requestState" not in params:
            kind = "elicitation/create" if params["name"] == "confirm" else "sampling/createMessage"
            requests = {"ok": {"method": kind, "params": {}}, "where": {"method": "roots/list"}}
            result = {"resultType": "input_required", "inputRequests": requests, "requestState": "state-1"}
            return [ok(msg, result)]
        return [ok(msg, {"resultType": "complete", "got": params["inputResponses"], "state": params["requestState"]})]
    return [ok(msg, {"resultType": "complete"})]


def test_stateless_recording_stamps_every_request_and_retries_input_required(tmp_path: Path) -> None:
    loaded = load_text(
        tmp_path,
        """
        target: modern-server
        protocol: stateless
        client_capabilities: {elicitation: {}}
        scenarios:
          modern:
            - list_tools
            - call_tool: {name: confirm, arguments: {x: 1}}
            - call_tool:
                name: sample
                input_responses: {ok: {role: assistant, content: {type: text, text: hi}, model: m}}
            - request: {method: custom/thing, params: {_meta: {mine: 1}}}
        """,
    )
    fake = FakeServer(stateless_server)
    (path,) = record_scenarios(loaded, tmp_path, make_transport=lambda target: fake)
    for message in fake.sent:
        meta = message["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientCapabilities"] == {"elicitation": {}}
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-replay"
    assert [m["method"] for m in fake.sent] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "tools/call",
        "custom/thing",
    ]
    retry = fake.sent[3]["params"]
    assert retry["arguments"] == {"x": 1}
    assert retry["requestState"] == "state-1"
    assert retry["inputResponses"] == {"ok": {"action": "decline"}, "where": {"roots": []}}
    assert fake.sent[5]["params"]["inputResponses"]["ok"]["model"] == "m"
    assert fake.sent[6]["params"]["_meta"]["mine"] == 1
    c = cassette.load(path)
    assert c.meta["era"] == "stateless" and c.meta["protocol_version"] == "2026-07-28"
    assert c.meta["server_info"] == {"name": "modern", "version": "2"}
    assert [i.method for i in c.interactions][:4] == ["server/discover", "tools/list", "tools/call", "tools/call"]


def test_stateless_input_nobody_can_give_names_the_action(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, "target: x\nprotocol: stateless\nscenarios:\n  s:\n    - call_tool: {name: sample}\n")
    with pytest.raises(ConfigError) as info:
        record_scenarios(loaded, tmp_path, make_transport=lambda target: FakeServer(stateless_server))
    assert str(info.value).startswith(f"{loaded.path}:5: scenario 's': the server asks for sampling/createMessage")
    assert "input_responses" in str(info.value)
    assert not list(tmp_path.glob("*.jsonl"))


def test_a_server_without_the_stateless_era_is_told_plainly(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, "target: x\nprotocol: stateless\nscenarios:\n  s: [list_tools]\n")

    def old_server(msg: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}]

    with pytest.raises(ServerStartError, match="does not speak the stateless protocol 2026-07-28.*-32601"):
        record_scenarios(loaded, tmp_path, make_transport=lambda target: FakeServer(old_server))


def test_a_hanging_request_names_file_line_and_request(tmp_path: Path) -> None:
    loaded = load_text(
        tmp_path,
        "target: x\ntimeout: 0.2\nscenarios:\n  s:\n    - ping\n    - call_tool: {name: hang}\n",
    )
    fake = FakeServer(handshake_server)
    with pytest.raises(TransportTimeout) as info:
        record_scenarios(loaded, tmp_path, make_transport=lambda target: fake)
    assert str(info.value).startswith(f"{loaded.path}:6: scenario 's': tools/call hang: no message")
    assert info.value.stderr_tail == "fake: stuck"
    assert fake.closed


def test_no_answer_to_the_opening_request_is_a_start_error(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, "target: x\nstartup_timeout: 0.1\nscenarios:\n  s: [ping]\n")
    with pytest.raises(ServerStartError, match="initialize: no message"):
        record_scenarios(loaded, tmp_path, make_transport=lambda target: FakeServer(lambda m: []))


def test_a_failing_scenario_writes_no_cassette_at_all(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, "target: x\ntimeout: 0.1\nscenarios:\n  a: [ping]\n  b: [{call_tool: {name: hang}}]\n")
    out = tmp_path / "out"
    with pytest.raises(TransportTimeout):
        record_scenarios(loaded, out, make_transport=lambda target: FakeServer(handshake_server))
    assert not out.exists()
    (only_a,) = record_scenarios(loaded, out, only=["a"], make_transport=lambda target: FakeServer(handshake_server))
    assert only_a.name == "a.jsonl"


def test_url_target_keeps_only_the_origin_in_the_header(tmp_path: Path) -> None:
    loaded = load_text(tmp_path, "target: http://127.0.0.1:9/KEY-in-path-42/mcp?k=v\nscenarios:\n  s: [ping]\n")
    assert loaded.target == Target(url="http://127.0.0.1:9/KEY-in-path-42/mcp?k=v")
    (path,) = record_scenarios(loaded, tmp_path, make_transport=lambda target: FakeServer(handshake_server))
    meta = cassette.load(path).meta
    assert meta["url"] == "http://127.0.0.1:9" and meta["transport"] == "http" and meta["server"] is None
    assert "KEY-in-path-42" not in path.read_text()


# --------------------------------------------------------------------------- recording (real servers)


def _record_real(tmp_path: Path, text: str) -> dict[str, cassette.Cassette]:
    loaded = load_text(tmp_path, text)
    paths = record_scenarios(loaded, tmp_path / "cassettes")
    return {p.stem: cassette.load(p) for p in paths}


def _replay_grade(c: cassette.Cassette, command: list[str]) -> str:
    """Replay a fresh recording against the same server: it must pass untouched."""
    from mcp_replay_action.plan import Plan
    from mcp_replay_action.replay.engine import replay_cassette
    from mcp_replay_action.transport.stdio import StdioTransport

    result = replay_cassette(c, StdioTransport(command), Plan())
    failures = [(r.seq, r.method, [f.message for f in r.findings]) for r in result.results if r.findings]
    assert not failures
    return result.score.grade


@pytest.mark.skipif(not TIME_SERVER.exists(), reason="mcp-server-time is not installed")
def test_real_time_server_in_both_eras(tmp_path: Path) -> None:
    recorded = _record_real(
        tmp_path,
        f"""
        target:
          command: {TIME_SERVER}
          args: [--local-timezone, Etc/UTC]
        scenarios:
          handshake:
            - list_tools
            - call_tool: {{name: get_current_time, arguments: {{timezone: Europe/Paris}}}}
            - call_tool:
                name: convert_time
                arguments: {{source_timezone: Etc/UTC, time: "12:00", target_timezone: Asia/Tokyo}}
            - call_tool: {{name: no_such_tool}}
            - ping
          stateless:
            protocol: stateless
            actions:
              - list_tools
              - call_tool: {{name: get_current_time, arguments: {{timezone: Europe/Paris}}}}
        """,
    )
    hs, sl = recorded["handshake"], recorded["stateless"]
    assert hs.meta["era"] == "handshake" and hs.meta["protocol_version"] == "2025-11-25"
    assert hs.meta["server_info"]["name"] == "mcp-time"
    assert [i.method for i in hs.interactions] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
        "tools/call",
        "tools/call",
        "tools/call",
        "ping",
    ]
    tools = {t["name"] for t in hs.interactions[2].response["result"]["tools"]}  # type: ignore[index]
    assert tools == {"get_current_time", "convert_time"}
    converted = hs.interactions[4].response["result"]["structuredContent"]  # type: ignore[index]
    assert converted["target"]["timezone"] == "Asia/Tokyo"
    assert "error" in hs.interactions[5].response  # type: ignore[operator]
    assert sl.meta["era"] == "stateless" and sl.meta["protocol_version"] == "2026-07-28"
    assert sl.meta["server_info"]["name"] == "mcp-time"
    assert [i.method for i in sl.interactions] == ["server/discover", "tools/list", "tools/call"]
    assert all(i.response["result"]["resultType"] == "complete" for i in sl.interactions)  # type: ignore[index]
    command = [str(TIME_SERVER), "--local-timezone", "Etc/UTC"]
    assert _replay_grade(hs, command) == "A"
    assert _replay_grade(sl, command) == "A"


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm test servers are not installed")
def test_real_everything_server_handshake_and_its_missing_stateless_era(tmp_path: Path) -> None:
    recorded = _record_real(
        tmp_path,
        f"""
        target: {EVERYTHING}
        scenarios:
          everything:
            - list_tools
            - call_tool: {{name: echo, arguments: {{message: hello}}}}
            - list_prompts
            - get_prompt: {{name: simple-prompt}}
            - list_resources
            - list_resource_templates
            - ping
        """,
    )
    c = recorded["everything"]
    requests = [i for i in c.interactions if i.kind == "request"]
    assert [i.method for i in requests] == [
        "initialize",
        "tools/list",
        "tools/call",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "ping",
    ]
    assert all(i.response is not None and "result" in i.response for i in requests)
    assert requests[2].response["result"]["content"][0]["text"].endswith("hello")  # type: ignore[index]
    assert _replay_grade(c, [str(EVERYTHING)]) == "A"
    loaded = load_text(tmp_path, f"target: {EVERYTHING}\nprotocol: stateless\nscenarios:\n  s: [list_tools]\n")
    with pytest.raises(ServerStartError, match="does not speak the stateless protocol"):
        record_scenarios(loaded, tmp_path / "none")


def test_real_sample_server_server_requests_and_multi_round_trip(tmp_path: Path) -> None:
    recorded = _record_real(
        tmp_path,
        f"""
        target: {{command: {json.dumps(CALC)}}}
        scenarios:
          roots:
            - call_tool: {{name: roots}}
            - call_tool: {{name: add, arguments: {{a: 2, b: 3}}}}
          confirm:
            protocol: stateless
            actions:
              - call_tool: {{name: confirm, arguments: {{action: wipe}}}}
              - call_tool:
                  name: confirm
                  arguments: {{action: deploy}}
                  input_responses: {{ok: {{action: accept, content: {{}}}}}}
        """,
    )
    roots = recorded["roots"]
    assert [i.kind for i in roots.interactions] == [
        "request",
        "notification",
        "request",
        "server-request",
        "request",
    ]
    assert roots.interactions[3].response["result"] == {"roots": []}  # type: ignore[index]
    assert roots.interactions[2].response["result"]["content"][0]["text"] == "roots: (none)"  # type: ignore[index]
    confirm = recorded["confirm"]
    texts = [
        i.response["result"].get("content", [{}])[0].get("text")  # type: ignore[index]
        for i in confirm.interactions
        if i.method == "tools/call"
    ]
    assert texts == [None, "wipe: decline", None, "deploy: accept"]
    assert _replay_grade(roots, CALC) == "A"
    assert _replay_grade(confirm, CALC) == "A"


def test_record_scenarios_command(tmp_path: Path) -> None:
    import subprocess

    path = write(tmp_path, f"target: {{command: {json.dumps(CALC)}}}\nscenarios:\n  one: [list_tools]\n  two: [ping]\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "record-scenarios", str(path), "--scenario", "two"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "cassettes" / "two.jsonl").exists()
    assert not (tmp_path / "cassettes" / "one.jsonl").exists()
    bad = write(tmp_path, "target: x\nscenarios:\n  a: [fly]\n", name="bad.yml")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "record-scenarios", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and f"{bad}:3: unknown action 'fly'" in proc.stderr
    missing = write(tmp_path, "target: /nonexistent/server-binary\nscenarios:\n  a: [ping]\n", name="missing.yml")
    proc = subprocess.run(
        [sys.executable, "-m", "mcp_replay_action", "record-scenarios", str(missing)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip().count("\n") == 0


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm test servers are not installed")
def test_real_everything_server_over_streamable_http(tmp_path: Path) -> None:
    port = free_port()
    recorded = _record_real(
        tmp_path,
        f"""
        target:
          url: http://127.0.0.1:{port}/mcp
          command: {EVERYTHING}
          args: [streamableHttp]
          env: {{PORT: "{port}"}}
        scenarios:
          http:
            - list_tools
            - call_tool: {{name: echo, arguments: {{message: over http}}}}
        """,
    )
    c = recorded["http"]
    assert c.meta["transport"] == "http"
    assert c.meta["url"] == f"http://127.0.0.1:{port}"
    assert c.meta["server"] == [str(EVERYTHING), "streamableHttp"]
    calls = [i for i in c.interactions if i.kind == "request"]
    assert [i.method for i in calls] == ["initialize", "tools/list", "tools/call"]
    assert all(i.transport and i.transport["http_status"] == 200 for i in calls)
    assert calls[2].response["result"]["content"][0]["text"].endswith("over http")  # type: ignore[index]
