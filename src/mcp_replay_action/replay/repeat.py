"""What ``--repeat N`` may send again to time it: a request that changes nothing on the server (a
listing, a read, a call of a tool its recorded listing annotates ``readOnlyHint: true``). The
replay engine asks these before it resends a request for its median latency."""

from __future__ import annotations

from collections.abc import Iterable

from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Interaction

# Requests that change nothing on the server, so sending them again to time them is harmless.
_READ_ONLY_METHODS = frozenset({"tools/list", "resources/read", "resources/list", "prompts/list", "ping"})


def read_only_tools(interactions: Iterable[Interaction]) -> frozenset[str]:
    """Names of the tools a recorded ``tools/list`` annotates ``readOnlyHint: true``."""
    names: set[str] = set()
    for inter in interactions:
        if inter.kind != "request" or inter.method != "tools/list" or not isinstance(inter.response, dict):
            continue
        result = inter.response.get("result")
        for tool in (result.get("tools") if isinstance(result, dict) else None) or ():
            if isinstance(tool, dict) and isinstance(tool.get("annotations"), dict):
                if tool["annotations"].get("readOnlyHint") is True and isinstance(tool.get("name"), str):
                    names.add(tool["name"])
    return frozenset(names)


def side_effect_free(message: JSONObject, read_only: frozenset[str]) -> bool:
    """Whether sending ``message`` again changes nothing: a listing, a read, or a call of a tool
    annotated read-only."""
    method = message.get("method")
    if method in _READ_ONLY_METHODS:
        return True
    params = message.get("params")
    return method == "tools/call" and isinstance(params, dict) and params.get("name") in read_only
