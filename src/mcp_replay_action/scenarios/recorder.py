"""Recording a loaded ``scenarios.yml``: each scenario against a fresh server (``open_transport``),
driven through the one client session (``ClientSession``), redacted, with the one header builder.

Each scenario's cassette is on disk as its interactions complete, redacted first: written to
``<name>.jsonl.partial`` beside its place (``cassette/journal.py``), and every one moved into place
only once all are recorded, so a failure part-way leaves the old cassettes as they were (never a mix
of fresh and stale ones), a failure's partial files are removed, and a recording stopped by a
signal or killed keeps what it recorded in the ``.partial`` files (``inspect`` and ``replay`` read
them), named when it can be."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from mcp_replay_action import __version__
from mcp_replay_action import cassette as cassette_mod
from mcp_replay_action.cassette.header import CassetteHeader, header_url, utc_now
from mcp_replay_action.cassette.journal import Journal
from mcp_replay_action.errors import (
    ConfigError,
    Interrupted,
    MessageTooDeep,
    ServerError,
    ServerExited,
    ServerStartError,
    TransportTimeout,
)
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.redact_argv import redact_argv
from mcp_replay_action.scenarios.loader import did_you_mean
from mcp_replay_action.scenarios.model import Action, Scenario, Scenarios
from mcp_replay_action.scenarios.refs import Failed, RefError, fill, has_refs
from mcp_replay_action.transport import Target, Transport, open_transport
from mcp_replay_action.transport.session import ClientSession, error_answer, result_answer
from mcp_replay_action.values.depth import depth_of, too_deep
from mcp_replay_action.wire.protocol import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    STATELESS_VERSION,
    is_input_required,
)

CLIENT_INFO = {"name": "mcp-replay", "version": __version__}
MAX_INPUT_ROUNDS = 8  # multi round-trip retries of one action before we call it a loop
MIN_SECRET_LENGTH = 4  # shorter env values would scrub ordinary words and digits everywhere
MAX_TOOL_PAGES = 50  # tools/list pages read to check the tools a scenario calls


MakeTransport = Callable[[Target], Transport]
PARTIAL = ".partial"  # a scenario's cassette while it is recorded: <name>.jsonl.partial


def record_scenarios(
    scenarios: Scenarios,
    output_dir: str | os.PathLike[str],
    *,
    only: Sequence[str] = (),
    make_transport: MakeTransport | None = None,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
    on_recorded: Callable[[Scenario, Cassette], None] | None = None,
) -> list[Path]:
    """Record every scenario (or the ``only`` ones) to ``<output_dir>/<name>.jsonl``; the paths written.

    Each scenario gets a fresh server from ``make_transport`` (default: ``open_transport``);
    ``on_recorded`` hears of each as it is done (``record-scenarios`` prints it as it goes).
    Each is written to ``<name>.jsonl.partial`` as it is recorded, and all are moved into place
    once every selected scenario has been (the module's docstring). ``warn`` and ``strict``: as
    ``record_scenario``.
    Raises ConfigError for an unknown name, ServerError subclasses when the server fails, and
    Interrupted (the partial files named) when a KeyboardInterrupt or Interrupted stops it.
    """
    selected = [scenarios.get(name) for name in dict.fromkeys(only)] if only else list(scenarios.scenarios)
    out_dir = Path(output_dir)
    made = [d for d in (out_dir, *out_dir.parents) if not d.exists()]  # what a failure takes back
    partials: list[Path] = []
    try:
        for scenario in selected:
            partials.append(out_dir / f"{scenario.name}.jsonl{PARTIAL}")
            cassette = record_scenario(
                scenarios, scenario, make_transport=make_transport, strict=strict, warn=warn, write_to=partials[-1]
            )
            if on_recorded is not None:
                on_recorded(scenario, cassette)
    except (KeyboardInterrupt, Interrupted) as exc:
        kept = [str(p) for p in partials if p.exists()]
        why = str(exc) or "interrupted"
        where = f"; what was recorded is in {', '.join(kept)}" if kept else ""
        raise Interrupted(f"{why}: no cassette replaced{where}") from None
    except BaseException:
        for partial in partials:
            partial.unlink(missing_ok=True)
        for directory in made:  # deepest first
            try:
                directory.rmdir()
            except OSError:
                break  # not empty, or not ours to remove
        raise
    written: list[Path] = []
    for partial in partials:
        path = partial.with_name(partial.name.removesuffix(PARTIAL))
        if partial.exists():
            os.replace(partial, path)
            written.append(path)
    return written


def record_scenario(
    scenarios: Scenarios,
    scenario: Scenario | str,
    *,
    make_transport: MakeTransport | None = None,
    strict: bool = False,
    warn: Callable[[str], None] | None = None,
    write_to: Path | None = None,
) -> Cassette:
    """Record one scenario against a fresh server and return the (redacted) cassette; with
    ``write_to``, that file holds it as it is recorded, each interaction redacted and written as
    it completes (the header made anew at the end).

    A ``call_tool`` of a tool the server does not list is told to ``warn`` (a ``file:line`` line),
    or raised as a ConfigError with ``strict``.
    """
    if isinstance(scenario, str):
        scenario = scenarios.get(scenario)
    transport = (make_transport or open_transport)(scenarios.target)
    session = _Session(scenarios, scenario, transport, Journal(write_to) if write_to is not None else None)
    scrub = _Scrubber(scenarios)  # for words outside the cassette: its hits are not the header's
    try:
        try:
            transport.start()
            session.run()
            problems = session.unlisted_tools()
        except ServerError as exc:
            # The server's own words (its error text, its stderr) pass the scenario's redaction,
            # as its traffic does, before the CLI prints them.
            raise exc.redacted(scrub.words) from None
        finally:
            transport.close()
        problems = [scrub.words(problem) for problem in problems]
        if problems and strict:
            raise ConfigError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
        for problem in problems:
            if warn is not None:
                warn(problem)
        return session.finish()
    finally:
        session.close()


class _Session:
    """One scenario against one live server: opens the session, sends the actions, keeps the traffic."""

    def __init__(
        self, scenarios: Scenarios, scenario: Scenario, transport: Transport, journal: Journal | None = None
    ) -> None:
        self.scenarios = scenarios
        self.scenario = scenario
        self.transport = transport
        self.client = ClientSession(
            transport,
            answer=recording_answer,
            on_server_request=self._keep_server_request,
            on_notification=self._keep_notification,
            answer_errors=True,
        )
        self.stateless = scenario.era == "stateless"
        self.capabilities = dict(scenarios.client_capabilities)
        self.scrub = _Scrubber(scenarios)  # one for the cassette: each value's hits count once
        target = scenarios.target
        # What the header shows of the target and the scenario, scrubbed (and counted) once.
        self.header = CassetteHeader(
            transport=target.transport,
            server=self.scrub.argv(target.argv()) or None,
            url=header_url(target.url, self.scrub.text, origin_only=scenarios.redact.server_url)
            if target.url
            else None,
            recorded_at=utc_now(),
        )
        self.extra: JSONObject = {"scenario": scenario.name}
        if scenario.description:
            self.extra["description"] = self.scrub.text(scenario.description)
        self.journal = journal
        self.clean: list[Interaction] = []  # redacted, in seq order: what the cassette holds
        self.waiting: dict[int, Interaction] = {}  # kept, behind an earlier seq still in flight
        self.seq = 0
        self.t0 = time.monotonic()
        self.first = True
        self.protocol_version = scenario.protocol_version
        self.answers: JSONObject = {}  # ``save: name`` -> that step's result (refs.Failed for an error)
        self.tools_called: list[tuple[Action, str]] = []  # each call_tool as sent: its step and tool name
        self.tools_seen: set[str] = set()  # names in the scenario's own tools/list answers
        self.tools_complete = False  # one of those answers was a last page (no nextCursor)

    # -- the story of one scenario ------------------------------------------------------------

    def run(self) -> None:
        if self.stateless:
            self._discover()
        else:
            self._initialize()
        for action in self.scenario.actions:
            params = self._filled(action)
            if action.notification:
                self.notify(action.method, params, action=action)
            else:
                self._perform(action, params)

    def _filled(self, action: Action) -> JSONObject | None:
        """The step's params with ``${saved...}`` references filled in from earlier answers."""
        if not has_refs(action.params):
            return action.params
        try:
            return fill(action.params, self.answers)
        except RefError as exc:
            raise ConfigError(f"{self._where(action)}: {exc}") from None

    def _initialize(self) -> None:
        params = {
            "protocolVersion": self.scenario.protocol_version,
            "capabilities": self.capabilities,
            "clientInfo": CLIENT_INFO,
        }
        response = self.request("initialize", params, action=None)
        if "error" in response:
            raise ServerStartError(f"{self._where(None)}: the server refused initialize: {_error_text(response)}")
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

    def _perform(self, action: Action, params: JSONObject | None) -> None:
        response = self.request(action.method, params, action=action)
        rounds = 0
        # A stateless server that needs the user (elicitation, roots) answers input_required; a
        # real client answers and retries the original request with the answers and the state.
        while self.stateless and is_input_required(response):
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise ServerError(f"{self._where(action)}: still input_required after {MAX_INPUT_ROUNDS} retries")
            result = response["result"]
            retry = dict(params or {})
            retry["inputResponses"] = self._input_responses(action, result.get("inputRequests") or {})
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
            response = self.request(action.method, retry, action=action)
        self._note(action, params, response)

    def _note(self, action: Action, params: JSONObject | None, response: JSONObject) -> None:
        """Keep what later steps and the tool check need from one answered step."""
        if action.save:
            self.answers[action.save] = response["result"] if "result" in response else Failed(response.get("error"))
        if action.method == "tools/call" and isinstance((params or {}).get("name"), str):
            self.tools_called.append((action, str((params or {})["name"])))
        if action.method == "tools/list" and isinstance(response.get("result"), dict):
            self._seen_tools(response["result"])

    def _seen_tools(self, result: JSONObject) -> None:
        tools = result.get("tools")
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                self.tools_seen.add(tool["name"])
        if not result.get("nextCursor"):
            self.tools_complete = True

    def unlisted_tools(self) -> list[str]:
        """One ``file:line`` line for each ``call_tool`` of a tool the server does not list.

        The scenario's own complete ``tools/list`` answer says what is listed; without one, the
        tools are listed once more after the last step, outside the recording (so the cassette
        holds exactly the scenario's traffic, and no step saw a server that had been asked more).
        """
        if not self.tools_called:
            return []
        if not self.tools_complete:
            why = self._list_tools_unrecorded()
            if why:
                return [f"{self._where(self.tools_called[0][0])}: cannot check the tools it calls: {why}"]
        known = sorted(self.tools_seen)
        out = []
        for action, name in self.tools_called:
            if name in self.tools_seen:
                continue
            listed = "the server lists no tools" if not known else "the server lists no tool of that name"
            out.append(f"{self._where(action)}: call_tool {name!r}: {listed}{did_you_mean(name, known)}")
        return out

    def _list_tools_unrecorded(self) -> str:
        """List every page of tools without recording it; why not, when it could not."""
        cursor: JSON = None
        for _ in range(MAX_TOOL_PAGES):
            message = self.client.message("tools/list", self._stamp({"cursor": cursor} if cursor else None))
            try:
                response = self.client.request(message, self.scenarios.timeout)
            except ServerError as exc:
                return exc.one_line()
            if "error" in response or not isinstance(response.get("result"), dict):
                return f"tools/list answered {_error_text(response)}"
            self._seen_tools(response["result"])
            cursor = response["result"].get("nextCursor")
            if not cursor:
                return ""
        return f"tools/list still had more after {MAX_TOOL_PAGES} pages"

    def _input_responses(self, action: Action, requests: JSON) -> JSONObject:
        given = action.input_responses or {}
        answers: JSONObject = {}
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

    def _stamp(self, params: JSONObject | None) -> JSONObject | None:
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

    def notify(self, method: str, params: JSONObject | None, *, action: Action | None) -> None:
        message = self.client.message(method, self._stamp(params), request=False)
        seq, ts = self._take_seq(), self._now()
        try:
            self.transport.send(message)
        except ServerError as exc:
            raise _located(exc, self._where(action), message) from None
        self._keep(Interaction(seq=seq, kind="notification", message=message, ts=ts))

    def request(self, method: str, params: JSONObject | None, *, action: Action | None) -> JSONObject:
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
        if method == "initialize" and isinstance(response.get("result"), dict):
            # Before it is kept: the header written with it says the version the server chose.
            self.protocol_version = str(response["result"].get("protocolVersion") or self.protocol_version)
        self._keep(
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

    def _keep_notification(self, msg: JSONObject) -> None:
        self._keep(Interaction(seq=self._take_seq(), kind="server-notification", message=msg, ts=self._now()))

    def _keep_server_request(self, msg: JSONObject, answer: JSONObject) -> None:
        self._keep(
            Interaction(seq=self._take_seq(), kind="server-request", message=msg, response=answer, ts=self._now())
        )

    def _keep(self, item: Interaction) -> None:
        """Keep a complete interaction, redacted; on disk (``journal``) once every earlier seq is:
        a server's notification while a request is in flight waits for that request."""
        self.waiting[item.seq] = item
        ready = []
        while len(self.clean) in self.waiting:
            raw = self.waiting.pop(len(self.clean))
            try:
                clean = replace(raw, message=self.scrub.message(raw.message), response=self.scrub.message(raw.response))
            except RecursionError:
                asked, answered = depth_of(raw.message), depth_of(raw.response)
                depth = max(asked, answered)
                what = too_deep(f"the answer to {raw.label}" if answered > asked else raw.label, depth, to="redact")
                raise MessageTooDeep(f"{what}: not recorded", depth=depth) from None
            self.clean.append(clean)
            ready.append(clean)
        if ready and self.journal is not None:
            if self.journal.started:
                self.journal.append(ready)
            else:
                self.journal.rewrite(self._meta(), new=ready)

    def _where(self, action: Action | None) -> str:
        line = action.line if action is not None else self.scenario.line
        return f"{self.scenarios.path}:{line}: scenario {self.scenario.name!r}"

    # -- the cassette -------------------------------------------------------------------------

    def _meta(self) -> JSONObject:
        """The header of what is kept so far (its redaction hits as counted so far)."""
        return self.header.meta(
            self.clean,
            era=self.scenario.era,
            protocol_version=self.protocol_version,
            extra=self.extra,
            redaction=self.scrub.rules(),
        )

    def finish(self) -> Cassette:
        """The recorded traffic, redacted, with a filled header; the file (``journal``) rewritten
        with that header."""
        meta = self._meta()
        if self.journal is not None and self.journal.started:
            self.journal.rewrite(meta)
        return cassette_mod.with_lines(Cassette(meta=meta, interactions=tuple(self.clean)))

    def close(self) -> None:
        if self.journal is not None:
            self.journal.close()


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

    def rules(self) -> JSONObject:
        out = dict(self.redactor.rules())
        out["env"] = list(self.env_names)
        out["server_url"] = self.redact.server_url
        if self.env_hits:
            out["hits"] = dict(sorted({**(out.get("hits") or {}), "env": self.env_hits}.items()))
        return out

    def words(self, text: str) -> str:
        """Free text (an error message, a stderr tail) through every rule: the redactor's, then
        the named variables' values."""
        return self.text(str(self.redactor.apply(text)))

    def text(self, text: str) -> str:
        for value in self.secrets:
            if value in text:
                self.env_hits += text.count(value)
                text = text.replace(value, self.placeholder)
        return text

    def _values(self, obj: JSON) -> JSON:
        if not self.secrets:
            return obj
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {k: self._values(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self._values(v) for v in obj]
        return obj

    def message(self, obj: JSONObject | None) -> JSON:
        if obj is None:
            return None
        return self._values(self.redactor.apply(obj))

    def argv(self, argv: Sequence[str]) -> list[str]:
        return [self.text(arg) for arg in redact_argv(self.redactor, argv)]


def _error_text(response: JSONObject) -> str:
    error = response.get("error")
    if not isinstance(error, dict):
        return "an error"
    return f"{error.get('code')} {' '.join(str(error.get('message', '')).split())[:200]}".strip()


def recording_answer(msg: JSONObject) -> JSONObject:
    """What a recording client with no person behind it (a scenario, an exploration) answers a
    server request: no roots, pong, and a refusal for the rest (it cannot know what a person
    would have said)."""
    method = msg.get("method")
    if method == "roots/list":
        return result_answer(msg, {"roots": []})
    if method == "ping":
        return result_answer(msg, {})
    return error_answer(msg, f"mcp-replay: the recording client does not do {method}")


def _located(exc: ServerError, where: str, message: JSONObject) -> ServerError:
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
