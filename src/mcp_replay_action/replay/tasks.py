"""Tasks on replay: a task is compared by the states a client acts on, not poll by poll.

A task (the 2025-11-25 revision's experimental utility; in 2026-07-28 the
``io.modelcontextprotocol/tasks`` extension) is a request answered with a handle
(``CreateTaskResult``); the client polls ``tasks/get`` until the task leaves ``working``, then
reads its result (``tasks/result`` in 2025-11-25, inline in the terminal ``tasks/get`` in
2026-07-28) or answers its input requests (``tasks/update``). How many polls say ``working``
depends on the machine and the build, so a recording that polled N times and a live server that
needs M are the same behaviour when they reach the same state with the same result:

- a recorded poll answered ``working`` (an *interim* poll) is sent, and its live answer is
  neither compared nor a failure, whatever status it says (unless it is an error); once the live
  task has ended (``completed``, ``failed``, ``cancelled``), its later interim polls are not sent
  (``skipped``: the live task was quicker);
- a recorded poll answered with any other status (``completed``, ``failed``, ``cancelled``, or
  ``input_required``: a state the client acts on, a *milestone*) is sent again while the live
  task still says ``working``, at the server's poll interval (``pollInterval`` /
  ``pollIntervalMs``, held between 10 ms and 1 s) and within the request's timeout; the first
  live answer that is not ``working`` is compared with it as usual (status, result, error).

The task id is minted by the server: ``correlate``/``carry`` thread it from the handle into every
later request that quotes it, as any minted value. ``tasks/update``, ``tasks/result``,
``tasks/cancel`` and a handle the server sent unasked (a ``tools/call`` answered with
``resultType: "task"``) replay as the requests they are.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Interaction
from mcp_replay_action.wire.jsonrpc import is_failure

POLL = "tasks/get"
WORKING = "working"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
# The gap between two polls of one live task: the server's hint, held within these bounds.
MIN_GAP = 0.01
MAX_GAP = 1.0

# Send a request and return its answer within the given seconds (raises TransportTimeout).
Ask = Callable[[JSONObject, float], JSONObject]


def status_of(answer: JSON) -> str | None:
    """The task status a ``tasks/get`` answer holds (``result.status``, both eras), or None."""
    if not isinstance(answer, dict):
        return None
    result = answer.get("result")
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


def interim(inter: Interaction, live: JSONObject) -> bool:
    """Whether ``inter`` is a poll the recording saw answered ``working`` and the live answer is
    not an error: a poll whose live answer is not compared."""
    return inter.method == POLL and status_of(inter.response) == WORKING and not is_failure(live)


def milestone(inter: Interaction) -> bool:
    """Whether ``inter`` is a poll the recording saw answered with a state other than ``working``."""
    status = None if inter.method != POLL else status_of(inter.response)
    return status is not None and status != WORKING


def as_handled(inter: Interaction, live: JSONObject) -> JSONObject:
    """``live`` to compare with ``inter``'s recorded task handle: a handle (``CreateTaskResult``:
    the 2025-11-25 ``result.task``, the 2026-07-28 ``resultType: "task"`` result) says how far the
    task had got when it was made, which is timing; where the recording's said ``working`` and the
    live one says ``working`` or ``completed``, the live handle is compared with the recorded
    status and status message in place (the task's end is compared at its milestone poll). Any
    other answer is ``live`` itself."""
    recorded, got = _handle(inter.response), _handle(live)
    if recorded is None or got is None or recorded.get("status") != WORKING:
        return live
    if got.get("status") not in (WORKING, "completed"):
        return live
    aligned = {k: v for k, v in got.items() if k not in ("status", "statusMessage")}
    aligned.update({k: recorded[k] for k in ("status", "statusMessage") if k in recorded})
    result = live["result"]
    if "task" in result:
        return {**live, "result": {**result, "task": aligned}}
    return {**live, "result": aligned}


def _handle(answer: JSON) -> JSONObject | None:
    result = answer.get("result") if isinstance(answer, dict) else None
    if not isinstance(result, dict):
        return None
    if result.get("resultType") == "task":
        return result
    task = result.get("task")
    return task if isinstance(task, dict) and "taskId" in task else None


class Polls:
    """One session's live tasks, as far as polling them goes: those already ``completed``,
    ``failed`` or ``cancelled`` live (a terminal status never changes), by their recorded id."""

    def __init__(self) -> None:
        self.ended: set[str] = set()

    def needless(self, inter: Interaction) -> bool:
        """Whether ``inter`` is an interim poll of a task that has already ended live: it is not
        sent (the live task stopped sooner than the recorded one; nothing is left to poll)."""
        return status_of(inter.response) == WORKING and _task_id(inter) in self.ended

    def follow(self, inter: Interaction, message: JSONObject, live: JSONObject, ask: Ask, until: float) -> JSONObject:
        """The live answer to compare with a milestone poll: ``live`` (the answer to ``message``,
        as sent), or while the live task still says ``working``, the answer to ``message`` sent
        again with a fresh id, until one does not or ``until`` (a ``time.monotonic()`` moment)
        passes. Any other answer is ``live`` itself."""
        if inter.method != POLL:
            return live
        polls = 0
        while milestone(inter) and status_of(live) == WORKING:
            gap = _gap(live)
            if until - time.monotonic() <= gap:
                break  # the last ``working`` answer is compared: the task did not get there in time
            time.sleep(gap)
            polls += 1
            again = {**message, "id": f"mcp-replay-poll-{inter.seq}-{polls}"}
            live = {**ask(again, until - time.monotonic()), "id": message.get("id")}  # as the recorded id's
        if status_of(live) in TERMINAL:
            self.ended.add(_task_id(inter))
        return live


def _task_id(inter: Interaction) -> str:
    params = inter.message.get("params")
    task_id = params.get("taskId") if isinstance(params, dict) else None
    return task_id if isinstance(task_id, str) else ""


def _gap(live: JSONObject) -> float:
    result = live.get("result")
    hint = None
    if isinstance(result, dict):
        hint = result.get("pollIntervalMs", result.get("pollInterval"))
    if isinstance(hint, bool) or not isinstance(hint, int | float):
        return 0.1
    return min(MAX_GAP, max(MIN_GAP, hint / 1000.0))
