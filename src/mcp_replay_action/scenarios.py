"""Scripted recording: drive a server through the actions of a ``scenarios.yml``, no client code.

::

    schema_version: "1.0"
    target: node dist/index.js          # a command, an http(s):// URL, or a mapping:
    #   {command, args, env, cwd, isolate} or {url, headers, command?, ...}
    protocol: handshake                 # or stateless, or an exact version ("2025-06-18")
    timeout: 30                         # seconds per request
    client_capabilities: {}             # what the recording client declares
    redact: {server_url: true, env: [API_KEY], patterns: ["sk-[a-zA-Z0-9]+"], keys: [session]}
    scenarios:
      tools:
        description: Discover tools and call one
        protocol: stateless             # a scenario may pick its own era
        actions:
          - list_tools
          - call_tool: {name: add, arguments: {a: 2, b: 3}}
          - request: {method: completion/complete, params: {...}}

String values may use ``${VAR}``, ``${VAR:-default}`` (unset or empty) and ``${VAR-default}``
(unset); ``$${`` is a literal ``${``. Every mistake is a :class:`ConfigError` naming ``file:line``.

Each scenario is recorded against a fresh server (its own process or HTTP session) and written as
``<name>.jsonl``. The handshake era opens with ``initialize`` + ``notifications/initialized``; the
stateless era (2026-07-28) opens with ``server/discover`` and stamps every request's ``_meta`` with
the protocol version and the client capabilities. Server-to-client requests are answered (roots
with an empty list, ``ping`` with ``{}``, anything else with an error); a stateless
``input_required`` result is answered and the request retried, as a real client would.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from mcp_replay_action import __version__
from mcp_replay_action import cassette as cassette_mod
from mcp_replay_action.cassette import Cassette, Interaction
from mcp_replay_action.cassette.header import CassetteHeader, header_url, utc_now
from mcp_replay_action.errors import (
    ConfigError,
    ServerError,
    ServerExited,
    ServerStartError,
    TransportTimeout,
)
from mcp_replay_action.protocol import (
    HANDSHAKE_VERSION,
    META_CLIENT_CAPABILITIES,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
    era_of,
    is_input_required,
)
from mcp_replay_action.session import ClientSession, error_answer, result_answer
from mcp_replay_action.transport import Target, Transport, open_transport

SCHEMA_VERSION = "1.0"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
CLIENT_INFO = {"name": "mcp-replay", "version": __version__}
DEFAULT_TIMEOUT = 30.0
STARTUP_TIMEOUT = 30.0  # the first answer may wait for npx/uvx to fetch and start the server
MAX_INPUT_ROUNDS = 8  # multi round-trip retries of one action before we call it a loop
MIN_SECRET_LENGTH = 4  # shorter env values would scrub ordinary words and digits everywhere
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class Redaction:
    """The ``redact`` block: what to scrub before a cassette touches disk."""

    server_url: bool = True  # keep only scheme://host[:port] of the URL in the header
    env: tuple[str, ...] = ()  # names of variables whose values are replaced wherever they appear
    patterns: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    defaults: bool = True  # the built-in secret keys, bearer tokens and key-like strings


@dataclass(frozen=True)
class Action:
    """One step of a scenario: a request (or, for ``notify``, a notification) to send."""

    kind: str  # the action as written: list_tools, call_tool, request, ...
    method: str
    params: dict[str, Any] | None = None
    line: int = 0
    notification: bool = False
    input_responses: dict[str, Any] | None = None  # answers for a stateless input_required result

    @property
    def label(self) -> str:
        name = None
        if self.params:
            name = self.params.get("name") or self.params.get("uri")
        return f"{self.method} {name}" if isinstance(name, str) else self.method


@dataclass(frozen=True)
class Scenario:
    name: str
    actions: tuple[Action, ...]
    protocol_version: str = HANDSHAKE_VERSION
    description: str = ""
    line: int = 0

    @property
    def era(self) -> str:
        return era_of(self.protocol_version) or "handshake"


@dataclass(frozen=True)
class Scenarios:
    """A loaded ``scenarios.yml``."""

    path: str
    target: Target
    scenarios: tuple[Scenario, ...]
    target_line: int = 0  # where ``target`` is written, for messages about it
    redact: Redaction = Redaction()
    timeout: float = DEFAULT_TIMEOUT
    startup_timeout: float = STARTUP_TIMEOUT
    client_capabilities: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.scenarios)

    def get(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise ConfigError(f"{self.path}: no scenario named {name!r} (have: {', '.join(self.names)})")


# --------------------------------------------------------------------------- reading the file


class _Doc:
    """A composed YAML document: walks nodes so every value keeps the line it came from."""

    def __init__(self, path: str, text: str, environ: Mapping[str, str]) -> None:
        self.path = path
        self.environ = environ
        self.loader = yaml.SafeLoader(text)

    def error(self, node: yaml.Node | None, reason: str) -> ConfigError:
        return ConfigError(f"{self.path}:{line_of(node)}: {reason}" if node is not None else f"{self.path}: {reason}")

    def root(self) -> yaml.Node | None:
        try:
            return self.loader.get_single_node()
        except yaml.MarkedYAMLError as exc:
            raise _yaml_error(self.path, exc) from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{self.path}: invalid YAML: {' '.join(str(exc).split())}") from None

    def mapping(self, node: yaml.Node, what: str) -> list[tuple[str, yaml.Node, yaml.Node]]:
        """(key, key node, value node) of a mapping, merges resolved, duplicate keys refused."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping, got {_node_kind(node)}")
        seen: dict[str, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.scalar(key_node)
            if not isinstance(key, str):
                raise self.error(key_node, f"keys of {what} must be strings, got {key!r}")
            if key in seen:
                raise self.error(key_node, f"duplicate key {key!r} in {what} (first on line {seen[key]})")
            seen[key] = line_of(key_node)
        try:
            # Resolves ``<<: *anchor`` merges: merged pairs first, so the mapping's own keys win below.
            self.loader.flatten_mapping(node)
        except yaml.MarkedYAMLError as exc:
            raise _yaml_error(self.path, exc) from None
        pairs: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            key = self.scalar(key_node)
            if not isinstance(key, str):
                raise self.error(key_node, f"keys of {what} must be strings, got {key!r}")
            pairs[key] = (key_node, value_node)
        return [(key, key_node, value_node) for key, (key_node, value_node) in pairs.items()]

    def scalar(self, node: yaml.Node) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.error(node, f"expected a single value, got {_node_kind(node)}")
        if node.tag.endswith(":timestamp"):
            return node.value  # a date is text to an MCP server, not a Python datetime
        try:
            value = self.loader.construct_object(node, deep=True)
        except yaml.MarkedYAMLError as exc:
            raise _yaml_error(self.path, exc) from None
        if isinstance(value, bytes):
            raise self.error(node, "binary (!!binary) values are not supported")
        return value

    def value(self, node: yaml.Node, depth: int = 0) -> Any:
        """Plain Python data for a node, with ``${VAR}`` interpolated in every string value."""
        if depth > 100:
            raise self.error(node, "nesting too deep (a recursive alias?)")
        if isinstance(node, yaml.ScalarNode):
            value = self.scalar(node)
            return self.interpolate(value, node) if isinstance(value, str) else value
        if isinstance(node, yaml.SequenceNode):
            return [self.value(item, depth + 1) for item in node.value]
        return {key: self.value(child, depth + 1) for key, _, child in self.mapping(node, "this mapping")}

    def string(self, node: yaml.Node, what: str) -> str:
        value = self.value(node)
        if not isinstance(value, str) or not value:
            raise self.error(node, f"{what} must be a non-empty string, got {_describe(value)}")
        return value

    def strings(self, node: yaml.Node, what: str) -> tuple[str, ...]:
        if isinstance(node, yaml.ScalarNode) and self.scalar(node) is None:
            return ()
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"{what} must be a list of strings, got {_node_kind(node)}")
        return tuple(self.string(item, f"each entry of {what}") for item in node.value)

    def optional_mapping(self, node: yaml.Node, what: str) -> dict[str, Any]:
        value = self.value(node)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(node, f"{what} must be a mapping, got {_describe(value)}")
        return value

    def interpolate(self, text: str, node: yaml.Node) -> str:
        def expand(match: re.Match[str]) -> str:
            if match.group(0) == "$${":
                return "${"
            inner = match.group(1)
            ref = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*))?", inner, flags=re.DOTALL)
            if ref is None:
                raise self.error(
                    node, f"invalid variable reference ${{{inner}}} (expected ${{NAME}} or ${{NAME:-default}})"
                )
            name, op, default = ref.group(1), ref.group(2), ref.group(3)
            value = self.environ.get(name)
            if op == ":-" and not value:
                return default
            if op == "-" and value is None:
                return default
            if value is None:
                raise self.error(
                    node, f"environment variable {name} is not set (write ${{{name}:-default}} for a fallback)"
                )
            return value

        return re.sub(r"\$\$\{|\$\{([^}]*)\}", expand, text)


def line_of(node: yaml.Node | None) -> int:
    """The 1-based line a node starts on."""
    return node.start_mark.line + 1 if node is not None else 0


def _node_kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"{node.value!r}" if node.value else "nothing"


def _describe(value: Any) -> str:
    if value is None or value == "":
        return "nothing"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return repr(value)


def _yaml_error(path: str, exc: yaml.MarkedYAMLError) -> ConfigError:
    mark = exc.problem_mark or exc.context_mark
    line = f":{mark.line + 1}" if mark is not None else ""
    reason = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
    return ConfigError(f"{path}{line}: invalid YAML: {reason}")


def load_scenarios(path: str | os.PathLike[str], *, environ: Mapping[str, str] | None = None) -> Scenarios:
    """Read and check a ``scenarios.yml``. ``environ`` (default ``os.environ``) feeds ``${VAR}``.

    Raises ConfigError naming ``file:line`` for anything wrong with it.
    """
    spath = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{spath}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{spath}: is a directory, not a scenarios file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{spath}: not UTF-8 text ({exc.reason})") from None
    doc = _Doc(spath, text, os.environ if environ is None else environ)
    try:
        return _parse(doc, Path(spath).resolve().parent)
    finally:
        doc.loader.dispose()


_TOP_KEYS = (
    "schema_version",
    "target",
    "protocol",
    "timeout",
    "startup_timeout",
    "client_capabilities",
    "redact",
    "scenarios",
)


def _parse(doc: _Doc, base: Path) -> Scenarios:
    root = doc.root()
    if root is None:
        raise ConfigError(f"{doc.path}: empty file: expected schema_version, target and scenarios")
    fields = {key: (key_node, value) for key, key_node, value in doc.mapping(root, "the file")}
    for key, (key_node, _) in fields.items():
        if key not in _TOP_KEYS:
            raise doc.error(key_node, f"unknown key {key!r} (expected one of {', '.join(_TOP_KEYS)})")
    for required in ("target", "scenarios"):
        if required not in fields:
            raise doc.error(root, f"missing {required!r}")
    version = SCHEMA_VERSION
    if "schema_version" in fields:
        node = fields["schema_version"][1]
        version = str(doc.value(node))
        if version.split(".")[0] != SCHEMA_VERSION.split(".")[0]:
            raise doc.error(node, f"unknown schema_version {version!r} (this reads {SCHEMA_VERSION!r})")
    protocol = HANDSHAKE_VERSION
    if "protocol" in fields:
        protocol = _protocol(doc, fields["protocol"][1])
    timeout = _seconds(doc, fields["timeout"][1], "timeout") if "timeout" in fields else DEFAULT_TIMEOUT
    startup = STARTUP_TIMEOUT
    if "startup_timeout" in fields:
        startup = _seconds(doc, fields["startup_timeout"][1], "startup_timeout")
    capabilities: dict[str, Any] = {}
    if "client_capabilities" in fields:
        capabilities = doc.optional_mapping(fields["client_capabilities"][1], "client_capabilities")
    redact = _redaction(doc, fields["redact"][1]) if "redact" in fields else Redaction()
    target = replace(_target(doc, fields["target"][1], base), startup_timeout=startup)
    scenarios = _scenarios(doc, fields["scenarios"][1], protocol)
    return Scenarios(
        path=doc.path,
        target=target,
        target_line=line_of(fields["target"][1]),
        scenarios=scenarios,
        redact=redact,
        timeout=timeout,
        startup_timeout=startup,
        client_capabilities=capabilities,
        schema_version=version,
    )


def _seconds(doc: _Doc, node: yaml.Node, what: str) -> float:
    raw = doc.value(node)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw <= 3600:
        raise doc.error(node, f"{what} must be a number of seconds between 0 and 3600, got {_describe(raw)}")
    return float(raw)


def _protocol(doc: _Doc, node: yaml.Node) -> str:
    value = doc.value(node)
    if value == "handshake":
        return HANDSHAKE_VERSION
    if value == "stateless":
        return STATELESS_VERSION
    if isinstance(value, str) and _VERSION_RE.match(value):
        return value
    raise doc.error(
        node, f"protocol must be handshake, stateless or a version like {HANDSHAKE_VERSION!r}, got {_describe(value)}"
    )


def _redaction(doc: _Doc, node: yaml.Node) -> Redaction:
    if isinstance(node, yaml.ScalarNode) and doc.scalar(node) is None:
        return Redaction()
    out = Redaction()
    for key, key_node, value in doc.mapping(node, "redact"):
        if key in ("server_url", "defaults"):
            flag = doc.value(value)
            if not isinstance(flag, bool):
                raise doc.error(value, f"redact.{key} must be true or false, got {_describe(flag)}")
            out = replace(out, server_url=flag) if key == "server_url" else replace(out, defaults=flag)
        elif key == "env":
            names = doc.strings(value, "redact.env")
            for item, name in zip(value.value, names, strict=True):
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    raise doc.error(item, f"redact.env: {name!r} is not an environment variable name")
            out = replace(out, env=names)
        elif key == "patterns":
            patterns = doc.strings(value, "redact.patterns")
            for item, pattern in zip(value.value, patterns, strict=True):
                try:
                    re.compile(pattern)
                except re.error as exc:
                    reason = f"redact.patterns: {pattern!r} is not a valid regular expression ({exc})"
                    raise doc.error(item, reason) from None
            out = replace(out, patterns=patterns)
        elif key == "keys":
            out = replace(out, keys=doc.strings(value, "redact.keys"))
        else:
            raise doc.error(key_node, f"unknown key redact.{key} (expected server_url, env, patterns, keys, defaults)")
    return out


def _target(doc: _Doc, node: yaml.Node, base: Path) -> Target:
    if isinstance(node, yaml.ScalarNode):
        text = doc.string(node, "target")
        if text.startswith(("http://", "https://")):
            return Target(url=text)
        return Target(command=_split(doc, node, text), cwd=str(base))
    allowed = ("command", "args", "env", "cwd", "url", "headers", "isolate", "setup")
    fields = {}
    for key, key_node, value in doc.mapping(node, "target"):
        if key not in allowed:
            raise doc.error(key_node, f"unknown key target.{key} (expected {', '.join(allowed)})")
        fields[key] = value
    if "command" not in fields and "url" not in fields:
        raise doc.error(node, "target needs a command (stdio) or a url (HTTP)")
    command: tuple[str, ...] = ()
    if "command" in fields:
        cnode = fields["command"]
        raw = doc.value(cnode)
        if isinstance(raw, list):
            command = tuple(str(part) for part in raw)
            if not command:
                raise doc.error(cnode, "target.command must not be empty")
        elif isinstance(raw, str) and raw.strip():
            command = (raw,) if "args" in fields else _split(doc, cnode, raw)
        else:
            raise doc.error(cnode, f"target.command must be a string or a list, got {_describe(raw)}")
    if "args" in fields:
        if not command:
            raise doc.error(fields["args"], "target.args needs target.command")
        args = doc.value(fields["args"])
        if not isinstance(args, list):
            raise doc.error(fields["args"], f"target.args must be a list, got {_describe(args)}")
        command += tuple(str(a) if not isinstance(a, bool) else str(a).lower() for a in args)
    env = _string_map(doc, fields["env"], "target.env") if "env" in fields else {}
    headers = _string_map(doc, fields["headers"], "target.headers") if "headers" in fields else {}
    cwd = str(base)
    if "cwd" in fields:
        cwd = str((base / doc.string(fields["cwd"], "target.cwd")).resolve())
        if not Path(cwd).is_dir():
            raise doc.error(fields["cwd"], f"target.cwd {cwd!r} is not a directory")
    url = None
    if "url" in fields:
        url = doc.string(fields["url"], "target.url")
        if not url.startswith(("http://", "https://")):
            raise doc.error(fields["url"], f"target.url must start with http:// or https://, got {url!r}")
    elif headers:
        raise doc.error(fields["headers"], "target.headers needs target.url")
    isolate = False
    if "isolate" in fields:
        flag = doc.value(fields["isolate"])
        if not isinstance(flag, bool):
            raise doc.error(fields["isolate"], f"target.isolate must be true or false, got {_describe(flag)}")
        isolate = flag
    setup: tuple[str, ...] = ()
    if "setup" in fields:
        snode = fields["setup"]
        raw = doc.value(snode)
        if isinstance(raw, list) and raw:
            setup = tuple(str(part) for part in raw)
        elif isinstance(raw, str) and raw.strip():
            setup = _split(doc, snode, raw)
        else:
            raise doc.error(snode, f"target.setup must be a command string or a list, got {_describe(raw)}")
    return Target(command=command, url=url, env=env, cwd=cwd, headers=headers, isolate=isolate, setup=setup)


def _split(doc: _Doc, node: yaml.Node, text: str) -> tuple[str, ...]:
    try:
        parts = tuple(shlex.split(text))
    except ValueError as exc:
        raise doc.error(node, f"cannot split the command {text!r}: {exc}") from None
    if not parts:
        raise doc.error(node, "the command is empty")
    return parts


def _string_map(doc: _Doc, node: yaml.Node, what: str) -> dict[str, str]:
    value = doc.optional_mapping(node, what)
    out = {}
    for key, item in value.items():
        if isinstance(item, (dict, list)) or item is None:
            raise doc.error(node, f"{what}.{key} must be a single value, got {_describe(item)}")
        out[key] = str(item).lower() if isinstance(item, bool) else str(item)
    return out


def _scenarios(doc: _Doc, node: yaml.Node, protocol: str) -> tuple[Scenario, ...]:
    out = []
    for name, key_node, value in doc.mapping(node, "scenarios"):
        if not _NAME_RE.match(name):
            raise doc.error(
                key_node,
                f"scenario name {name!r} must be letters, digits, '.', '_' or '-' (it names the cassette file)",
            )
        out.append(_scenario(doc, name, key_node, value, protocol))
    if not out:
        raise doc.error(node, "scenarios is empty: define at least one")
    return tuple(out)


def _scenario(doc: _Doc, name: str, key_node: yaml.Node, node: yaml.Node, protocol: str) -> Scenario:
    description = ""
    actions_node: yaml.Node | None = None
    if isinstance(node, yaml.SequenceNode):
        actions_node = node  # a bare list of actions
    else:
        for key, knode, value in doc.mapping(node, f"scenario {name!r}"):
            if key == "description":
                description = str(doc.value(value) or "")
            elif key == "actions":
                actions_node = value
            elif key == "protocol":
                protocol = _protocol(doc, value)
            else:
                raise doc.error(
                    knode, f"unknown key {key!r} in scenario {name!r} (expected description, actions, protocol)"
                )
    if actions_node is None:
        raise doc.error(key_node, f"scenario {name!r} has no actions")
    if not isinstance(actions_node, yaml.SequenceNode) or not actions_node.value:
        raise doc.error(actions_node, f"actions of scenario {name!r} must be a non-empty list")
    actions = tuple(_action(doc, item) for item in actions_node.value)
    return Scenario(
        name=name, actions=actions, protocol_version=protocol, description=description, line=line_of(key_node)
    )


# action -> (method, required fields, optional fields)
_LIST_ACTIONS = {
    "list_tools": "tools/list",
    "list_prompts": "prompts/list",
    "list_resources": "resources/list",
    "list_resource_templates": "resources/templates/list",
    "ping": "ping",
}
_CALL_ACTIONS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "call_tool": ("tools/call", ("name",), ("arguments", "input_responses")),
    "get_prompt": ("prompts/get", ("name",), ("arguments", "input_responses")),
    "read_resource": ("resources/read", ("uri",), ("input_responses",)),
    "request": ("", ("method",), ("params", "input_responses")),
    "notify": ("", ("method",), ("params",)),
}
ACTIONS: tuple[str, ...] = (*_LIST_ACTIONS, *_CALL_ACTIONS)


def _action(doc: _Doc, node: yaml.Node) -> Action:
    line = line_of(node)
    if isinstance(node, yaml.ScalarNode):
        name = doc.scalar(node)
        body: yaml.Node | None = None
    else:
        entries = doc.mapping(node, "an action")
        if len(entries) != 1:
            keys = ", ".join(k for k, _, _ in entries) or "none"
            raise doc.error(node, f"an action is one key, like `call_tool: {{name: add}}`; got keys {keys}")
        name, _, body = entries[0]
    if name not in ACTIONS:
        raise doc.error(node, f"unknown action {name!r} (expected one of {', '.join(ACTIONS)})")
    fields: dict[str, Any] = {}
    if body is not None:
        fields = doc.optional_mapping(body, name)
    where = body if body is not None else node
    if name in _LIST_ACTIONS:
        # Optional params, e.g. a cursor for the next page.
        return Action(kind=name, method=_LIST_ACTIONS[name], params=fields or None, line=line)
    method, required, optional = _CALL_ACTIONS[name]
    for key in fields:
        if key not in required + optional:
            raise doc.error(where, f"{name}: unknown field {key!r} (expected {', '.join(required + optional)})")
    for key in required:
        if not isinstance(fields.get(key), str) or not fields[key]:
            raise doc.error(where, f"{name} needs {key!r} (a non-empty string)")
    responses = fields.pop("input_responses", None)
    if responses is not None and not isinstance(responses, dict):
        raise doc.error(where, f"{name}: input_responses must be a mapping of input request keys to answers")
    if name in ("request", "notify"):
        params = fields.get("params")
        if params is not None and not isinstance(params, dict):
            raise doc.error(where, f"{name}: params must be a mapping, got {_describe(params)}")
        return Action(
            kind=name,
            method=fields["method"],
            params=params,
            line=line,
            notification=name == "notify",
            input_responses=responses,
        )
    if "arguments" in fields and fields["arguments"] is not None and not isinstance(fields["arguments"], dict):
        raise doc.error(where, f"{name}: arguments must be a mapping, got {_describe(fields['arguments'])}")
    params = dict(fields)
    if name == "call_tool":
        params["arguments"] = params.get("arguments") or {}
    elif "arguments" in params and params["arguments"] is None:
        del params["arguments"]
    return Action(kind=name, method=method, params=params, line=line, input_responses=responses)


# --------------------------------------------------------------------------- recording

MakeTransport = Callable[[Target], Transport]


def record_scenarios(
    scenarios: Scenarios,
    output_dir: str | os.PathLike[str],
    *,
    only: Sequence[str] = (),
    make_transport: MakeTransport | None = None,
) -> list[Path]:
    """Record every scenario (or the ``only`` ones) to ``<output_dir>/<name>.jsonl``; the paths written.

    Each scenario gets a fresh server from ``make_transport`` (default: ``open_transport``).
    Files are written only once every selected scenario has been recorded.
    Raises ConfigError for an unknown name, ServerError subclasses when the server fails.
    """
    selected = [scenarios.get(name) for name in dict.fromkeys(only)] if only else list(scenarios.scenarios)
    # Record everything before writing anything: a failure part-way leaves the old cassettes as
    # they were, never a mix of fresh and stale ones.
    recorded = [(s.name, record_scenario(scenarios, s, make_transport=make_transport)) for s in selected]
    out_dir = Path(output_dir)
    written: list[Path] = []
    for name, cassette in recorded:
        path = out_dir / f"{name}.jsonl"
        cassette_mod.save(cassette, path)
        written.append(path)
    return written


def record_scenario(
    scenarios: Scenarios, scenario: Scenario | str, *, make_transport: MakeTransport | None = None
) -> Cassette:
    """Record one scenario against a fresh server and return the (redacted) cassette."""
    if isinstance(scenario, str):
        scenario = scenarios.get(scenario)
    transport = (make_transport or open_transport)(scenarios.target)
    session = _Session(scenarios, scenario, transport)
    try:
        transport.start()
        session.run()
    finally:
        transport.close()
    return session.cassette()


class _Session:
    """One scenario against one live server: opens the session, sends the actions, keeps the traffic."""

    def __init__(self, scenarios: Scenarios, scenario: Scenario, transport: Transport) -> None:
        self.scenarios = scenarios
        self.scenario = scenario
        self.transport = transport
        self.client = ClientSession(
            transport,
            answer=_answer,
            on_server_request=self._keep_server_request,
            on_notification=self._keep_notification,
            answer_errors=True,
        )
        self.stateless = scenario.era == "stateless"
        self.capabilities = dict(scenarios.client_capabilities)
        self.items: list[Interaction] = []
        self.seq = 0
        self.t0 = time.monotonic()
        self.first = True
        self.protocol_version = scenario.protocol_version
        self.recorded_at = utc_now()

    # -- the story of one scenario ------------------------------------------------------------

    def run(self) -> None:
        if self.stateless:
            self._discover()
        else:
            self._initialize()
        for action in self.scenario.actions:
            if action.notification:
                self.notify(action.method, action.params, action=action)
            else:
                self._perform(action)

    def _initialize(self) -> None:
        params = {
            "protocolVersion": self.scenario.protocol_version,
            "capabilities": self.capabilities,
            "clientInfo": CLIENT_INFO,
        }
        response = self.request("initialize", params, action=None)
        if "error" in response:
            raise ServerStartError(f"{self._where(None)}: the server refused initialize: {_error_text(response)}")
        result = response.get("result") or {}
        self.protocol_version = str(result.get("protocolVersion") or self.protocol_version)
        self.notify("notifications/initialized", None, action=None)

    def _discover(self) -> None:
        response = self.request("server/discover", None, action=None)
        if "error" in response:
            raise ServerStartError(
                f"{self._where(None)}: the server does not speak the stateless protocol {STATELESS_VERSION}: "
                f"server/discover answered {_error_text(response)} (use protocol: handshake)"
            )
        result = response.get("result") or {}
        versions = result.get("supportedVersions")
        if isinstance(versions, list) and self.scenario.protocol_version not in versions:
            raise ServerStartError(
                f"{self._where(None)}: the server supports {', '.join(map(str, versions))}, "
                f"not {self.scenario.protocol_version}"
            )

    def _perform(self, action: Action) -> None:
        response = self.request(action.method, action.params, action=action)
        rounds = 0
        # A stateless server that needs the user (elicitation, roots) answers input_required; a
        # real client answers and retries the original request with the answers and the state.
        while self.stateless and is_input_required(response):
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise ServerError(f"{self._where(action)}: still input_required after {MAX_INPUT_ROUNDS} retries")
            result = response["result"]
            params = dict(action.params or {})
            params["inputResponses"] = self._input_responses(action, result.get("inputRequests") or {})
            if "requestState" in result:
                params["requestState"] = result["requestState"]
            response = self.request(action.method, params, action=action)

    def _input_responses(self, action: Action, requests: Any) -> dict[str, Any]:
        given = action.input_responses or {}
        answers: dict[str, Any] = {}
        if not isinstance(requests, dict):
            return answers
        for key, request in requests.items():
            method = request.get("method") if isinstance(request, dict) else None
            if key in given:
                answers[key] = given[key]
            elif method == "roots/list":
                answers[key] = {"roots": []}
            elif method == "elicitation/create":
                answers[key] = {"action": "decline"}
            else:
                raise ConfigError(
                    f"{self._where(action)}: the server asks for {method or 'input'} ({key!r}); "
                    f"give the answer under input_responses: {{{key}: ...}}"
                )
        return answers

    # -- messages -----------------------------------------------------------------------------

    def _stamp(self, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """Stateless requests carry the protocol version and client capabilities in ``_meta``."""
        if not self.stateless:
            return params
        out = dict(params or {})
        meta = dict(out.get("_meta") or {})
        meta.setdefault(META_PROTOCOL_VERSION, self.scenario.protocol_version)
        meta.setdefault(META_CLIENT_CAPABILITIES, self.capabilities)
        meta.setdefault(META_CLIENT_INFO, CLIENT_INFO)
        out["_meta"] = meta
        return out

    def _take_seq(self) -> int:
        self.seq += 1
        return self.seq - 1

    def _now(self) -> float:
        return time.monotonic() - self.t0

    def notify(self, method: str, params: dict[str, Any] | None, *, action: Action | None) -> None:
        message = self.client.message(method, self._stamp(params), request=False)
        seq, ts = self._take_seq(), self._now()
        try:
            self.transport.send(message)
        except ServerError as exc:
            raise _located(exc, self._where(action), message) from None
        self.items.append(Interaction(seq=seq, kind="notification", message=message, ts=ts))

    def request(self, method: str, params: dict[str, Any] | None, *, action: Action | None) -> dict[str, Any]:
        message = self.client.message(method, self._stamp(params))
        seq, ts = self._take_seq(), self._now()
        started = time.monotonic()
        first, self.first = self.first, False
        wait = self.scenarios.startup_timeout if first else self.scenarios.timeout
        try:
            try:
                response = self.client.request(message, wait)
            except ServerError as exc:
                raise _located(exc, self._where(action), message) from None
        except (TransportTimeout, ServerExited) as exc:
            if not first:
                raise
            # No answer to the opening request: the server never really started.
            raise ServerStartError(str(exc), stderr_tail=exc.stderr_tail, exit_status=exc.exit_status) from None
        latency = (time.monotonic() - started) * 1000.0
        facts = getattr(self.transport, "transport_facts", None)
        transport = facts(message["id"]) if callable(facts) else None
        self.items.append(
            Interaction(
                seq=seq,
                kind="request",
                message=message,
                response=response,
                ts=ts,
                latency_ms=round(latency, 3),
                transport=transport or None,
            )
        )
        return response

    def _keep_notification(self, msg: dict[str, Any]) -> None:
        self.items.append(Interaction(seq=self._take_seq(), kind="server-notification", message=msg, ts=self._now()))

    def _keep_server_request(self, msg: dict[str, Any], answer: dict[str, Any]) -> None:
        self.items.append(
            Interaction(seq=self._take_seq(), kind="server-request", message=msg, response=answer, ts=self._now())
        )

    def _where(self, action: Action | None) -> str:
        line = action.line if action is not None else self.scenario.line
        return f"{self.scenarios.path}:{line}: scenario {self.scenario.name!r}"

    # -- the cassette -------------------------------------------------------------------------

    def cassette(self) -> Cassette:
        """The recorded traffic, redacted, with a filled header."""
        scrub = _Scrubber(self.scenarios)
        items = sorted(self.items, key=lambda i: i.seq)
        clean = tuple(replace(i, message=scrub.message(i.message), response=scrub.message(i.response)) for i in items)
        target = self.scenarios.target
        header = CassetteHeader(
            transport=target.transport,
            server=scrub.argv(target.argv()) or None,
            url=header_url(target.url, scrub.text, origin_only=self.scenarios.redact.server_url)
            if target.url
            else None,
            recorded_at=self.recorded_at,
        )
        extra = {"scenario": self.scenario.name}
        if self.scenario.description:
            extra["description"] = scrub.text(self.scenario.description)
        meta = header.meta(
            clean,
            era=self.scenario.era,
            protocol_version=self.protocol_version,
            extra=extra,
            redaction=scrub.rules(),  # last: it counts what the rules above replaced
        )
        return cassette_mod.with_lines(Cassette(meta=meta, interactions=clean))


class _Scrubber:
    """The ``redact`` block applied: the shared Redactor, plus the values of the named env vars.

    The values never reach the header: it lists the variables' names only.
    """

    def __init__(self, scenarios: Scenarios) -> None:
        from mcp_replay_action.redact import PLACEHOLDER, Redactor, is_secret_key

        rules = scenarios.redact
        self.redact = rules
        self.placeholder = PLACEHOLDER
        self.redactor = Redactor(keys=rules.keys, patterns=rules.patterns, defaults=rules.defaults)
        # As ``record --env`` does: a credential handed to the server under a secret-looking name
        # is redacted wherever it shows up, named or not in ``redact.env``.
        self.env_names = list(
            dict.fromkeys([*rules.env, *(name for name in scenarios.target.env if is_secret_key(name))])
        )
        secrets: set[str] = set()
        for name in self.env_names:
            value = scenarios.target.env.get(name) or os.environ.get(name)
            if value and len(value) >= MIN_SECRET_LENGTH:
                secrets.add(value)
        # Longest first, so a value that contains another is replaced whole.
        self.secrets = sorted(secrets, key=len, reverse=True)
        self.env_hits = 0

    def rules(self) -> dict[str, Any]:
        out = dict(self.redactor.rules())
        out["env"] = list(self.env_names)
        out["server_url"] = self.redact.server_url
        if self.env_hits:
            out["hits"] = dict(sorted({**(out.get("hits") or {}), "env": self.env_hits}.items()))
        return out

    def text(self, text: str) -> str:
        for value in self.secrets:
            if value in text:
                self.env_hits += text.count(value)
                text = text.replace(value, self.placeholder)
        return text

    def _values(self, obj: Any) -> Any:
        if not self.secrets:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {k: self._values(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._values(v) for v in obj]
        return obj

    def message(self, obj: dict[str, Any] | None) -> Any:
        if obj is None:
            return None
        return self._values(self.redactor.apply(obj))

    def argv(self, argv: Sequence[str]) -> list[str]:
        return [self.text(arg) for arg in self.redactor.apply_argv(list(argv))]


def _error_text(response: dict[str, Any]) -> str:
    error = response.get("error")
    if not isinstance(error, dict):
        return "an error"
    return f"{error.get('code')} {' '.join(str(error.get('message', '')).split())[:200]}".strip()


def _answer(msg: dict[str, Any]) -> dict[str, Any]:
    """What the recording client answers a server request: no roots, pong, and a refusal for the
    rest (a scenario cannot know what a person would have said)."""
    method = msg.get("method")
    if method == "roots/list":
        return result_answer(msg, {"roots": []})
    if method == "ping":
        return result_answer(msg, {})
    return error_answer(msg, f"mcp-replay scenarios: the recording client does not do {method}")


def _located(exc: ServerError, where: str, message: dict[str, Any]) -> ServerError:
    """The same failure, told with the scenario file's line and the request that met it."""
    label = str(message.get("method") or "a response")
    params = message.get("params")
    if isinstance(params, dict) and isinstance(params.get("name"), str):
        label += f" {params['name']}"
    text = f"{where}: {label}: {exc}"
    tail, status = exc.stderr_tail, exc.exit_status
    if isinstance(exc, TransportTimeout):
        return TransportTimeout(text, stderr_tail=tail, exit_status=status)
    if isinstance(exc, ServerStartError):
        return ServerStartError(text, stderr_tail=tail, exit_status=status)
    if isinstance(exc, ServerExited):
        return ServerExited(text, stderr_tail=tail, exit_status=status)
    return ServerError(text, stderr_tail=tail, exit_status=status)
