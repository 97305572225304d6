"""``mcp-replay explore``: a cassette made without a client, by exploring the server (docs/baseline.md).

The story of one exploration, the same requests every time for one build:

1. open the session in the server's era: ``initialize`` (and ``notifications/initialized``); a
   server that refuses it is started afresh and asked ``server/discover`` (the stateless era);
2. every list the server's capabilities announce (tools, prompts, resources, resource
   templates), each followed through ``nextCursor``;
3. tools, by name: each marked ``readOnlyHint: true`` (and not destructive) called once, plus the
   ones named with ``--call``, or every one with ``--allow-writes``, with arguments made from the
   ``inputSchema`` (``arguments.py``); a tool that is not called is named with the reason;
4. prompts, by name: each got with its required arguments (empty strings);
5. resources, by URI: each read; a resource template only when ``--read`` names a URI.

Everything passes the recording tape (``record/tape.py``: paired by id, redacted on arrival) and
is saved by the one cassette writer with the one header builder, so an explored cassette is an
ordinary one; its header's ``explored`` says so, with the options, so a refresh explores again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial

from mcp_replay_action.cassette import with_lines
from mcp_replay_action.cassette.header import CassetteHeader, header_url
from mcp_replay_action.errors import ConfigError, ServerError, ServerExited, ServerStartError, TransportTimeout
from mcp_replay_action.explore.arguments import Unsatisfiable, arguments_for
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette
from mcp_replay_action.record.tape import Tape
from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_argv import redact_argv
from mcp_replay_action.scenarios.recorder import CLIENT_INFO, recording_answer
from mcp_replay_action.transport import Target, Transport, open_transport
from mcp_replay_action.transport.session import ClientSession
from mcp_replay_action.wire.protocol import (
    HANDSHAKE_VERSION,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
)

MAX_PAGES = 100  # pages of one list followed before we stop (a server that never stops paging)
ERAS = ("auto", "handshake", "stateless")
# (capability, list method, the answer's key, what a listed item is called by)
LISTS = (
    ("tools", "tools/list", "tools", "name"),
    ("prompts", "prompts/list", "prompts", "name"),
    ("resources", "resources/list", "resources", "uri"),
    ("resources", "resources/templates/list", "resourceTemplates", "uriTemplate"),
)


@dataclass(frozen=True)
class ExploreOptions:
    """What an exploration may do; stored in the header (``explored.options``), so a refresh
    explores again the same way."""

    calls: tuple[str, ...] = ()  # tools called whatever their annotations (``--call``)
    reads: tuple[str, ...] = ()  # URIs read beside the listed resources (``--read``: templates)
    allow_writes: bool = False  # every tool called, read-only or not
    max_calls: int = 100  # tool calls, prompt gets and reads in all
    timeout: float = 30.0  # seconds per request
    era: str = "auto"

    def __post_init__(self) -> None:
        if self.era not in ERAS:
            raise ConfigError(f"--era must be one of {', '.join(ERAS)}, not {self.era!r}")
        if self.max_calls < 0:
            raise ConfigError(f"--max-calls must be 0 or more, not {self.max_calls}")

    def to_json(self) -> JSONObject:
        return {
            "calls": list(self.calls),
            "reads": list(self.reads),
            "allow_writes": self.allow_writes,
            "max_calls": self.max_calls,
            "timeout": self.timeout,
            "era": self.era,
        }

    @classmethod
    def from_json(cls, obj: JSON) -> ExploreOptions:
        """The options a header stored (``explored.options``); a key left out keeps its default."""
        if not isinstance(obj, dict):
            return cls()
        return cls(
            calls=tuple(str(c) for c in obj.get("calls") or ()),
            reads=tuple(str(r) for r in obj.get("reads") or ()),
            allow_writes=bool(obj.get("allow_writes", False)),
            max_calls=int(obj.get("max_calls", 100)),
            timeout=float(obj.get("timeout", 30.0)),
            era=str(obj.get("era", "auto")),
        )


@dataclass(frozen=True)
class Skipped:
    """Something listed that was not asked for, and why (``tool``, ``prompt`` or ``resource``)."""

    kind: str
    name: str
    why: str

    def to_json(self) -> JSONObject:
        return {"kind": self.kind, "name": self.name, "why": self.why}


@dataclass(frozen=True)
class Explored:
    """An exploration's cassette (redacted, with its header) and what it did."""

    cassette: Cassette
    called: tuple[str, ...]  # tools called, by name, in the order called
    skipped: tuple[Skipped, ...]

    @property
    def line(self) -> str:
        """The line an exploration ends with: how much it holds, how many tools it called."""
        n = len(self.cassette.interactions)
        tools = len(self.called)
        return (
            f"{n} interaction{'s' if n != 1 else ''} explored ({self.cassette.meta.get('era')} era), "
            f"{tools} tool{'s' if tools != 1 else ''} called, {len(self.skipped)} skipped"
        )


def explore(
    target: Target,
    options: ExploreOptions | None = None,
    *,
    redactor: Redactor | None = None,
    make_transport: Callable[[Target], Transport] = open_transport,
) -> Explored:
    """Explore the server ``target`` names (see the module's story) and return the cassette.

    Raises ServerStartError when it cannot be started or refuses both eras' openings, and
    ServerError when it stops answering the exploration (a single call that hangs is skipped).
    """
    options = options or ExploreOptions()
    redactor = redactor or Redactor()
    eras = ("handshake", "stateless") if options.era == "auto" else (options.era,)
    refused = ""
    for era in eras:
        transport = make_transport(target)
        walk = _Walk(transport, options, redactor, target.startup_timeout, era)
        try:
            transport.start()
            if not walk.open():
                refused = walk.refusal
                continue
            walk.explore()
        except ServerError as exc:
            raise exc.redacted(lambda text: str(redactor.apply(text))) from None
        finally:
            transport.close()
        return walk.explored(target)
    raise ServerStartError(str(redactor.apply(f"the server refused to open a session: {refused}")))


@dataclass
class _Walk:
    """One exploration on one started transport: the session, the tape, and what was decided."""

    transport: Transport
    options: ExploreOptions
    redactor: Redactor
    startup_timeout: float
    era: str
    refusal: str = ""
    calls_made: int = 0
    called: list[str] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    listed: dict[str, list[JSONObject]] = field(default_factory=dict)
    protocol_version: str = ""

    def __post_init__(self) -> None:
        self.tape = Tape(self.redactor)
        self.client = ClientSession(
            self.transport,
            answer=recording_answer,
            on_server_request=self._server_request,
            on_notification=self._server_notification,
            answer_errors=True,
        )
        self.first = True
        self.capabilities: JSONObject = {}

    # -- the story --------------------------------------------------------------------------------

    def open(self) -> bool:
        """Open the session in ``era``; False (with ``refusal``) when the server refuses it."""
        if self.era == "stateless":
            answer = self.request("server/discover", None)
        else:
            params = {"protocolVersion": HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": CLIENT_INFO}
            answer = self.request("initialize", params)
        result = answer.get("result")
        if not isinstance(result, dict):
            self.refusal = f"{'server/discover' if self.era == 'stateless' else 'initialize'} answered " + _error(
                answer
            )
            return False
        caps = result.get("capabilities")
        self.capabilities = caps if isinstance(caps, dict) else {}
        self.protocol_version = STATELESS_VERSION if self.era == "stateless" else str(result.get("protocolVersion"))
        if self.era == "handshake":
            self.notify("notifications/initialized")
        return True

    def explore(self) -> None:
        for capability, method, key, by in LISTS:
            if capability in self.capabilities:
                # By name (URI): the order a server lists in is no part of what it does.
                self.listed[key] = sorted(self.list_all(method, key), key=partial(_by, by))
        self.call_tools()
        self.get_prompts()
        self.read_resources()

    def list_all(self, method: str, key: str) -> Iterator[JSONObject]:
        cursor: JSON = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            answer = self.request(method, {"cursor": cursor} if cursor is not None else None)
            result = answer.get("result")
            if not isinstance(result, dict):
                return
            items = result.get(key)
            yield from (item for item in items if isinstance(item, dict)) if isinstance(items, list) else ()
            cursor = result.get("nextCursor")
            if cursor is None or str(cursor) in seen:
                return
            seen.add(str(cursor))

    def call_tools(self) -> None:
        tools = self.listed.get("tools", [])
        names = {str(tool.get("name")) for tool in tools}
        for name in self.options.calls:
            if name not in names:
                self.skip("tool", name, "named with --call, but the server does not list it")
        for tool in tools:
            name = str(tool.get("name"))
            why = self.not_called(name, tool.get("annotations"))
            if why:
                self.skip("tool", name, why)
                continue
            try:
                arguments = arguments_for(tool.get("inputSchema"))
            except Unsatisfiable as exc:
                self.skip("tool", name, str(exc))
                continue
            if self.ask("tool", name, "tools/call", {"name": name, "arguments": arguments}):
                self.called.append(name)

    def not_called(self, name: str, annotations: JSON) -> str:
        """Why the tool ``name`` is not called ("" when it is)."""
        if name in self.options.calls or self.options.allow_writes:
            return ""
        hints = annotations if isinstance(annotations, dict) else {}
        if hints.get("destructiveHint") is True:
            return "marked destructive (name it with --call, or give --allow-writes)"
        if hints.get("readOnlyHint") is not True:
            return "not marked read-only (name it with --call, or give --allow-writes)"
        return ""

    def get_prompts(self) -> None:
        for prompt in self.listed.get("prompts", []):
            name = str(prompt.get("name"))
            declared = prompt.get("arguments")
            arguments = {
                str(arg["name"]): ""
                for arg in (declared if isinstance(declared, list) else [])
                if isinstance(arg, dict) and arg.get("required") is True and "name" in arg
            }
            params: JSONObject = {"name": name, **({"arguments": arguments} if arguments else {})}
            self.ask("prompt", name, "prompts/get", params)

    def read_resources(self) -> None:
        uris = [str(resource.get("uri")) for resource in self.listed.get("resources", [])]
        for uri in dict.fromkeys([*uris, *self.options.reads]):
            self.ask("resource", uri, "resources/read", {"uri": uri})

    # -- messages ---------------------------------------------------------------------------------

    def ask(self, kind: str, name: str, method: str, params: JSONObject) -> bool:
        """One call within ``--max-calls``; a call that hangs is skipped and cancelled. True when
        it was answered (a result or an error)."""
        if self.calls_made >= self.options.max_calls:
            self.skip(kind, name, f"over --max-calls {self.options.max_calls}")
            return False
        self.calls_made += 1
        try:
            self.request(method, params)
        except TransportTimeout:
            self.skip(kind, name, f"no answer within --timeout {self.options.timeout:g} s")
            return False
        except ServerExited as exc:
            raise ServerExited(
                f"{method} {name}: {exc}", stderr_tail=exc.stderr_tail, exit_status=exc.exit_status
            ) from None
        return True

    def skip(self, kind: str, name: str, why: str) -> None:
        self.skipped.append(Skipped(kind, name, why))

    def _stamp(self, params: JSONObject | None) -> JSONObject | None:
        """A stateless-era request carries the version, capabilities and client in ``_meta``."""
        if self.era != "stateless":
            return params
        out = dict(params or {})
        out["_meta"] = {
            META_PROTOCOL_VERSION: STATELESS_VERSION,
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: CLIENT_INFO,
        }
        return out

    def request(self, method: str, params: JSONObject | None) -> JSONObject:
        message = self.client.message(method, self._stamp(params))
        entry = self.tape.from_client(message)
        first, self.first = self.first, False
        try:
            answer = self.client.request(message, self.startup_timeout if first else self.options.timeout)
        except (TransportTimeout, ServerExited) as exc:
            if first:  # no answer to the opening request: the server never really started
                raise ServerStartError(str(exc), stderr_tail=exc.stderr_tail, exit_status=exc.exit_status) from None
            if isinstance(exc, TransportTimeout):
                self.cancel(message)
            raise
        facts = getattr(self.transport, "transport_facts", None)
        self.tape.from_server(answer, request=entry, facts=(facts(message["id"]) or None) if callable(facts) else None)
        return answer

    def cancel(self, message: JSONObject) -> None:
        """Tell the server we gave up on ``message`` (off the tape: the request is not kept)."""
        try:
            self.transport.send(
                self.client.message(
                    "notifications/cancelled", {"requestId": message["id"], "reason": "timeout"}, request=False
                )
            )
        except ServerError:
            pass  # the next request reports a server that is gone

    def notify(self, method: str) -> None:
        message = self.client.message(method, self._stamp(None), request=False)
        self.tape.from_client(message)
        self.transport.send(message)

    def _server_notification(self, message: JSONObject) -> None:
        self.tape.from_server(message)

    def _server_request(self, request: JSONObject, answer: JSONObject) -> None:
        self.tape.from_server(request)
        self.tape.from_client(answer)

    # -- the cassette -----------------------------------------------------------------------------

    def explored(self, target: Target) -> Explored:
        interactions = self.tape.interactions()
        header = CassetteHeader(
            transport=target.transport,
            server=redact_argv(self.redactor, target.argv()) or None,
            url=header_url(target.url, self.redactor.apply) if target.url else None,
        )
        clean = self.redactor.apply
        summary: JSONObject = {
            "options": self.options.to_json(),
            "called": [clean(name) for name in self.called],
            "skipped": [clean(s.to_json()) for s in self.skipped],
        }
        meta = header.meta(
            interactions,
            era=self.era,
            protocol_version=self.protocol_version or None,
            extra={"unanswered": self.tape.unanswered, "explored": summary},
            redaction=self.redactor.rules(),  # last: it counts what the rules above replaced
        )
        cassette = with_lines(Cassette(meta=meta, interactions=tuple(interactions)))
        # What the caller prints is server text too (tool names, URIs): redacted like the cassette.
        skipped = tuple(Skipped(s.kind, str(clean(s.name)), str(clean(s.why))) for s in self.skipped)
        return Explored(cassette=cassette, called=tuple(str(clean(name)) for name in self.called), skipped=skipped)


def _by(key: str, item: JSONObject) -> str:
    return str(item.get(key))


def _error(answer: JSONObject) -> str:
    error = answer.get("error")
    if not isinstance(error, dict):
        return "no result"
    return f"{error.get('code')} {' '.join(str(error.get('message', '')).split())[:200]}".strip()


def skipped_lines(skipped: Sequence[Skipped]) -> list[str]:
    """One line per thing not asked for: ``tool delete_file: marked destructive (...)``."""
    return [f"{s.kind} {s.name}: {s.why}" for s in skipped]
