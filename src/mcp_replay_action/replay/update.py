"""``replay --update`` (and the refresh flow): when a change is intentional, re-record the
responses that changed. ``replay.run`` replays; this module only rewrites.

A replay compares every live response with the recording; an update then writes the live
response in place of the recorded one for every interaction whose answer has a finding, and leaves
the rest of the cassette as it was: same lines in the same order, same ``seq``/``kind``/``message``,
only ``response`` and ``latency_ms`` new, and ``updated_at`` added to the header. What the server
sent besides its answers (progress, log messages, change notices, requests to the client) is
rewritten where a finding names it, by ``update_heard.py``.

Three rules keep an update from doing harm:

* a live response goes through the same redaction the replay compared it under (the user's rules
  plus what the header says ran at record time), so a secret redacted on disk stays redacted;
* a request that got no live response (a crash, a hang) keeps its recording: an update never
  erases what it could not replace;
* server-minted values (job ids, cursors) in a new response are written back as the values the
  later recorded requests quote, so the chain a replay threads through them stays intact.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace

from mcp_replay_action.cassette import atomic_write_text, dumps_over, save
from mcp_replay_action.cassette.header import utc_now
from mcp_replay_action.compare.carry import Carry
from mcp_replay_action.compare.correlate import ThreadRules
from mcp_replay_action.compare.notifications import part_at
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.model.results import CassetteResult, InteractionResult
from mcp_replay_action.redact import Redactor
from mcp_replay_action.replay.heard import PARTIAL_HEARING, LiveHeard


@dataclass(frozen=True)
class UpdateSummary:
    """What ``--update`` did to one cassette."""

    path: str
    updated: int  # interactions whose response was rewritten
    # interactions that differed but got no live response, left as recorded, and new requests to
    # the client, whose answer a replay cannot know (``update_heard.py``)
    kept: int
    asked: int = 0  # how many of ``kept`` are such requests to the client

    @property
    def written(self) -> bool:
        return self.updated > 0


def changed_seqs(result: CassetteResult) -> tuple[int, ...]:
    """The interactions whose response an update rewrites: every one with a finding about its
    answer (cosmetic ones too, so the next replay is clean) whose live response arrived. What the
    confirmation pass moved to ``noise`` is no finding: an answer whose only difference is noise
    keeps its bytes, and so does one whose only findings are about its notifications."""
    return tuple(
        r.seq for r in result.results if any(part_at(f.path) is None for f in r.findings) and not _no_answer(r)
    )


def _no_answer(result: InteractionResult) -> bool:
    """No live answer to write: none came, it was not sent, or it was too deep to read or redact
    (``replay/deep.py``): the line is kept as recorded, and counted as kept."""
    return result.status in ("missing", "skipped") or any(f.rule == "too-deep" for f in result.findings)


def update_cassette(
    cassette: Cassette,
    live_by_seq: Mapping[int, JSONObject],
    redactor: Redactor,
    *,
    seqs: Collection[int] | None = None,
    latency_ms: Mapping[int, float | None] | None = None,
    updated_at: str | None = None,
) -> Cassette:
    """A copy of ``cassette`` with the live responses of ``seqs`` (default: every seq in
    ``live_by_seq``) in place of the recorded ones, redacted by ``redactor``.

    ``live_by_seq`` holds unredacted live responses by request ``seq``; every one is used to learn
    which server-minted values changed, so the new responses quote the recorded values later
    requests send. Interactions without a live response are never touched. The header keeps every
    key and gains ``updated_at`` (UTC, ISO 8601) when anything changed. Pure: nothing is written.
    """
    wanted = set(live_by_seq) if seqs is None else {s for s in seqs if s in live_by_seq}
    redacted = _redacted(cassette, live_by_seq, redactor)
    back = _minted_back(cassette, redacted)
    interactions: list[Interaction] = []
    changed = 0
    for inter in cassette.interactions:
        if inter.kind != "request" or inter.seq not in wanted or inter.seq not in redacted:
            interactions.append(inter)
            continue
        response = back.apply(redacted[inter.seq])
        if isinstance(inter.response, dict) and "id" in inter.response:
            # The recorded id answers the recorded request, whatever id the replay sent.
            response = {**response, "id": inter.response["id"]}
        latency = (latency_ms or {}).get(inter.seq, inter.latency_ms)
        interactions.append(replace(inter, response=response, latency_ms=latency))
        changed += 1
    if not changed:
        return cassette
    return _stamped(cassette, interactions, updated_at)


def _stamped(cassette: Cassette, interactions: Iterable[Interaction], updated_at: str | None = None) -> Cassette:
    meta = {**cassette.meta, "updated_at": updated_at or utc_now()}
    return replace(cassette, meta=meta, interactions=tuple(interactions))


def _redacted(cassette: Cassette, live_by_seq: Mapping[int, JSONObject], redactor: Redactor) -> dict[int, JSONObject]:
    """The live answers of the cassette's requests, redacted."""
    by_seq = {i.seq for i in cassette.interactions if i.kind == "request"}
    return {seq: redactor.apply(live) for seq, live in live_by_seq.items() if seq in by_seq}


def _minted_back(cassette: Cassette, live_by_seq: Mapping[int, JSONObject]) -> Carry:
    """A Carry that turns live server-minted values back into the recorded ones later requests
    quote (the inverse of what a replay threads forward)."""
    forward = Carry(cassette.interactions, ThreadRules.from_meta(cassette.meta))
    for inter in cassette.interactions:
        live = live_by_seq.get(inter.seq)
        if inter.kind == "request" and live is not None and inter.response is not None:
            forward.learn(inter.response, live, inter.seq)
    back = Carry()
    back.mapping = {live: recorded for recorded, live in forward.mapping.items()}
    return back


def write_cassette(cassette: Cassette, original: Cassette | None = None) -> None:
    """Write a cassette back to its own path in its own format, atomically; a JSONL line whose
    interaction is the same as in ``original`` keeps its original text."""
    if cassette.source_format == "mcp-recorder-json":
        from mcp_replay_action.cassette.recorder_json import dumps_recorder_json, written_form

        # A file mcp-recorder wrote gains no keys of ours: it must stay a file mcp-recorder owns.
        atomic_write_text(cassette.path, dumps_recorder_json(cassette, written_form(cassette.path)))
    elif original is not None and original.path == cassette.path:
        atomic_write_text(cassette.path, dumps_over(cassette, original))
    else:
        save(cassette, cassette.path)


def rewrite(
    cassette: Cassette,
    result: CassetteResult,
    live_by_seq: Mapping[int, JSONObject],
    redactor: Redactor,
    heard: LiveHeard | None = None,
    compare: CompareOptions | None = None,
) -> tuple[Cassette, UpdateSummary]:
    """The rewritten cassette (not written yet) and what was done to it, from one replay's result
    (whose ``path`` the summary names), its unredacted live answers by request ``seq`` and what
    else the live server sent (``heard``, compared under the run's ``compare`` options)."""
    seqs = changed_seqs(result)
    latency = {r.seq: r.latency_ms for r in result.results}
    # An answer too deep to read or redact is no live answer: walking it would recurse too.
    refused = {r.seq for r in result.results if _no_answer(r)}
    lives = {seq: live for seq, live in live_by_seq.items() if seq not in refused}
    new = update_cassette(cassette, lives, redactor, seqs=seqs, latency_ms=latency)
    rewritten = {a.seq for a, b in zip(cassette.interactions, new.interactions, strict=True) if a is not b}
    kept = sum(1 for r in result.results if _no_answer(r))
    asked = 0  # new requests to the client, not written
    if heard is not None:
        from mcp_replay_action.replay.update_heard import update_heard

        backs: list[Carry] = []  # learned when a notification is first written: most updates write none

        def fit(message: JSONObject) -> JSONObject:
            if not backs:
                backs.append(_minted_back(cassette, _redacted(cassette, lives, redactor)))
            return backs[0].apply(redactor.apply(message))

        notes = update_heard(
            new.interactions,
            result.results,
            heard,
            fit,
            (compare or CompareOptions()).at(cassette.meta.get("recorded_at")),
            heard_all=cassette.meta.get("transport") not in PARTIAL_HEARING,
        )
        if notes.interactions != new.interactions:
            new = _stamped(new, notes.interactions, new.meta.get("updated_at"))
        rewritten |= notes.rows
        asked = notes.kept
    return new, UpdateSummary(path=result.path, updated=len(rewritten), kept=kept + asked, asked=asked)
