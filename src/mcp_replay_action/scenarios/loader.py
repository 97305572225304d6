"""Reading a ``scenarios.yml`` into the model (``model.py``); recording it is ``recorder.py``.

::

    schema_version: "1.0"
    target: node dist/index.js          # a command, an http(s):// URL, or a mapping:
    #   {command, args, env, cwd, isolate, setup} or {url, headers, command?, ...}
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
      notes:
        - call_tool: {name: create_note, arguments: {title: a}}
          save: note                    # later steps quote this answer (scenarios/refs.py)
        - call_tool: {name: get_note, arguments: {id: "${note.structuredContent.id}"}}

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

import difflib
import os
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path

import yaml

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.host import inside
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.plan import make_target
from mcp_replay_action.scenarios.model import (
    DEFAULT_TIMEOUT,
    SCHEMA_VERSION,
    STARTUP_TIMEOUT,
    Action,
    Redaction,
    Scenario,
    Scenarios,
)
from mcp_replay_action.scenarios.refs import NAME, Ref, Template, lead_name, parse_ref
from mcp_replay_action.transport import Target, recorder_endpoint
from mcp_replay_action.wire.protocol import HANDSHAKE_VERSION, STATELESS_VERSION

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# What aliases may add to a scenarios file's data by expansion: far more than reusing a target,
# an argument set or an action list needs, far less than memory.
MAX_ALIAS_VALUES = 10_000
# How deep a scenarios file may nest: far deeper than any scenario needs, far from the depth at
# which PyYAML's composer (it recurses per level) runs out of Python's stack.
MAX_NESTING = 100


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a document nested deeper than ``MAX_NESTING`` at the line
    where it gets that deep (the composer recurses per level: 5000 levels were a traceback)."""

    _nesting = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        self._nesting += 1
        try:
            if self._nesting > MAX_NESTING:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_NESTING} levels", mark)
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._nesting -= 1


# --------------------------------------------------------------------------- reading the file


class _Doc:
    """A composed YAML document: walks nodes so every value keeps the line it came from."""

    def __init__(self, path: str, text: str, environ: Mapping[str, str]) -> None:
        self.path = path
        self.environ = environ
        self.loader = _Loader(text)
        self.read: set[int] = set()  # ids of the nodes ``value`` has read
        self.copied = 0  # values read again (through an alias)
        self.copying: yaml.Node | None = None  # the collection whose alias is being read
        # While a scenario's actions are read: the names earlier steps save (``save: note``), so
        # ``${note...}`` is a reference to that answer and not an environment variable.
        self.saved: dict[str, int] | None = None

    def error(self, node: yaml.Node | None, reason: str) -> ConfigError:
        return ConfigError(f"{self.path}:{line_of(node)}: {reason}" if node is not None else f"{self.path}: {reason}")

    def unknown(self, node: yaml.Node, said: str, key: str, allowed: tuple[str, ...]) -> ConfigError:
        """``unknown key 'scenarois' (did you mean 'scenarios'?; expected ...)``: ``said`` names the
        unknown key or action, and the closest known one is suggested when there is one."""
        close = closest(key, allowed)
        hint = f"did you mean {close!r}?; " if close else ""
        return self.error(node, f"{said} ({hint}expected {', '.join(allowed)})")

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

    def scalar(self, node: yaml.Node) -> JSON:
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

    def value(self, node: yaml.Node, depth: int = 0, within: yaml.Node | None = None) -> JSON:
        """Plain Python data for a node, with ``${VAR}`` interpolated in every string value.

        The composed document shares an anchored node among its aliases, but the data read from
        it is a copy at each: nine aliases of nine aliases nine deep (a "billion laughs") are 9^9
        values. A value read again is counted, and the document refused once aliases have added
        ``MAX_ALIAS_VALUES``, naming the line of the collection whose alias started the copy
        (``within``, the node this one is read inside)."""
        if depth > MAX_NESTING:
            raise self.error(node, f"nested deeper than {MAX_NESTING} levels (a recursive alias?)")
        if id(node) in self.read:
            self.copied += 1
            self.copying = self.copying or within
            if self.copied > MAX_ALIAS_VALUES:
                where = f"aliases here expand to more than {MAX_ALIAS_VALUES} values (an alias bomb?)"
                raise self.error(self.copying, where)
        else:
            self.read.add(id(node))
        try:
            if isinstance(node, yaml.ScalarNode):
                value = self.scalar(node)
                return self.interpolate(value, node) if isinstance(value, str) else value
            if isinstance(node, yaml.SequenceNode):
                return [self.value(item, depth + 1, node) for item in node.value]
            return {key: self.value(child, depth + 1, node) for key, _, child in self.mapping(node, "this mapping")}
        finally:
            if self.copying is within:
                self.copying = None

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

    def optional_mapping(self, node: yaml.Node, what: str) -> JSONObject:
        value = self.value(node)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise self.error(node, f"{what} must be a mapping, got {_describe(value)}")
        return value

    def interpolate(self, text: str, node: yaml.Node) -> JSON:
        """``text`` with ``${VAR}`` expanded; with a reference to a saved answer in it, a ``Ref``
        (the whole string) or a ``Template`` (text around references), filled in when recorded."""
        parts: list[str | Ref] = []
        pos = 0
        for match in re.finditer(r"\$\$\{|\$\{([^}]*)\}", text):
            parts.append(text[pos : match.start()])
            pos = match.end()
            if match.group(0) == "$${":
                parts.append("${")
                continue
            inner = match.group(1)
            name = lead_name(inner)
            if self.saved is not None and name in self.saved:
                try:
                    parts.append(parse_ref(inner))
                except ConfigError as exc:
                    raise self.error(node, str(exc)) from None
                continue
            parts.append(self._variable(inner, name, node))
        parts.append(text[pos:])
        refs = [part for part in parts if isinstance(part, Ref)]
        if not refs:
            return "".join(part for part in parts if isinstance(part, str))
        if len(refs) == 1 and not "".join(part for part in parts if isinstance(part, str)):
            return refs[0]
        merged: list[str | Ref] = []
        for part in parts:
            if isinstance(part, str) and merged and isinstance(merged[-1], str):
                merged[-1] += part
            elif part != "":
                merged.append(part)
        return Template(tuple(merged))

    def _variable(self, inner: str, name: str | None, node: yaml.Node) -> str:
        saved = tuple(self.saved or ())
        ref = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)(.*))?", inner, flags=re.DOTALL)
        if ref is None:
            if name is not None:
                # ``${nte.id}``: a path after a name no earlier step saves.
                hint = did_you_mean(name, saved)
                known = f" (saved so far: {', '.join(saved)})" if saved and not hint else ""
                raise self.error(node, f"${{{inner}}}: no earlier step of this scenario saves {name!r}{hint}{known}")
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
            hint = did_you_mean(name, saved)
            raise self.error(
                node,
                f"environment variable {name} is not set{hint or f' (write ${{{name}:-default}} for a fallback)'}",
            )
        return value


def closest(word: str, known: Iterable[str]) -> str | None:
    """The one of ``known`` that ``word`` most likely misspells (difflib's ratio >= 0.6), if any."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean 'scenarios'?)`` for a near miss of ``known``, else ""."""
    close = closest(word, known)
    return f" (did you mean {close!r}?)" if close else ""


def line_of(node: yaml.Node | None) -> int:
    """The 1-based line a node starts on."""
    return node.start_mark.line + 1 if node is not None else 0


def _node_kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"{node.value!r}" if node.value else "nothing"


def _describe(value: JSON) -> str:
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
        text = inside.read_bytes(path).decode("utf-8")  # no link followed in the action's workspace
    except FileNotFoundError:
        raise ConfigError(f"{spath}: no such file") from None
    except IsADirectoryError:
        raise ConfigError(f"{spath}: is a directory, not a scenarios file") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{spath}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ConfigError(f"{spath}: cannot read it ({exc.strerror})") from None
    doc = _Doc(spath, text, os.environ if environ is None else environ)
    try:
        # As mcp-recorder does: a stdio target starts in the current directory, and a relative
        # target.cwd is taken from there (not from the scenarios file's directory).
        return _parse(doc, Path.cwd())
    except RecursionError:
        # Nesting is refused where it is read (``_Loader``, ``_Doc.value``); this is the net for a
        # way through PyYAML not seen yet (merges of merges), never a traceback.
        raise ConfigError(f"{spath}: nested too deeply to read") from None
    finally:
        doc.loader.dispose()


# ``output`` is in mcp-recorder's own demo scenarios file; mcp-recorder ignores it (each cassette
# is named after its scenario) and so does this loader, so that file loads unchanged.
_TOP_KEYS = (
    "output",
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
            raise doc.unknown(key_node, f"unknown key {key!r}", key, _TOP_KEYS)
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
    capabilities: JSONObject = {}
    if "client_capabilities" in fields:
        capabilities = doc.optional_mapping(fields["client_capabilities"][1], "client_capabilities")
    redact = _redaction(doc, fields["redact"][1]) if "redact" in fields else Redaction()
    target = _target(doc, fields["target"][1], base, startup)
    scenarios = _scenarios(doc, fields["scenarios"][1], protocol)
    return Scenarios(
        path=doc.path,
        target=target,
        scenarios=scenarios,
        redact=redact,
        timeout=timeout,
        startup_timeout=startup,
        client_capabilities=capabilities,
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
            raise doc.unknown(
                key_node, f"unknown key redact.{key}", key, ("server_url", "env", "patterns", "keys", "defaults")
            )
    return out


def _target(doc: _Doc, node: yaml.Node, base: Path, startup: float) -> Target:
    """The ``target`` as ``plan.make_target`` builds it (the one builder), every mistake named
    here first with its ``file:line``."""
    if isinstance(node, yaml.ScalarNode):
        text = doc.string(node, "target")
        if text.startswith(("http://", "https://")):
            # mcp-recorder's form, with its meaning: https://host is https://host/mcp
            # (target.url, this format's own, is the endpoint as written).
            return make_target(None, recorder_endpoint(text), startup_timeout=startup)
        return make_target(_split(doc, node, text), None, cwd=str(base), startup_timeout=startup)
    allowed = ("command", "args", "env", "cwd", "url", "headers", "isolate", "setup")
    fields = {}
    for key, key_node, value in doc.mapping(node, "target"):
        if key not in allowed:
            raise doc.unknown(key_node, f"unknown key target.{key}", key, allowed)
        fields[key] = value
    if "command" not in fields and "url" not in fields:
        raise doc.error(node, "target needs a command (stdio) or a url (HTTP)")
    command: tuple[str, ...] = ()
    if "command" in fields:
        cnode = fields["command"]
        raw = doc.value(cnode)
        if isinstance(raw, list):
            command = tuple(str(part) for part in raw)
            if not command or not command[0]:
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
        if isinstance(raw, list) and raw and str(raw[0]):
            setup = tuple(str(part) for part in raw)
        elif isinstance(raw, str) and raw.strip():
            setup = _split(doc, snode, raw)
        else:
            raise doc.error(snode, f"target.setup must be a command string or a list, got {_describe(raw)}")
    return make_target(command, url, headers, cwd, env, isolate, startup, setup=setup, command="record-scenarios")


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
                raise doc.unknown(
                    knode, f"unknown key {key!r} in scenario {name!r}", key, ("description", "actions", "protocol")
                )
    if actions_node is None:
        raise doc.error(key_node, f"scenario {name!r} has no actions")
    if not isinstance(actions_node, yaml.SequenceNode) or not actions_node.value:
        raise doc.error(actions_node, f"actions of scenario {name!r} must be a non-empty list")
    doc.saved = {}
    try:
        actions = tuple(_action(doc, item) for item in actions_node.value)
    finally:
        doc.saved = None
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


# Keys a step may carry beside its one action.
STEP_KEYS: tuple[str, ...] = ("save",)


def _action(doc: _Doc, node: yaml.Node) -> Action:
    line = line_of(node)
    save = None
    if isinstance(node, yaml.ScalarNode):
        name = doc.scalar(node)
        name_node: yaml.Node = node
        body: yaml.Node | None = None
    else:
        entries = doc.mapping(node, "an action")
        named = [entry for entry in entries if entry[0] not in STEP_KEYS]
        if len(named) > 1 and sum(key in ACTIONS for key, _, _ in named) == 1:
            # ``call_tool: {...}`` beside ``sav: note``: the odd key out is a step key misspelt.
            key, key_node, _ = next(entry for entry in named if entry[0] not in ACTIONS)
            raise doc.unknown(key_node, f"unknown step key {key!r}", key, STEP_KEYS)
        if len(named) != 1:
            keys = ", ".join(k for k, _, _ in entries) or "none"
            raise doc.error(node, f"an action is one key, like `call_tool: {{name: add}}`; got keys {keys}")
        name, name_node, body = named[0]
        for key, _, value in entries:
            if key == "save":
                save = _save_name(doc, value)
    if name not in ACTIONS:
        raise doc.unknown(name_node, f"unknown action {name!r}", str(name), ACTIONS)
    fields: JSONObject = {}
    if body is not None:
        fields = doc.optional_mapping(body, name)
    where = body if body is not None else node
    if save is not None:
        if name == "notify":
            raise doc.error(node, "notify: a notification has no answer to save")
        assert doc.saved is not None
        doc.saved[save] = line  # after the step's own values: a step cannot quote its own answer
    if name in _LIST_ACTIONS:
        # Optional params, e.g. a cursor for the next page.
        return Action(kind=name, method=_LIST_ACTIONS[name], params=fields or None, line=line, save=save)
    method, required, optional = _CALL_ACTIONS[name]
    for key in fields:
        if key not in required + optional:
            raise doc.unknown(_key_node(body, key) or where, f"{name}: unknown field {key!r}", key, required + optional)
    for key in required:
        given = fields.get(key)
        quoted = isinstance(given, (Ref, Template)) and key != "method"  # a name or uri from an answer
        if not quoted and (not isinstance(given, str) or not given):
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
            save=save,
        )
    if "arguments" in fields and fields["arguments"] is not None and not isinstance(fields["arguments"], dict):
        raise doc.error(where, f"{name}: arguments must be a mapping, got {_describe(fields['arguments'])}")
    params = dict(fields)
    if name == "call_tool":
        params["arguments"] = params.get("arguments") or {}
    elif "arguments" in params and params["arguments"] is None:
        del params["arguments"]
    return Action(kind=name, method=method, params=params, line=line, input_responses=responses, save=save)


def _save_name(doc: _Doc, node: yaml.Node) -> str:
    name = doc.scalar(node)
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise doc.error(node, f"save: {name!r} must be a name (letters, digits, _; not starting with a digit)")
    return name


def _key_node(body: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(body, yaml.MappingNode):
        for key_node, _ in body.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == key:
                return key_node
    return None
