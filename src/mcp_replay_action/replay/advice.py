"""What a replay could not tell apart, and the step that would: one line each, kept on the
cassette's result (``CassetteResult.notes``) and shown by every sink.

Two things a replay cannot know by itself:

- whether a difference is noise, when the confirmation pass would meet a server in the state the
  first pass left (a ``--url`` server this replay did not start, with nothing to reset it): the
  pass is not run, and the note says what would make it possible (``--reset``);
- whether a finding is state an earlier run left behind (a memory file, a database), when nothing
  restores the recorded state before each start (``--setup``) and the session may have written
  any (``effects.py``: a call of a tool not annotated read-only, or a method of unknown effect); a
  session of reads alone leaves nothing for a later run to meet.
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp_replay_action.model.results import InteractionResult, weighted
from mcp_replay_action.replay.effects import Effects
from mcp_replay_action.transport import Target

UNCONFIRMED = (
    "noise could not be told apart from change: the confirmation pass was not run, because --url names a "
    "server this replay did not start and a second pass would meet the state the first one left; give "
    "--reset CMD to bring it back before each pass"
)
STATE = (
    "state left by an earlier run can explain these findings: if the server keeps state between runs (a "
    "file, a database), give --setup CMD to restore the recorded state before each start"
)

LEARNED_STATE = (
    "what the confirmation pass learned as noise may be state the first pass left (the session may "
    "have written, and its second start began where the first one ended): give --setup CMD to restore "
    "the recorded state before each start, or --isolate if the server keeps its state under HOME or TMPDIR"
)


def can_confirm(target: Target) -> bool:
    """Whether a confirmation pass against ``target`` meets a server as fresh as the first pass."""
    return target.fresh_each_start


def notes_for(results: Sequence[InteractionResult], target: Target, confirm: bool, effects: Effects) -> tuple[str, ...]:
    """The notes for a cassette's ``results`` replayed against ``target`` (``confirm``: a
    confirmation pass was asked for), read without building a result per interaction. Whether the
    session may have written is ``effects``', learned as the replay read the cassette; a run that
    stopped before its end is taken to have written (the note is a hint, never a gate)."""
    failed = found = learned = False
    for result, _ in weighted(results):
        failed = failed or result.status == "fail"
        found = found or bool(result.findings)
        learned = learned or bool(result.noise)
        if failed and found and learned:
            break
    notes = []
    if confirm and failed and not can_confirm(target):
        notes.append(UNCONFIRMED)
    stateless = target.setup or target.reset
    if (found or (learned and not target.isolate)) and not stateless:
        if not effects.complete or effects.may_leave_state():
            notes.append(STATE if found else LEARNED_STATE)
    return tuple(notes)
