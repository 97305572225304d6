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

from collections.abc import Iterable, Iterator

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


class Effects:
    """Whether a recorded session may change what the server keeps after it (``may_leave_state``:
    a call of a tool not annotated read-only in the recorded listing, or a method of unknown
    effect), learned from the interactions as the replay reads them (``watch``), so a streamed
    cassette is not read once more for it: the tools called and the tools listed read-only are
    kept (names only), and any other method of unknown effect settles it."""

    def __init__(self) -> None:
        self.called: set[str | None] = set()  # tools called, by name (None: a call naming none)
        self.read_only: set[str] = set()
        self.unknown = False  # a request of unknown effect was sent
        self.complete = False  # every interaction was watched

    def watch(self, interactions: Iterable[Interaction]) -> Iterator[Interaction]:
        for inter in interactions:
            if inter.kind == "request":
                if inter.method == "tools/call":
                    self.called.add(inter.tool_name)
                elif inter.method == "tools/list":
                    self.read_only |= read_only_tools((inter,))
                elif inter.method not in NO_LASTING_EFFECT:
                    self.unknown = True
            yield inter
        self.complete = True

    def may_leave_state(self) -> bool:
        return self.unknown or any(name not in self.read_only for name in self.called)
