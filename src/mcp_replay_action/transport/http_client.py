"""Streamable HTTP client transport, plus the legacy HTTP+SSE transport of protocol 2024-11-05.

Streamable HTTP: every client message is its own POST with ``Accept: application/json,
text/event-stream``. The answer to a request is either one JSON body or an SSE stream that may carry
server notifications and server-to-client requests before the response. Each request POST is read
by its own background thread, so ``receive`` hands out messages in arrival order while the replay
engine is free to POST answers to server-to-client requests as they come. ``Mcp-Session-Id`` is
kept and sent back, ``MCP-Protocol-Version`` is sent once ``initialize`` negotiated it (or, in the
stateless 2026-07-28 era, taken from each request's ``_meta`` together with ``Mcp-Method`` and
``Mcp-Name``), and the session is DELETEd at close.

Legacy HTTP+SSE: one long GET stream announces, in an ``endpoint`` event, where to POST; every
server message then arrives on that GET stream.

Every wait is bounded, and every fault becomes a typed error from ``errors.py`` raised by
``receive``: connection refused and broken or truncated streams are ``ServerExited`` (an
``HttpStatusError`` for an HTTP error status without a JSON-RPC answer), silence is
``TransportTimeout``. Values of ``--header`` options are never printed, logged or stored.
"""

from __future__ import annotations

import collections
import json
import queue
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx
from httpx_sse import EventSource, ServerSentEvent

from mcp_replay_action.errors import (
    ConfigError,
    Diagnostics,
    MessageTooDeep,
    MessageTooLarge,
    ServerExited,
    ServerStartError,
    TransportTimeout,
)
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.transport import MAX_MESSAGE, message_too_large
from mcp_replay_action.values.depth import text_depth, too_deep
from mcp_replay_action.wire.protocol import request_protocol_version

if TYPE_CHECKING:
    from mcp_replay_action.transport.process import ServerProcess, StderrTail
    from mcp_replay_action.values.prepared import Prepared

ACCEPT_BOTH = "application/json, text/event-stream"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
PARAM_HEADER_PREFIX = "Mcp-Param-"
# The methods whose target is mirrored into ``Mcp-Name`` in the stateless era (2026-07-28).
NAME_BEARING_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# How often a stream that broke after an event id is resumed with ``Last-Event-ID`` before giving up.
RESUME_ATTEMPTS = 2
_MAX_RETRY_WAIT = 2.0
_CLOSE_WAIT = 2.0
# How long the handshake waits for the server to answer the GET stream before it posts
# ``notifications/initialized`` (``_open_listen_stream``): a server answers at once; one that
# does not costs this much, once.
LISTEN_READY_SECONDS = 1.0

Mode = Literal["auto", "streamable", "sse"]


class HttpStatusError(ServerExited):
    """The server answered with an HTTP error status and no JSON-RPC answer in the body."""

    def __init__(self, message: str, *, status: int, stderr_tail: str = "", exit_status: int | None = None) -> None:
        self.status = status
        super().__init__(message, stderr_tail=stderr_tail, exit_status=exit_status)


@dataclass(frozen=True)
class HttpFacts:
    """How one answer travelled: recorded in the cassette as optional facts, never compared."""

    http_status: int
    content_type: str
    sse: bool

    def to_json(self) -> JSONObject:
        return {"http_status": self.http_status, "content_type": self.content_type, "sse": self.sse}


def parse_header(text: str) -> tuple[str, str]:
    """Split a ``--header 'Name: value'`` option. The error never repeats the value."""
    name, sep, value = text.partition(":")
    name = name.strip()
    if not sep or not name or any(c.isspace() for c in name):
        # Nothing of the option is echoed: without a colon, all of it may be the secret.
        raise ConfigError("--header: expected 'Name: value' (the option is not shown, it may hold a secret)")
    return name, value.strip()


def display_url(url: str) -> str:
    """The URL without credentials or query string, safe to print (tokens sometimes live there)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def origin_of(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in: what "same origin" compares."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def content_type_of(response: httpx.Response) -> str:
    """The media type of a response, lower-case, without parameters."""
    return response.headers.get("content-type", "").partition(";")[0].strip().lower()


def encode_header_value(value: str) -> str:
    """A header-safe rendering of a name, per the stateless-era rule: plain printable ASCII passes
    verbatim, anything else is wrapped as ``=?base64?...?=``."""
    import base64

    printable = all(" " <= c <= "~" for c in value)
    if printable and value == value.strip() and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def param_header_map(input_schema: JSON) -> dict[tuple[str, ...], str]:
    """``x-mcp-header`` annotations of a tool's input schema, keyed by the property path."""
    found: dict[tuple[str, ...], str] = {}

    def walk(schema: JSON, path: tuple[str, ...]) -> None:
        if not isinstance(schema, dict):
            return
        token = schema.get("x-mcp-header")
        if path and isinstance(token, str):
            found[path] = token
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, sub in props.items():
                walk(sub, (*path, str(key)))

    walk(input_schema, ())
    return found


def _scalar_header(value: JSON) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _value_at(arguments: JSON, path: tuple[str, ...]) -> JSON:
    node = arguments
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def wait_for_port(url: str, timeout: float, *, alive: JSON = None) -> None:
    """Poll until the URL's host and port accept a TCP connection, or raise ServerStartError.

    ``alive`` is an optional callable returning False once the server process has ended, so a
    server that dies during start-up fails at once instead of after the whole timeout."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=min(1.0, max(timeout, 0.05))):
                return
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
        if alive is not None and not alive():
            raise ServerStartError(f"the server exited before {display_url(url)} accepted connections")
        if time.monotonic() >= deadline:
            raise ServerStartError(f"cannot connect to {display_url(url)}: {reason} (waited {timeout:g} s)")
        time.sleep(0.05)


@dataclass
class _Cursor:
    """Where one SSE answer stream got to, for resuming it with ``Last-Event-ID``."""

    last_event_id: str = ""
    retry_ms: int | None = None


class _Fault:
    """A failure found by a reader thread, queued so ``receive`` raises it in arrival order."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class HttpTransport:
    """A connection to an MCP server over Streamable HTTP (or legacy HTTP+SSE).

    ``server``: optionally a command that starts the server; the transport then waits (bounded by
    ``startup_timeout``) until ``url`` accepts connections and shuts the process group down at close.
    ``mode``: ``auto`` uses legacy HTTP+SSE for URLs ending in ``/sse`` and falls back to it when
    the first POST gets 400/404/405; ``streamable`` and ``sse`` force one.
    ``listen``: open the optional GET stream after the handshake, so server messages that belong to
    no request (server-to-client requests, list-changed notifications) reach the engine.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | Sequence[tuple[str, str]] | None = None,
        server: str | Sequence[str] | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        isolate: bool = False,
        setup: str | Sequence[str] | None = None,
        setup_timeout: float = 120.0,
        reset: str | Sequence[str] | None = None,
        mode: Mode = "auto",
        connect_timeout: float = 10.0,
        startup_timeout: float = 30.0,
        read_timeout: float = 300.0,
        listen: bool = True,
        max_message: int = MAX_MESSAGE,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--url {display_url(url)!r}: expected an http:// or https:// URL")
        if mode not in ("auto", "streamable", "sse"):
            raise ConfigError(f"unknown HTTP mode {mode!r} (expected auto, streamable or sse)")
        self.url = url
        self.max_message = max_message
        items = headers.items() if isinstance(headers, Mapping) else (headers or ())
        self._user_headers = {str(k): str(v) for k, v in items}
        self._server: str | list[str] | None = (server if isinstance(server, str) else list(server)) if server else None
        self._cwd = cwd
        self._env = dict(env) if env else None
        self._isolate = isolate
        self._setup = setup
        self._reset = reset
        self._setup_timeout = setup_timeout
        self._mode: Mode = mode
        self._connect_timeout = connect_timeout
        self._start_timeout = startup_timeout
        self._read_timeout = read_timeout
        self._listen = listen

        self._client: httpx.Client | None = None
        self._process: ServerProcess | None = None
        self._output: StderrTail | None = None
        self._queue: queue.Queue[JSONObject | _Fault] = queue.Queue()
        self._lock = threading.Lock()
        self._open: set[httpx.Response] = set()
        self._threads: list[threading.Thread] = []
        self._closing = threading.Event()
        self._closed = False
        self._legacy_endpoint: str | None = None
        self._legacy_refused = ""  # an endpoint on another origin, which we did not follow
        self._legacy_ready = threading.Event()
        self._session_id: str | None = None
        self._protocol_version: str | None = None
        self._initialize_ids: set[JSON] = set()
        self._tools_list_ids: set[JSON] = set()
        self._param_headers: dict[str, dict[tuple[str, ...], str]] = {}
        self._listening = False
        self._listen_ready = threading.Event()  # the GET stream was answered (``_open_listen_stream``)
        self._posted = 0
        self._facts: dict[str, HttpFacts] = {}
        self._non_json = 0
        self._last_status: int | None = None
        self._refused = 0

    # -- the Transport protocol -------------------------------------------------------------------

    def start(self) -> None:
        """Start the server command (if any), wait until the URL accepts connections, and open the
        legacy SSE stream when that mode is in use. Raises ServerStartError."""
        if self._setup:
            from mcp_replay_action.transport.process import run_setup

            run_setup(self._setup, cwd=self._cwd, env=self._env, timeout=self._setup_timeout)
        if self._reset:
            from mcp_replay_action.transport.process import run_setup

            run_setup(self._reset, cwd=self._cwd, env=self._env, timeout=self._setup_timeout, flag="--reset")
        if self._server:
            self._spawn()
            try:
                wait_for_port(self.url, self._start_timeout, alive=self._process_alive)
            except ServerStartError as exc:
                time.sleep(0.1)  # let the output drain so the error carries the server's last words
                diag = self._diag_kwargs()
                what = str(exc)
                if diag.get("exit_status") is not None and self._process is not None:
                    what = self._process.start_failure(what, diag["stderr_tail"])
                raise ServerStartError(what, **diag) from None
        else:
            wait_for_port(self.url, self._connect_timeout)
        self._client = httpx.Client(
            timeout=httpx.Timeout(self._connect_timeout, read=self._read_timeout),
            follow_redirects=False,
        )
        if self._mode == "sse" or (self._mode == "auto" and urlsplit(self.url).path.rstrip("/").endswith("/sse")):
            self._open_legacy(self._start_timeout)

    def send(self, message: JSONObject) -> None:
        """POST one message. A request's answer is read in the background and handed out by
        ``receive``; a notification or a response to a server request is POSTed at once (so it
        reaches the server before anything sent after it). Raises ServerExited."""
        if self._closed or self._client is None:
            raise ServerExited("the HTTP transport is closed")
        if message.get("method") == "initialize" and "id" in message:
            self._initialize_ids.add(message["id"])
        if message.get("method") == "tools/list" and "id" in message:
            self._tools_list_ids.add(message["id"])
        if self._legacy_endpoint is not None:
            self._post_legacy(message)
            return
        if "method" in message and "id" in message:
            first = self._posted == 0
            self._posted += 1
            self._spawn_thread(self._exchange, message, first)
            return
        listen = message.get("method") == "notifications/initialized" and self._listen and self._session_id
        if listen:
            self._open_listen_stream()  # before the notice: what the server says on it is heard
        self._posted += 1
        self._post_one_way(message)
        if listen and not self._listening:
            self._open_listen_stream(wait=False)  # refused before the notice: asked once more after it

    def receive(self, timeout: float, prepared: Prepared | None = None) -> JSONObject:
        """The next message from the server, in arrival order across every open stream
        (``prepared`` is not used: a body is read whole)."""
        try:
            item = self._queue.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            raise TransportTimeout(
                f"no message from {display_url(self.url)} within {timeout:g} s", **self._diag_kwargs()
            ) from None
        if isinstance(item, _Fault):
            raise item.error
        return item

    def close(self) -> None:
        """DELETE the session, break every open stream, stop the server process. Idempotent."""
        if self._closed:
            return
        self._closed = True
        client = self._client
        if client is not None and self._session_id and self._legacy_endpoint is None:
            try:
                client.delete(self.url, headers=self._base_headers(), timeout=_CLOSE_WAIT)
            except httpx.HTTPError:
                pass  # DELETE is a courtesy; a server may refuse it (405) or be gone already
        self._closing.set()
        with self._lock:
            streams = list(self._open)
        for response in streams:
            break_stream(response)
        if client is not None:
            client.close()
        for thread in self._threads:
            thread.join(timeout=0.5)
        if self._process is not None:
            self._stop_process()

    def diagnostics(self) -> JSONObject:
        """Failure facts; never a header value."""
        out: JSONObject = {
            "stderr_tail": "",
            "exit_status": None,
            "non_json_lines": self._non_json,
            "http_status": self._last_status,
            "transport": "sse" if self._legacy_endpoint is not None else "http",
            "session": self._session_id is not None,
            "refused_one_way_posts": self._refused,
        }
        if self._process is not None:
            out.update(self._process_diagnostics())
        return out

    # -- extras the engine and the recorder may use -----------------------------------------------

    def transport_facts(self, request_id: JSON) -> JSONObject | None:
        """HTTP status, content type and SSE-or-JSON of the answer to ``request_id``, if seen."""
        facts = self._facts.get(json.dumps(request_id))
        return facts.to_json() if facts else None

    # -- headers -----------------------------------------------------------------------------------

    def _base_headers(self) -> dict[str, str]:
        headers = dict(self._user_headers)
        if self._session_id:
            headers[SESSION_HEADER] = self._session_id
        if self._protocol_version:
            headers[VERSION_HEADER] = self._protocol_version
        return headers

    def _headers_for(self, message: JSONObject) -> dict[str, str]:
        headers = self._base_headers()
        headers["Accept"] = ACCEPT_BOTH
        headers["Content-Type"] = "application/json"
        version = request_protocol_version(message)
        method = message.get("method")
        if version:
            # Stateless era: every request names its version, method and target in headers too,
            # and servers reject a request whose headers disagree with its body.
            headers[VERSION_HEADER] = version
            if isinstance(method, str):
                headers[METHOD_HEADER] = method
            raw_params = message.get("params")
            params: JSONObject = raw_params if isinstance(raw_params, dict) else {}
            key = NAME_BEARING_METHODS.get(str(method))
            if key and isinstance(params.get(key), str):
                headers[NAME_HEADER] = encode_header_value(params[key])
            if method == "tools/call":
                headers.update(self._tool_param_headers(params))
        return headers

    def _tool_param_headers(self, params: JSONObject) -> dict[str, str]:
        header_map = self._param_headers.get(str(params.get("name")), {})
        out: dict[str, str] = {}
        for path, token in header_map.items():
            rendered = _scalar_header(_value_at(params.get("arguments") or {}, path))
            if rendered is not None:
                out[f"{PARAM_HEADER_PREFIX}{token}"] = encode_header_value(rendered)
        return out

    def _learn(self, message: JSONObject) -> None:
        """Pick up what later requests need from a server message: the negotiated protocol version
        and the ``x-mcp-header`` annotations of listed tools."""
        msg_id = message.get("id")
        if "method" in message or msg_id is None:
            return
        result = message.get("result")
        if not isinstance(result, dict):
            return
        if msg_id in self._initialize_ids and isinstance(result.get("protocolVersion"), str):
            self._protocol_version = result["protocolVersion"]
        if msg_id in self._tools_list_ids and isinstance(result.get("tools"), list):
            for tool in result["tools"]:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    found = param_header_map(tool.get("inputSchema"))
                    if found:
                        self._param_headers[tool["name"]] = found

    def _note_response(self, response: httpx.Response) -> None:
        self._last_status = response.status_code
        session = response.headers.get(SESSION_HEADER)
        if session:
            self._session_id = session

    # -- message delivery --------------------------------------------------------------------------

    def _deliver(self, message: JSON) -> bool:
        """Queue one decoded body or event; False when it was not a JSON-RPC message."""
        items = message if isinstance(message, list) else [message]
        delivered = False
        for item in items:
            if isinstance(item, dict) and (item.get("jsonrpc") == "2.0" or "method" in item or "id" in item):
                self._learn(item)
                self._queue.put(item)
                delivered = True
            else:
                self._non_json += 1
        return delivered

    def _fault(self, error: Exception) -> None:
        if not self._closing.is_set():
            self._queue.put(_Fault(error))

    def _decode(self, text: str) -> JSON:
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            self._non_json += 1
            return None
        except RecursionError:
            # Said in its place (``receive`` raises it), as over stdio: the answer it most likely
            # was must not wait out the timeout.
            depth = text_depth(text)
            self._fault(MessageTooDeep(too_deep("a message the server sent", depth, to="read"), depth=depth))
            return None

    # -- streamable HTTP ---------------------------------------------------------------------------

    def _spawn_thread(self, target: Callable[..., object], *args: object) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True, name="mcp-replay-http")
        self._threads = [t for t in self._threads if t.is_alive()]
        self._threads.append(thread)
        thread.start()

    def _open_stream(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        assert self._client is not None
        request = self._client.build_request(method, url, **kwargs)
        response = self._client.send(request, stream=True)
        with self._lock:
            self._open.add(response)
        if self._closing.is_set():
            break_stream(response)
        return response

    def _release(self, response: httpx.Response) -> None:
        with self._lock:
            self._open.discard(response)
        response.close()

    def _exchange(self, message: JSONObject, first: bool) -> None:
        """Reader thread of one request POST: queue everything the answer carries."""
        label = _label(message)
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        try:
            response = self._open_stream("POST", self.url, content=body, headers=self._headers_for(message))
        except httpx.TimeoutException:
            self._fault(
                TransportTimeout(f"{label}: {display_url(self.url)} did not answer in time", **self._diag_kwargs())
            )
            return
        except httpx.HTTPError as exc:
            self._fault(
                ServerExited(f"{label}: cannot reach {display_url(self.url)}: {_reason(exc)}", **self._diag_kwargs())
            )
            return
        try:
            self._note_response(response)
            if first and self._mode == "auto" and response.status_code in (400, 404, 405):
                if self._try_legacy_fallback(response, message):
                    return
            self._read_answer(response, message, label)
        except MessageTooLarge as exc:
            self._fault(MessageTooLarge(f"{label}: {exc}", **self._diag_kwargs()))
        except httpx.TimeoutException:
            self._fault(
                TransportTimeout(
                    f"{label}: the answer stalled (no data for {self._read_timeout:g} s)", **self._diag_kwargs()
                )
            )
        except (httpx.HTTPError, OSError) as exc:
            self._fault(
                ServerExited(f"{label}: the connection broke mid-answer: {_reason(exc)}", **self._diag_kwargs())
            )
        finally:
            self._release(response)

    def _read_answer(self, response: httpx.Response, message: JSONObject, label: str) -> None:
        ctype = content_type_of(response)
        status = response.status_code
        want = message.get("id")
        self._facts[json.dumps(want)] = HttpFacts(status, ctype, ctype == "text/event-stream")
        if ctype == "text/event-stream" and status < 400:
            cursor = _Cursor()
            if not self._read_sse(response, want, cursor):
                self._resume_or_fail(want, label, cursor)
            return
        raw = read_capped(response, self.max_message)
        doc = self._decode(raw.decode("utf-8", "replace")) if raw.strip() else None
        answered = _answers(doc, want)
        if answered:
            self._deliver(doc)
            return
        if doc is not None:
            self._deliver(doc)  # notifications or stray answers still reach the engine, in order
        if status >= 400:
            self._fault(
                HttpStatusError(
                    f"{label}: HTTP {status} from {display_url(self.url)}{_snippet(raw)}",
                    status=status,
                    **self._diag_kwargs(),
                )
            )
        elif status == 202:
            self._fault(
                ServerExited(
                    f"{label}: the server accepted the request (202) but never answered it", **self._diag_kwargs()
                )
            )
        else:
            what = f"content type {ctype!r}" if ctype not in ("application/json", "") else "no JSON-RPC answer"
            self._fault(ServerExited(f"{label}: HTTP {status} with {what}{_snippet(raw)}", **self._diag_kwargs()))

    def _read_sse(self, response: httpx.Response, want: JSON, cursor: _Cursor) -> bool:
        """Queue each event's message; True once the response to ``want`` arrived."""
        for event in sse_events(response, self.max_message):
            if event.id:
                cursor.last_event_id = event.id
            if event.retry is not None:
                cursor.retry_ms = event.retry
            if not event.data.strip():
                continue  # a priming event (id only) or a keep-alive
            doc = self._decode(event.data)
            if doc is None:
                continue
            self._deliver(doc)
            if want is not None and _answers(doc, want):
                return True
        return False

    def _resume_or_fail(self, want: JSON, label: str, cursor: _Cursor) -> None:
        """A stream that ended before its answer: resume it with ``Last-Event-ID`` when the server
        gave event ids (servers may close streams on purpose and expect this), else fail."""
        attempts = 0
        while cursor.last_event_id and attempts < RESUME_ATTEMPTS and not self._closing.is_set():
            attempts += 1
            time.sleep(min((cursor.retry_ms or 0) / 1000.0, _MAX_RETRY_WAIT))
            headers = self._base_headers()
            headers["Accept"] = "text/event-stream"
            headers["Last-Event-ID"] = cursor.last_event_id
            try:
                response = self._open_stream("GET", self.url, headers=headers)
            except httpx.HTTPError:
                break
            try:
                if response.status_code != 200 or content_type_of(response) != "text/event-stream":
                    break
                if self._read_sse(response, want, cursor):
                    return
            except (httpx.HTTPError, OSError):
                break
            finally:
                self._release(response)
        self._fault(ServerExited(f"{label}: the SSE stream ended before the response arrived", **self._diag_kwargs()))

    def _post(self, url: str, body: bytes, headers: Mapping[str, str]) -> tuple[httpx.Response, bytes]:
        """POST ``body`` and read the answer's body up to the cap (``read_capped``): the response
        (closed) and its body."""
        assert self._client is not None
        with self._client.stream(
            "POST", url, content=body, headers=dict(headers), timeout=self._connect_timeout
        ) as response:
            return response, read_capped(response, self.max_message)

    def _post_one_way(self, message: JSONObject) -> None:
        """POST a notification or a response; the server acknowledges with 202 (or 200)."""
        assert self._client is not None
        label = _label(message)
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        try:
            response, raw = self._post(self.url, body, self._headers_for(message))
        except httpx.TimeoutException:
            raise TransportTimeout(
                f"{label}: {display_url(self.url)} did not acknowledge in time", **self._diag_kwargs()
            ) from None
        except MessageTooLarge as exc:
            raise MessageTooLarge(f"{label}: {exc}", **self._diag_kwargs()) from None
        except httpx.HTTPError as exc:
            raise ServerExited(
                f"{label}: cannot reach {display_url(self.url)}: {_reason(exc)}", **self._diag_kwargs()
            ) from None
        self._note_response(response)
        if response.status_code >= 400:
            # A refused notification is a fact about the server, not a reason to stop: the next
            # request's answer (or its absence) tells the story. Counted for diagnostics.
            self._refused += 1
        elif raw.strip():
            doc = self._decode(raw.decode("utf-8", "replace"))
            if doc is not None:
                self._deliver(doc)

    def _open_listen_stream(self, wait: bool = True) -> None:
        """Open the GET stream and, with ``wait``, wait (``LISTEN_READY_SECONDS`` at most) until
        the server has answered it. Opened before ``notifications/initialized`` is posted: a
        server announces things the moment the handshake ends (npm server-everything's
        ``tools/list_changed``), on a stream that is dropped when it is not open yet, so a replay
        that opened it after the notice heard them only when it won the race. A server that
        refuses the stream until the handshake has ended is asked again after the notice."""
        if self._listening:
            return
        self._listening = True
        self._listen_ready.clear()
        self._spawn_thread(self._listen_loop)
        if wait:
            self._listen_ready.wait(LISTEN_READY_SECONDS)

    def _listen_loop(self) -> None:
        """The optional GET stream of the handshake era: server messages tied to no request."""
        headers = self._base_headers()
        headers["Accept"] = "text/event-stream"
        try:
            response = self._open_stream(
                "GET", self.url, headers=headers, timeout=httpx.Timeout(self._connect_timeout, read=None)
            )
        except httpx.HTTPError:
            self._listening = False
            self._listen_ready.set()  # failed: the handshake goes on
            return
        try:
            opened = response.status_code == 200 and content_type_of(response) == "text/event-stream"
            if not opened and response.status_code != 405:  # 405: no such stream, which the spec allows
                self._listening = False  # refused (the handshake had not ended yet?): may be asked again
            self._listen_ready.set()  # answered or refused: the handshake goes on
            if not opened:
                return
            for event in sse_events(response, self.max_message):
                if event.data.strip():
                    doc = self._decode(event.data)
                    if doc is not None:
                        self._deliver(doc)
        except MessageTooLarge as exc:
            self._fault(MessageTooLarge(f"the GET stream: {exc}", **self._diag_kwargs()))
        except (httpx.HTTPError, OSError):
            pass  # the GET stream is optional; answers to requests travel on their own POSTs
        finally:
            self._release(response)

    # -- legacy HTTP+SSE ---------------------------------------------------------------------------

    def _try_legacy_fallback(self, response: httpx.Response, message: JSONObject) -> bool:
        """The first POST was refused: per the backwards-compatibility rule, try the old
        transport (GET an SSE stream that announces an endpoint). True when it took over."""
        raw = read_capped(response, self.max_message)
        doc = self._decode(raw.decode("utf-8", "replace")) if raw.strip() else None
        if _answers(doc, message.get("id")):
            self._deliver(doc)  # a real JSON-RPC answer: this is a Streamable HTTP server
            return True
        try:
            self._open_legacy(self._start_timeout)
        except ServerStartError as exc:
            if self._legacy_refused:
                self._fault(exc)
                return True
            self._fault(
                HttpStatusError(
                    f"{_label(message)}: HTTP {response.status_code} from {display_url(self.url)}{_snippet(raw)}",
                    status=response.status_code,
                    **self._diag_kwargs(),
                )
            )
            return True
        try:
            self._post_legacy(message)
        except ServerExited as exc:
            self._fault(exc)
        return True

    def _open_legacy(self, timeout: float) -> None:
        self._spawn_thread(self._legacy_loop)
        if not self._legacy_ready.wait(timeout) or self._legacy_endpoint is None:
            if self._legacy_refused:
                raise ServerStartError(
                    f"{display_url(self.url)} named a message endpoint on another origin "
                    f"({self._legacy_refused}); refused, so no header is sent there",
                    **self._diag_kwargs(),
                )
            raise ServerStartError(
                f"{display_url(self.url)} sent no 'endpoint' event on its SSE stream within {timeout:g} s",
                **self._diag_kwargs(),
            )

    def _legacy_loop(self) -> None:
        headers = dict(self._user_headers)
        headers["Accept"] = "text/event-stream"
        try:
            response = self._open_stream(
                "GET", self.url, headers=headers, timeout=httpx.Timeout(self._connect_timeout, read=None)
            )
        except httpx.HTTPError:
            self._legacy_ready.set()
            return
        try:
            self._note_response(response)
            if response.status_code != 200 or content_type_of(response) != "text/event-stream":
                self._legacy_ready.set()
                return
            for event in sse_events(response, self.max_message):
                if event.event == "endpoint":
                    endpoint = urljoin(self.url, event.data.strip())
                    if origin_of(endpoint) != origin_of(self.url):
                        # Our headers (credentials) must not follow a server's say-so to another
                        # host or port; the official SDK refuses this too.
                        self._legacy_refused = display_url(endpoint)
                        return
                    self._legacy_endpoint = endpoint
                    self._legacy_ready.set()
                elif event.data.strip():
                    doc = self._decode(event.data)
                    if doc is not None:
                        self._deliver(doc)
            if self._legacy_endpoint is not None:
                self._fault(ServerExited(f"the SSE stream from {display_url(self.url)} ended", **self._diag_kwargs()))
        except MessageTooLarge as exc:
            self._fault(MessageTooLarge(f"the SSE stream: {exc}", **self._diag_kwargs()))
        except (httpx.HTTPError, OSError) as exc:
            if self._legacy_endpoint is not None:
                self._fault(
                    ServerExited(
                        f"the SSE stream from {display_url(self.url)} broke: {_reason(exc)}", **self._diag_kwargs()
                    )
                )
        finally:
            self._legacy_ready.set()
            self._release(response)

    def _post_legacy(self, message: JSONObject) -> None:
        assert self._client is not None and self._legacy_endpoint is not None
        label = _label(message)
        try:
            response, raw = self._post(
                self._legacy_endpoint,
                json.dumps(message, ensure_ascii=False).encode("utf-8"),
                {**self._user_headers, "Content-Type": "application/json"},
            )
        except httpx.TimeoutException:
            raise TransportTimeout(
                f"{label}: the message endpoint did not acknowledge in time", **self._diag_kwargs()
            ) from None
        except MessageTooLarge as exc:
            raise MessageTooLarge(f"{label}: {exc}", **self._diag_kwargs()) from None
        except httpx.HTTPError as exc:
            raise ServerExited(
                f"{label}: cannot reach the message endpoint: {_reason(exc)}", **self._diag_kwargs()
            ) from None
        self._last_status = response.status_code
        if "id" in message and "method" in message:
            self._facts[json.dumps(message["id"])] = HttpFacts(response.status_code, "text/event-stream", True)
        if response.status_code >= 400:
            raise HttpStatusError(
                f"{label}: HTTP {response.status_code} from the message endpoint{_snippet(raw)}",
                status=response.status_code,
                **self._diag_kwargs(),
            )

    # -- the server process (``--server CMD --url URL``) -------------------------------------------

    def _spawn(self) -> None:
        from mcp_replay_action.transport.process import StderrTail, spawn_server

        assert self._server is not None
        # One pipe for stdout and stderr: HTTP servers log to either, and both must be drained
        # (a full pipe would stall the server) and kept for diagnostics.
        self._process = spawn_server(
            self._server,
            cwd=self._cwd,
            env=self._env,
            isolate=self._isolate,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert self._process.popen.stdout is not None
        self._output = StderrTail(self._process.popen.stdout)
        self._output.start()

    def _process_alive(self) -> bool:
        return self._process is None or self._process.popen.poll() is None

    def _process_diagnostics(self) -> JSONObject:
        return {
            "stderr_tail": self._output.text() if self._output is not None else "",
            "exit_status": self._process.popen.poll() if self._process is not None else None,
        }

    def _stop_process(self) -> None:
        assert self._process is not None
        self._process.stop()
        if self._output is not None:
            self._output.join(1.0)

    def _diag_kwargs(self) -> Diagnostics:
        if self._process is None:
            return {}
        diag = self._process_diagnostics()
        return {"stderr_tail": diag["stderr_tail"], "exit_status": diag["exit_status"]}


def read_capped(response: httpx.Response, cap: int) -> bytes:
    """The body of a streamed ``response``, read a chunk at a time. Raises MessageTooLarge once it
    passes ``cap`` bytes (a ``Content-Length`` over it before a byte is read)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > cap:
        raise MessageTooLarge(message_too_large(cap, "body"))
    parts: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise MessageTooLarge(message_too_large(cap, "body"))
        parts.append(chunk)
    return b"".join(parts)


def sse_events(response: httpx.Response, cap: int) -> Iterator[ServerSentEvent]:
    """The events of an SSE ``response`` (httpx-sse's parser). Raises MessageTooLarge once an
    event (the text since the last blank line) passes ``cap`` characters, before the parser holds
    it: a stream that never ends its event is not held whole."""
    return EventSource(_CappedEvents(response, cap)).iter_sse()  # type: ignore[arg-type]


class _CappedEvents:
    """What ``EventSource`` reads of a response (its headers and text), with each event's length
    counted as the text passes."""

    _BLANK = re.compile(r"(?:\r\n|\r|\n)(?:\r\n|\r|\n)")

    def __init__(self, response: httpx.Response, cap: int) -> None:
        self.headers = response.headers
        self._response, self._cap = response, cap

    def iter_text(self) -> Iterator[str]:
        since = 0  # characters since the last blank line: the event being read
        tail = ""  # the previous piece's last characters, for a blank line split across pieces
        for text in self._response.iter_text():
            blank = collections.deque(self._BLANK.finditer(tail + text), maxlen=1)  # the last one
            since = len(tail) + len(text) - blank[0].end() if blank else since + len(text)
            if since > self._cap:
                raise MessageTooLarge(message_too_large(self._cap, "server-sent event"))
            tail = text[-3:]
            yield text


def _answers(doc: JSON, want: JSON) -> bool:
    """True when ``doc`` (a message or a batch) holds the response to request id ``want``."""
    items = doc if isinstance(doc, list) else [doc]
    return any(
        isinstance(m, dict) and "method" not in m and m.get("id") == want and ("result" in m or "error" in m)
        for m in items
    )


def _label(message: JSONObject) -> str:
    method = message.get("method")
    if method is None:
        return f"response to server request {message.get('id')!r}"
    return f"{method} (id {message['id']!r})" if "id" in message else str(method)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    if "Connection refused" in text or "ECONNREFUSED" in text:
        return "connection refused"
    return (text or type(exc).__name__)[:200]


def _snippet(raw: bytes) -> str:
    text = " ".join(raw.decode("utf-8", "replace").split())
    return f": {text[:200]}" if text else ""


def break_stream(response: httpx.Response) -> None:
    """Unblock a thread reading ``response``: closing alone does not wake a blocked read, shutting
    the socket down does."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
    try:
        response.close()
    except Exception:  # a response being torn down may raise anything; there is nothing to do
        pass
