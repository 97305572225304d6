"""A small stdio MCP server (stdlib only) that speaks both protocol eras.

Handshake era (2024-11-05 .. 2025-11-25): ``initialize``, ``ping``, a server-to-client
``roots/list`` request from the ``roots`` tool. Stateless era (2026-07-28): ``server/discover``,
per-request ``_meta``, ``resultType`` on results, and a multi round-trip ``confirm`` tool that
answers ``input_required`` with an opaque ``requestState`` first.

Tools: ``add``, ``echo``, ``now`` (a timestamp), ``start_job`` / ``job_status`` (a minted id that
later requests carry), ``roots`` and ``confirm``. Run with ``--regressed`` (or as
``calc_server_regressed``) for the drifted twin.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import sys
import uuid
from typing import Any, TypeAlias

# A value and an object as ``json.loads`` gives them: the package's ``model.JSON`` and
# ``model.JSONObject``, named here again since this server imports only the standard library.
JSON: TypeAlias = Any
JSONObject: TypeAlias = dict[str, JSON]

HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
STATELESS_VERSION = "2026-07-28"
META_VERSION = "io.modelcontextprotocol/protocolVersion"

TOOLS: list[JSONObject] = [
    {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "echo",
        "description": "Echo a message back.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    },
    {"name": "now", "description": "The current time.", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "start_job",
        "description": "Start a job; returns its id.",
        "inputSchema": {"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
    },
    {
        "name": "job_status",
        "description": "The status of a job started with start_job.",
        "inputSchema": {"type": "object", "properties": {"jobId": {"type": "string"}}, "required": ["jobId"]},
    },
    {"name": "roots", "description": "List the client's roots.", "inputSchema": {"type": "object", "properties": {}}},
    {
        "name": "confirm",
        "description": "Ask the user to confirm, then act.",
        "inputSchema": {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]},
    },
]
RESOURCES = [{"uri": "memo://readme", "name": "readme", "mimeType": "text/plain"}]
README_TEXT = "calc server\nbuilt for mcp-replay\n"


class CalcServer:
    """The whole server: one ``handle`` call per incoming message."""

    def __init__(self, regressed: bool = False) -> None:
        self.regressed = regressed
        self.jobs: dict[str, int] = {}
        self.pending_roots: dict[JSON, JSON] = {}  # our request id -> the tools/call id waiting on it
        self.next_id = 0
        self.out = sys.stdout

    def send(self, message: JSONObject) -> None:
        self.out.write(json.dumps(message, separators=(",", ":")) + "\n")
        self.out.flush()

    def handle(self, msg: JSONObject) -> None:
        if "method" not in msg:
            self._on_client_response(msg)
            return
        if "id" not in msg:
            return  # notifications need no answer
        try:
            result = self.dispatch(msg["method"], msg.get("params") or {}, msg["id"])
        except LookupError as exc:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32602, "message": str(exc)}})
            return
        if result is not None:
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    def _stateless(self, params: JSONObject) -> bool:
        meta = params.get("_meta") or {}
        return meta.get(META_VERSION) == STATELESS_VERSION

    def dispatch(self, method: str, params: JSONObject, req_id: JSON) -> JSONObject | None:
        stateless = self._stateless(params)
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[0]
            return {
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": False}, "resources": {}},
                "serverInfo": {"name": "mcp-replay-sample-calc", "version": "1.4.0"},
            }
        if method == "server/discover":
            return {
                "supportedVersions": [STATELESS_VERSION, *HANDSHAKE_VERSIONS],
                "capabilities": {"tools": {"listChanged": False}, "resources": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "mcp-replay-sample-calc", "version": "1.4.0"}},
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "private",
            }
        if method == "ping":
            return {}
        if method == "tools/list":
            result: JSONObject = {"tools": TOOLS}
        elif method == "resources/list":
            result = {"resources": RESOURCES}
        elif method == "resources/read":
            if params.get("uri") != "memo://readme":
                raise LookupError(f"unknown resource {params.get('uri')}")
            blob = base64.b64encode(README_TEXT.encode()).decode()
            result = {"contents": [{"uri": "memo://readme", "mimeType": "text/plain", "blob": blob}]}
        elif method == "tools/call":
            maybe = self.call_tool(params.get("name", ""), params.get("arguments") or {}, params, req_id, stateless)
            if maybe is None:
                return None
            result = maybe
        else:
            raise LookupError(f"method not found: {method}")
        if stateless:
            result["resultType"] = result.get("resultType", "complete")
            if method.endswith("/list"):  # cacheable results carry caching directives (2026-07-28)
                result.update(ttlMs=0, cacheScope="private")
        return result

    def call_tool(
        self, name: str, args: JSONObject, params: JSONObject, req_id: JSON, stateless: bool
    ) -> JSONObject | None:
        if name == "add":
            total = int(args["a"]) + int(args["b"]) + (1 if self.regressed else 0)
            return text_result(str(total))
        if name == "echo":
            result = text_result(str(args.get("message", "")))
            if self.regressed:
                result["echoed"] = True
            return result
        if name == "now":
            stamp = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            return text_result(json.dumps({"time": stamp, "zone": "UTC", "requestId": str(uuid.uuid4())}))
        if name == "start_job":
            job = str(uuid.uuid4())
            self.jobs[job] = int(args.get("size", 1))
            return {"content": [{"type": "text", "text": f"started {job}"}], "structuredContent": {"jobId": job}}
        if name == "job_status":
            wanted = str(args.get("jobId"))
            if wanted not in self.jobs:
                return {"content": [{"type": "text", "text": f"no such job: {wanted}"}], "isError": True}
            return {
                "content": [{"type": "text", "text": "done"}],
                "structuredContent": {"jobId": wanted, "items": self.jobs[wanted]},
            }
        if name == "roots":
            if stateless:
                return text_result("roots are not available in the stateless era")
            self.next_id += 1
            our_id = f"srv-{self.next_id}"
            self.pending_roots[our_id] = req_id
            self.send({"jsonrpc": "2.0", "id": our_id, "method": "roots/list", "params": {}})
            return None
        if name == "confirm":
            responses = params.get("inputResponses")
            state = params.get("requestState")
            if not stateless:
                return text_result(f"did {args.get('action')}")
            if not responses or not state:
                token = base64.urlsafe_b64encode(os.urandom(24)).decode()
                return {
                    "resultType": "input_required",
                    "inputRequests": {
                        "ok": {
                            "method": "elicitation/create",
                            "params": {
                                "message": f"Really {args.get('action')}?",
                                "requestedSchema": {"type": "object", "properties": {}},
                            },
                        }
                    },
                    "requestState": token,
                }
            answer = (responses.get("ok") or {}).get("action", "decline")
            return text_result(f"{args.get('action')}: {answer}")
        raise LookupError(f"unknown tool: {name}")

    def _on_client_response(self, msg: JSONObject) -> None:
        waiting = self.pending_roots.pop(msg.get("id"), None)
        if waiting is None:
            return
        roots = (msg.get("result") or {}).get("roots", [])
        names = ", ".join(r.get("name") or r.get("uri", "?") for r in roots) or "(none)"
        self.send({"jsonrpc": "2.0", "id": waiting, "result": text_result(f"roots: {names}")})


def text_result(text: str) -> JSONObject:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def main(argv: list[str] | None = None, regressed: bool = False) -> None:
    args = sys.argv[1:] if argv is None else argv
    server = CalcServer(regressed=regressed or "--regressed" in args)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            msg = json.loads(line)
        except json.JSONDecodeError:
            server.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            continue
        server.handle(msg)


if __name__ == "__main__":
    main()
