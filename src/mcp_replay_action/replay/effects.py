"""Whether a recorded session may have left state on the server that outlives it (a file, a
database), read from the cassette alone: what the ``--setup`` note (``advice.py``) is shown for.

By the MCP specification, a client changes what a server keeps only through a tool: listings,
reads (``resources/read``, ``prompts/get``), completions and the lifecycle change nothing, and a
subscription (``resources/subscribe``, ``subscriptions/listen``), a log level
(``logging/setLevel``) or a task's bookkeeping (``tasks/*``: the task itself was started by a tool
call) lasts only as long as the session. So a session may write when it calls a tool its recorded
``tools/list`` does not annotate ``readOnlyHint: true`` (the hint's default is false, and a tool
never listed is not known to be read-only), or sends a method this list does not know (an
extension's, a later revision's): a method of unknown effect is taken to write.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.replay.repeat import read_only_tools

# Requests that leave nothing behind the session (see the module's doc).
NO_LASTING_EFFECT = frozenset(
    {
        "initialize",
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "subscriptions/listen",
        "logging/setLevel",
        "completion/complete",
        "tasks/get",
        "tasks/list",
        "tasks/result",
        "tasks/cancel",
    }
)


def may_leave_state(interactions: Iterable[Interaction]) -> bool:
    """Whether any recorded request may change what the server keeps after the session: a call of
    a tool not annotated read-only in the recorded listing, or a method of unknown effect."""
    requests = [i for i in interactions if i.kind == "request"]
    read_only = read_only_tools(requests)
    for inter in requests:
        if inter.method == "tools/call":
            if inter.tool_name not in read_only:
                return True
        elif inter.method not in NO_LASTING_EFFECT:
            return True
    return False
