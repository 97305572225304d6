"""Replay: re-send a cassette's requests to a live server, answer what the server asks from the
cassette, compare every response with the recording, and grade the result.

This is where a cassette (files) meets a transport (servers). It sends exactly what was recorded,
in recorded order and in the recorded protocol era (or in the other one, ``--era``:
``translate.py``), except for values the live server minted
afresh (see ``carry.py``) and the JSON-RPC ids of server-to-client requests, which are answered
with the id the live server used.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from mcp_replay_action.cassette import load
from mcp_replay_action.cassette.jsonl import StreamedInteractions
from mcp_replay_action.compare.correlate import Correlations, Flow, ThreadRules
from mcp_replay_action.compare.durations import own_timing
from mcp_replay_action.compare.eras import comparable
from mcp_replay_action.compare.matchers import same_json, same_request, unchanged
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.errors import (
    EXIT_GATE,
    EXIT_OK,
    CassetteError,
    MessageTooDeep,
    MessageTooLarge,
    ReplayError,
    ServerError,
    ServerExited,
    ServerStartError,
    TransportTimeout,
)
from mcp_replay_action.grade.assemble import build_report
from mcp_replay_action.grade.coverage import Listings
from mcp_replay_action.grade.score import score
from mcp_replay_action.grade.verdict import judge, missing_finding, pass_into
from mcp_replay_action.host.gcpause import frozen, paused, thawing
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.model.results import (
    CassetteResult,
    Finding,
    InteractionResult,
    Report,
    ResultList,
)
from mcp_replay_action.plan import Plan
from mcp_replay_action.redact import Redactor, redactor_for
from mcp_replay_action.replay import advice, deep, effects, heard_again, streams, tasks
from mcp_replay_action.replay.answer import Answer
from mcp_replay_action.replay.era_check import era_mismatch, one_era_finding
from mcp_replay_action.replay.heard import Heard, LiveHeard
from mcp_replay_action.replay.measures import growth, slowdown
from mcp_replay_action.replay.redacted import redacted_result
from mcp_replay_action.replay.repeat import read_only_tools, side_effect_free
from mcp_replay_action.replay.standby import Standby
from mcp_replay_action.replay.translate import rounds, translate
from mcp_replay_action.transport import Transport, open_transport
from mcp_replay_action.transport.headline import headline
from mcp_replay_action.transport.process import usable_cpus
from mcp_replay_action.transport.session import ClientSession, diag_kwargs, error_answer
from mcp_replay_action.values.prepared import Prepared
from mcp_replay_action.values.size import answer_bytes
from mcp_replay_action.wire.protocol import detect_era, is_input_required

if TYPE_CHECKING:
    from mcp_replay_action.compare.carry import Carry
    from mcp_replay_action.compare.output_schema import OutputSchemas
    from mcp_replay_action.early import EarlyServer
    from mcp_replay_action.replay.update import UpdateSummary

# After this many requests in a row got no answer in time, the server is taken to be hung and the
# rest of the cassette is marked missing without waiting out each timeout.
HUNG_AFTER = 2

# Called with each recorded request and the live response it got, before redaction (the caller
# that keeps it, ``update.py``, redacts it itself before anything touches disk).
OnLive = Callable[[Interaction, JSONObject], None]


class _Session:
    """One cassette's replay against one live transport."""

    def __init__(
        self,
        cassette: Cassette,
        transport: Transport,
        options: Plan,
        on_live: OnLive | None = None,
        tick: Callable[[int], None] | None = None,
        keep: LiveHeard | None = None,
    ) -> None:
        # The session as sent: in the recorded era, or translated into ``options.era``.
        self.translation = translate(cassette, options.era)
        cassette = self.cassette = self.translation.cassette
        self.on_live = on_live
        self.tick = tick  # told how many interactions are done, before each (a live progress line)
        self.transport = transport
        self.options = options
        self.redactor = live_redactor(cassette.meta, options)
        self.compare_options = options.compare.at(cassette.meta.get("recorded_at"))
        # The compare engine (compare, normalize, carry, noise) is imported on first need, never
        # before the server is spawned: an answer that is its recording exactly needs none of it.
        # Redacted live answers by seq, for confirmation: only those that differ, so a long
        # passing replay does not hold every answer in memory.
        self.live: dict[int, JSONObject] = {}
        self.recorded: dict[int, Interaction] = {}  # their recorded interactions, beside them
        # The recorded answers a learned value was threaded into (``Carry.expected``), by seq.
        self.expected: dict[int, JSON] = {}
        self.confirming = False
        self.standby: Standby | None = None  # the confirming run's server (started ahead: ``_judge``)
        self.effects = effects.Effects()  # what the session may leave on the server (``advice.py``)
        self.ending = False
        # Set on a confirming run: it compares nothing and keeps only the answers to these seqs
        # (the ones the first run failed on), which is all the confirmation reads.
        self.gather: frozenset[int] | None = None
        self.hear_session = False  # ... and, when the session's notifications failed, runs to the end to hear them
        # A confirming run's redacted twins: the first run's live answers (redacted by the same
        # rules), which a deterministic server repeats exactly, so nothing of them is walked again.
        self.twins: dict[int, JSONObject] = {}
        self.carry: Carry | None = None  # made when an answer first differs (``_learn``)
        # What the recording proves was threaded, when already read (a confirming run reuses the
        # first run's: the same cassette is not read once more for it).
        self.correlations: Flow | Correlations | None = None
        # An answer that differs from its recording, learned from just before the next message is
        # sent: after the last one, nothing could quote what it minted, and a big last answer is
        # never walked.
        self.to_learn: Answer | None = None
        self.results = ResultList()
        # Read on the server's first request to us: most sessions have none, and a streamed
        # cassette is read from disk again on every pass over it.
        self.server_requests: list[Interaction] | None = None
        self.read_only_tools = read_only_tools(cassette.interactions) if options.repeat > 1 else frozenset()
        self.answered: set[int] = set()
        self.unsent = self.translation.unsent
        self.dead: Finding | None = None  # set once the server is gone or hung
        self.consecutive_timeouts = 0
        self.deadline = 0.0
        # What the server sends besides its answers, recorded and live (replay/heard.py; ``keep``: --update's).
        self.heard = Heard(
            self.compare_options, self.redactor.apply, cassette.meta, asks=not self.translation.across, keep=keep
        )
        self.heard_live: dict[int, list[JSONObject]] = {}  # the live ones of a failing request, for confirming
        self.client = ClientSession(
            transport, answer=self._recorded_answer, on_server_request=self.heard.asked, on_notification=self.heard.hear
        )
        # The last answer, received but not yet compared. Comparing it while the server works on
        # the next request overlaps our work with the server's (2 cores, and a lock-step replay
        # would leave one idle), unless latency is judged: then each answer is timed alone.
        self.unsettled: Answer | None = None
        self.received: JSONObject | None = None  # the live answer of the request in hand, once it came
        self.overlap = options.max_slowdown is None and options.repeat <= 1
        # The fast paths' thresholds and switch (``prepared.Limits``): with them off, nothing is
        # prepared for an answer (``_prepare``) and every plain path runs.
        self.limits = self.compare_options.limits
        # Reading a recorded answer ahead while the server works (``_await``) needs a CPU of its own.
        self.cpus_to_spare = usable_cpus() >= 2
        # The output schemas the live server declared in this session (made on the first live
        # ``tools/list`` that declares one: a server without any never loads the validator).
        self.polls = tasks.Polls()  # the live tasks that have ended (replay/tasks.py)
        self.streams: streams.Streams | None = None  # open subscriptions/listen streams (replay/streams.py)
        self.outputs: OutputSchemas | None = None  # the live session's declared output schemas
        self.recorded_outputs: OutputSchemas | None = None  # ... and the recording's

    def run(self) -> None:
        self.deadline = time.monotonic() + self.options.total_timeout
        first_request = True
        # A confirming run stops after the last answer it gathers: nothing later can change it.
        to_gather = len(self.gather) if self.gather is not None and not self.hear_session else -1
        tick = self.tick
        for done, inter in enumerate(self.effects.watch(self.cassette.interactions)):
            if to_gather == 0:
                break
            if tick is not None:
                tick(done)
            if inter.kind == "notification":
                self._notify(inter)
            elif inter.seq in self.unsent:  # a refused probe, or a request the other era lacks
                self._settle()  # results stay in recorded order
                self.results.append(replace(judge(inter, (), None), status="skipped"))
            elif inter.kind in ("server-notification", "server-request"):
                self.heard.recorded_line(inter)
            elif inter.kind == "request":
                self.received = None
                with deep.refused(self.results, inter, lambda: self.received, before=self._settle):
                    self._request(inter, first=first_request)
                first_request = False
                if self.gather is not None and inter.seq in self.gather:
                    to_gather -= 1
        if self.gather is not None and self.correlations is not None:
            self._learn()  # what the last gathered answer minted, to compare it with the first run's
        self.ending = True  # nothing is sent after the last answer: it is never learned from
        self._settle()
        if self.streams is not None and self.gather is None:
            for result in self.streams.judged(self.client, self.cassette.interactions, self.deadline):
                self.results.append(result)
        if self.dead is None and (self.gather is None or self.hear_session):
            self.heard.drain(self.client, self.deadline)  # a confirming run keeps them (``_confirmed``)
            heard = self.heard.session(self.carry) if self.gather is None else None
            if heard is not None:
                self.results.append(judge(heard[0], heard[1][0], {}, noise=heard[1][1]))

    def _learn(self) -> None:
        """Learn the minted values of the last answer that differed, before the next message is
        rewritten: it may quote one."""
        answer, self.to_learn = self.to_learn, None
        if answer is None:
            return
        recorded = answer.inter.response
        if self.carry is None:
            from mcp_replay_action.compare.carry import Carry

            # The recording's data flow (``correlate.py``), read when an answer first differs.
            rules = ThreadRules.from_meta(self.cassette.meta).merged(
                ThreadRules(self.options.thread, self.options.no_thread)
            )
            self.carry = Carry(self.correlations or self.cassette.interactions, rules)
        if not self.carry.may_learn_from(answer.inter.seq, answer.inter):
            # Nothing in it can be learned: its live answer is redacted and compared while the
            # server works on the next request (``_settle``), not before that request is sent.
            return
        try:
            live = self._redacted(answer)
            if recorded != live:  # else what differed was a secret, redacted alike on both sides
                self.carry.learn(recorded, live, answer.inter.seq)
        except RecursionError:
            pass  # too deep to learn from: its verdict says so (``_settle``)

    def _prepare(self, inter: Interaction) -> Prepared | None:
        """What is prepared for the answer to ``inter`` (``prepared.py``), built on as it is
        awaited: the long text it most likely holds is the recording's, or in a confirming run the
        first run's live answer's (a server that differed once most likely repeats itself). None
        with the fast paths off."""
        if not self.limits.fast:
            return None
        twin = self.twins.get(inter.seq)
        return Prepared(self.limits, twin if twin is not None else inter.response)

    def _await(self, request_id: JSON, wait: float, prepared: Prepared | None) -> JSONObject:
        """The live answer to the request ``request_id``; while the server is slow to give it,
        and a CPU is left for it to work on, the long JSON text of the recorded answer is read
        ahead into ``prepared`` (``_read_ahead``) for the comparison to come. A confirming run
        compares nothing. A long line the transport reads meanwhile is decoded beside the text
        ``prepared`` names (``Prepared.beside``)."""
        idle = None
        if prepared is not None and self.gather is None and self.cpus_to_spare:
            idle = functools.partial(self._read_ahead, prepared)
        try:
            return self.client.await_response(request_id, wait, idle, prepared)
        except BaseException:
            if prepared is not None:
                prepared.close()  # no answer to compare it with
            raise
        finally:
            if prepared is not None:
                prepared.steps = None  # what is not read ahead by now is not read

    def _read_ahead(self, prepared: Prepared) -> bool:
        """One step of the work done ahead for the awaited answer (``ahead_steps``); False once
        there is none (left)."""
        if prepared.steps is None:
            prepared.steps = ahead_steps(prepared, self.redactor)
        with paused():  # a step builds a run of records: no collection walks them half built
            return next(prepared.steps, False) is not False

    def _redacted(self, answer: Answer) -> JSONObject:
        """The live answer of ``answer``, redacted (once, when first needed)."""
        if not answer.redacted:
            self._check_output(answer)
            # The recording was redacted before it reached disk, so the parts of a live answer
            # equal to it hold nothing to redact: only what changed is walked.
            clean = self.twins.get(answer.inter.seq, answer.inter.response)
            live = answer.live
            if clean is None:
                answer.live = self.redactor.apply(live)
            else:
                answer.live = self.redactor.apply_beside(live, clean, answer.prepared)
            answer.redacted = True
        return answer.live

    def _notify(self, inter: Interaction) -> None:
        if self.dead is not None:
            return
        self._learn()
        if self.streams is not None:
            self.streams.sent(inter.message)  # a cancelled stream's window ends (replay/streams.py)
        try:
            self.transport.send(self.carry.apply(inter.message) if self.carry else inter.message)
        except ServerExited:
            pass  # the next request reports the exit with its diagnostics

    def _request(self, inter: Interaction, *, first: bool) -> None:
        if self.dead is not None:
            # Never sent: the server was already gone or hung. The finding says why.
            self._settle()
            self.results.append(replace(judge(inter, (self.dead,), None), status="skipped"))
            return
        if streams.is_listen(inter):  # its answer is a stream, compared at the end (replay/streams.py)
            self._listen(inter)
            return
        if self.polls.needless(inter):  # the live task ended sooner than the recorded one (replay/tasks.py)
            self._settle()
            self.results.append(replace(judge(inter, (), None), status="skipped"))
            return
        if not self.overlap:
            self._settle()
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            self.dead = missing_finding(f"the whole-cassette timeout ({self.options.total_timeout:g} s) ran out")
            self._missing(inter, self.dead)
            return
        wait = min(self.options.target.startup_timeout if first else self.options.timeout, remaining)
        self._learn()
        message, substitutions = self.carry.rewrite(inter.message) if self.carry else (inter.message, ())
        started = time.monotonic()
        prepared = self._prepare(inter)
        try:
            self.heard.sent(inter)
            self.transport.send(message)
            self._settle()  # the previous answer, compared while the server works on this one
            if self.carry is not None:
                self.carry.look_ahead(inter, prepared)  # what ``_learn`` will ask of this answer, if it differs
            live = self.received = self._await(message.get("id"), wait, prepared)
            heard = self.heard.answered()
            if self.translation.era == "stateless" and self.translation.across and is_input_required(live):
                # What the recording answered mid-call, answered as input_required rounds.
                live = rounds(live, message, self._recorded_answer, lambda m: self.client.request(m, wait))
            # A task still working live where the recording saw it done is polled on (replay/tasks.py).
            live = self.polls.follow(inter, message, live, self.client.request, started + wait)
            live = tasks.as_handled(inter, live)  # a task handle's status is timing (replay/tasks.py)
        except TransportTimeout:
            if first:
                raise ServerStartError(
                    f"the server never answered {inter.method} within {wait:g} s",
                    **diag_kwargs(self.transport),
                ) from None
            self.consecutive_timeouts += 1
            detail = f"no response within {wait:g} s"
            if self.client.stray_ids:
                detail += f" (the server answered other ids: {', '.join(map(repr, self.client.stray_ids[:3]))})"
                self.client.stray_ids.clear()
            finding = missing_finding(detail)
            if self.consecutive_timeouts >= HUNG_AFTER:
                self.dead = missing_finding(f"skipped: the server stopped answering ({detail})")
            self._missing(inter, finding)
            return
        except MessageTooDeep as exc:  # it came, and cannot be read: refused, the rest read on
            self._missing(inter, deep.finding(exc.depth))
            return
        except ServerExited as exc:
            if first:
                if isinstance(exc, ServerStartError):
                    raise  # already says how start-up failed
                if isinstance(exc, MessageTooLarge):
                    raise ServerStartError(f"answering {inter.method}, {exc}", **diag_kwargs(self.transport)) from None
                raise ServerStartError(
                    f"the server exited before answering {inter.method}", **diag_kwargs(self.transport)
                ) from exc
            diag = self.transport.diagnostics()
            tail = headline(str(diag.get("stderr_tail", "")))
            status = diag.get("exit_status")
            detail = "the server exited" + (f" with status {status}" if status is not None else "")
            if status is None or isinstance(exc, MessageTooLarge):
                # No process ended (an HTTP server answering 500, a broken stream), or one sent
                # more than the cap: the transport's own one-line account says what happened.
                detail = exc.one_line()
            if tail and "stderr:" not in detail:
                detail += f"; stderr: {tail}"
            if getattr(exc, "status", None) is not None and status is None:
                # An HTTP error status answers this one request; the server is still there and
                # the next request may well succeed.
                self._missing(inter, missing_finding(detail))
                return
            self.dead = missing_finding(detail)
            self._missing(inter, self.dead)
            return
        latency = (time.monotonic() - started) * 1000.0
        if self.options.repeat > 1 and not first and side_effect_free(message, self.read_only_tools):
            latency = self._median_latency(message, wait, latency)
        self.consecutive_timeouts = 0
        if self.on_live is not None:
            self.on_live(inter, live)
        if tasks.interim(inter, live) and self.gather is None:
            # A poll the recording saw say ``working``: how many a task needs is not behaviour.
            if prepared is not None:
                prepared.close()
            pass_into(
                self.results, inter, live, latency_ms=round(latency, 3), sent=message, substitutions=substitutions
            )
            return
        answer = Answer(inter, message, substitutions, live, latency, first, prepared, heard)
        recorded = inter.response
        if recorded is not None and recorded != live:
            self.to_learn = answer  # it may hold a value the server minted afresh (``_learn``)
        if self.gather is not None:
            if inter.seq in self.gather:
                self.live[inter.seq] = self._redacted(answer)
                self.heard_live[inter.seq] = self.heard.live_of(heard)
            answer.close()
            return
        self.unsettled = answer

    def _listen(self, inter: Interaction) -> None:
        self._learn()
        if self.streams is None:
            self.streams = streams.Streams()
            self.heard.on_stream = self.streams.hear  # a stream's events reach it (replay/heard.py)
        try:
            self.streams.open(inter, self.carry.apply(inter.message) if self.carry else inter.message, self.transport)
        except ServerExited:
            pass  # the next request reports the exit with its diagnostics

    def _settle(self) -> None:
        """Compare and judge the answer received last, if any."""
        answer, self.unsettled = self.unsettled, None
        if answer is not None:
            with deep.refused(self.results, answer.inter, lambda: answer.live):
                self._judge(answer)

    def _judge(self, answer: Answer) -> None:
        inter = answer.inter
        if inter.seq in self.translation.opened:  # sent to open the session; nothing recorded to compare
            answer.close()
            return
        if self.to_learn is answer and not self.ending:
            self._learn()  # settled before the next request was sent; its own progress may quote what it minted
        checked = self._check_output(answer)
        (heard, ignored), heard_live = self.heard.findings(inter.seq, answer.heard, self.carry)
        if heard:
            self.heard_live[inter.seq] = heard_live
        if (
            not heard
            and not ignored
            and not answer.substitutions
            and self.options.max_slowdown is None
            and not checked
            and inter.seq not in self.twins
            and same_json(inter.response, answer.live)
        ):
            # Its recording exactly (most answers): redacted beside the recording it is kept as it
            # is, compare finds nothing, and no latency is judged: it passes as it stands. Its size
            # is the recording's.
            answer.close()
            size = answer_bytes(inter.response)
            pass_into(
                self.results,
                inter,
                answer.live,
                latency_ms=round(answer.latency, 3),
                sent=answer.sent,
                recorded_bytes=size,
                live_bytes=size,
            )
            return
        live, recorded = self._redacted(answer), inter.response
        substitutions = answer.substitutions
        if self.carry:
            # Threaded values are expected to differ: the answer that minted one and every later
            # answer that echoes it are compared with the live value in place of the recorded
            # one, and what this answer minted is reported as threaded (never a finding, never
            # noise, never a reason to start the server again).
            recorded = self.carry.expected(recorded, inter.seq)
            if recorded is not inter.response:
                self.expected[inter.seq] = recorded
            substitutions = self.carry.minted_by(inter.seq, substitutions)
        if self.standby is not None and answer.prepared is not None and answer.prepared.text() and recorded != live:
            self.standby.warm()  # a long answer differs by more than its threaded values: a while to compare
        # The first answer's time is mostly the server starting: it says nothing about speed.
        slow = None if answer.first else slowdown(inter.latency_ms, answer.latency, self.options.max_slowdown)
        # An answer equal to its recording (the fast path above) cannot have grown.
        recorded_bytes = None if inter.response is None else answer_bytes(inter.response)
        live_bytes = answer_bytes(live)
        grown = growth(recorded_bytes, live_bytes, self.options.max_growth)
        try:
            if self.translation.across:  # answers of two eras, compared by meaning
                method = inter.method
                findings = _compared(
                    comparable(method, recorded), comparable(method, live), self.compare_options, answer.prepared
                )
            else:
                findings = _compared(recorded, live, self.compare_options, answer.prepared)
        finally:
            answer.close()
        findings = own_timing(findings, inter.latency_ms, answer.latency)  # the server timing itself
        if findings or heard:
            self.live[inter.seq] = live
            self.recorded[inter.seq] = inter
        if findings and inter.seq in self.heard.rules:  # calibrated (``Heard.rules``: the header's)
            rules = self.heard.rules[inter.seq]
            from mcp_replay_action.compare import noise

            findings, learned = noise.split(findings, rules, recorded, self.compare_options, live)
            ignored = (*ignored, *learned)
        if slow is not None:
            findings = (*findings, slow)
        if grown is not None:
            findings = (*findings, grown)
        findings = (*findings, *checked, *heard)
        if not (findings or ignored or substitutions):
            pass_into(
                self.results,
                inter,
                live,
                latency_ms=round(answer.latency, 3),
                sent=answer.sent,
                recorded_bytes=recorded_bytes,
                live_bytes=live_bytes,
            )
            return
        self.results.append(
            judge(
                inter,
                findings,
                live,
                latency_ms=round(answer.latency, 3),
                sent=answer.sent,
                substitutions=substitutions,
                noise=ignored,
                recorded_bytes=recorded_bytes,
                live_bytes=live_bytes,
            )
        )

    def _check_output(self, answer: Answer) -> tuple[Finding, ...]:
        """Check a live answer against what the live server declared (``output_schema.py``),
        once, before it is redacted (a placeholder would not match a schema): a ``tools/list``
        answer's output schemas are learned, a ``tools/call`` answer is checked against them.
        Answers are checked in recorded order (each is settled, or redacted to learn from, before
        the next one), so a call is checked against the listing the session made before it."""
        if answer.checked is not None:
            return answer.checked
        answer.checked = ()
        method = answer.inter.method
        recorded = answer.inter.response or {}
        if method == "tools/list":
            if self.outputs is None and (_declares_output_schema(answer.live) or _declares_output_schema(recorded)):
                from mcp_replay_action.compare.output_schema import OutputSchemas

                self.outputs, self.recorded_outputs = OutputSchemas(), OutputSchemas()
            if self.outputs is not None and self.recorded_outputs is not None:
                self.outputs.learn(answer.live)
                self.recorded_outputs.learn(recorded)
        elif method == "tools/call" and self.gather is None:
            result = answer.live.get("result")
            if self.outputs is not None or (isinstance(result, dict) and "structuredContent" in result):
                from mcp_replay_action.compare.output_schema import OutputSchemas, new_violations

                live = (self.outputs or OutputSchemas()).check(answer.sent, answer.live)
                if live:
                    # What the recording already showed, against the schema it was recorded with.
                    was = (self.recorded_outputs or OutputSchemas()).check(answer.inter.message, recorded)
                    live = new_violations(live, was)
                answer.checked = live
        return answer.checked

    def _median_latency(self, message: JSONObject, wait: float, latency: float) -> float:
        """The median latency of ``repeat`` sends of a request that changes nothing (the first
        send's answer is the one compared); a resend that fails leaves the latencies so far."""
        times = [latency]
        self.heard.window = []  # what the resends bring is not this request's: dropped
        for _ in range(self.options.repeat - 1):
            started = time.monotonic()
            try:
                self.client.request(message, wait)
            except (TransportTimeout, ServerExited):
                break
            times.append((time.monotonic() - started) * 1000.0)
        self.heard.answered()
        import statistics  # only with --repeat: it costs every replay's start-up otherwise

        return statistics.median(times)

    def _recorded_answer(self, msg: JSONObject) -> JSONObject:
        """Answer a server-to-client request with the recorded answer to the same question."""
        recorded = self._match_server_request(msg)
        if recorded is not None and recorded.response is not None:
            answer = dict(recorded.response)
            answer["id"] = msg["id"]
            return answer
        return error_answer(msg, f"mcp-replay: no recorded answer for {msg.get('method')}")

    def _match_server_request(self, msg: JSONObject) -> Interaction | None:
        method = msg.get("method")
        fallback: Interaction | None = None
        if self.server_requests is None:
            self.server_requests = [i for i in self.cassette.interactions if i.kind == "server-request"]
        for inter in self.server_requests:
            if inter.method != method:
                continue
            if inter.seq not in self.answered and same_request(inter.message, msg):
                self.answered.add(inter.seq)
                return inter
            if fallback is None or (fallback.seq in self.answered and inter.seq not in self.answered):
                fallback = inter
        if fallback is not None:
            self.answered.add(fallback.seq)
        return fallback

    def _missing(self, inter: Interaction, finding: Finding) -> None:
        self._settle()  # results stay in recorded order
        self.results.append(judge(inter, (finding,), None))


def ahead_steps(prepared: Prepared, redactor: Redactor) -> Iterator[None]:
    """The work done ahead for an awaited answer while the server works on it, one short step
    (about a millisecond) per item: reading the long text it most likely holds
    (``Prepared.text``) ahead (``narrow.ReadAhead``) the way narrowing it against the live one
    will read it, then learning what it holds of what ``redactor`` looks for
    (``Redactor.learn``), then importing the modules a live answer that differs needs. Nothing
    for an answer without such a text (nearly every answer)."""
    text = prepared.text()
    if text is None:
        return  # the compare engine is not imported for an answer without one
    from mcp_replay_action.compare.normalize import run_names
    from mcp_replay_action.values.narrow import ReadAhead

    ahead = prepared.ahead = ReadAhead(text, prepared.limits, run_names)
    while ahead.step():
        yield None
    # Then what the text holds of what redaction looks for: the live answer, which differs from
    # it in a few places, is redacted by looking only there.
    yield from redactor.learn(text, prepared)
    # Last, the modules only a live answer that differs needs (compare, and noise for the
    # confirming run): one that differs from this long recording is compared and confirmed
    # without importing them on the way (~3 ms).
    import mcp_replay_action.compare.engine  # noqa: F401
    import mcp_replay_action.compare.noise  # noqa: F401

    yield None


def _compared(
    recorded: JSONObject | None, live: JSONObject, options: CompareOptions, prepared: Prepared | None
) -> tuple[Finding, ...]:
    """``compare.compare(recorded, live, options, prepared)``, taking its fastest exit
    (``unchanged``) before importing it: a replay of an unchanged server never loads the compare
    engine, and an answer that differs is not asked again (``differences``)."""
    if unchanged(recorded, live):
        return ()
    from mcp_replay_action.compare.engine import differences

    return differences(recorded, live, options, prepared)


def _declares_output_schema(live: JSONObject) -> bool:
    result = live.get("result")
    tools = result.get("tools") if isinstance(result, dict) else None
    return isinstance(tools, list) and any(isinstance(t, dict) and "outputSchema" in t for t in tools)


def replay_cassette(
    cassette: Cassette,
    transport: Transport,
    options: Plan | None = None,
    *,
    on_live: OnLive | None = None,
    confirm: Callable[[], Transport] | None = None,
    start: Callable[[], None] | None = None,
    tick: Callable[[int], None] | None = None,
    keep: LiveHeard | None = None,
) -> CassetteResult:
    """Replay one cassette against a transport that has not been started yet (``start``, when
    given, is called in place of ``transport.start()``: ``early.py`` started it already), and
    close it after.

    ``confirm`` opens a fresh transport to the same server: when an interaction differs, the
    cassette is replayed once more through it and what differs between the two live runs is moved
    from the findings to ``noise`` (free when nothing differs).

    ``on_live`` sees every live response as it arrives, unredacted, with the recorded request it
    answers (``--update`` keeps them, and what else the server sent in ``keep``); results never
    carry live payloads. ``tick`` is told how many interactions are done before each one is
    replayed (a live progress line).

    Every text in the result that came from the server (finding messages and values, diffs, the
    stderr tail, the error) has passed the cassette's redactor: this is the one place it is
    applied, so no sink (console, files, GitHub) ever sees a secret the server printed.

    Raises ``ServerStartError`` (redacted the same way) when the server cannot be started or
    never answers its first request; every later failure (a crash, a hang, a wrong answer)
    becomes findings instead.
    """
    options = options or Plan()
    era = detect_era(cassette.interactions, cassette.meta)
    started = time.monotonic()
    session: _Session | None = None
    listings = Listings()  # what the live server lists, for coverage (``coverage.py``)
    standby = Standby(confirm, Standby.may_start_ahead(options.target)) if confirm is not None else None
    ran = False
    try:
        (start or transport.start)()
        # Set up while the server starts (a node server takes a few hundred ms to answer).
        session = _Session(cassette, transport, options, listings.hearing(on_live), tick, keep)
        session.confirming = standby is not None and options.confirm and advice.can_confirm(options.target)
        session.standby = standby if session.confirming else None
        session.run()
        ran = True
    except ServerError as exc:
        redactor = session.redactor if session is not None else live_redactor(cassette.meta, options)
        raise exc.redacted(lambda text: str(redactor.apply(text))) from None
    finally:
        transport.close()
        if standby is not None and not ran:
            standby.discard()  # the run raised: no confirming run will take it
    diag = transport.diagnostics()
    results: Sequence[InteractionResult] = session.results
    translation = session.translation
    sent = detect_era(session.cassette.interactions, cassette.meta) if translation.across else era
    mismatch = era_mismatch(sent, results, translated=translation.across)
    if mismatch:
        results = one_era_finding(results, sent, mismatch)
    elif standby is not None and session.confirming and session.results.differing():
        results = _confirmed(cassette, session, standby, options)
    if standby is not None:
        standby.discard()  # started ahead, and no confirming run took it
    result = CassetteResult(
        path=cassette.path,
        results=results if isinstance(results, ResultList) else ResultList(results),
        score=score(results),
        era=era.name,
        protocol_version=era.protocol_version,
        replayed_era=translation.era if translation.across else "",
        era_skipped=translation.listed(),
        duration_s=round(time.monotonic() - started, 3),
        error=mismatch or (session.dead.message if session.dead else ""),
        stderr_tail=str(diag.get("stderr_tail", ""))[-2000:] if session.dead else "",
        non_json_lines=int(diag.get("non_json_lines", 0) or 0),
        listed=listings.listed(),
        notes=advice.notes_for(results, options.target, confirm is not None and options.confirm, session.effects),
    )
    return redacted_result(result, session.redactor)


def _confirmed(cassette: Cassette, first: _Session, confirm: Standby, options: Plan) -> Sequence[InteractionResult]:
    """The first run's results with every difference that also differs in a second live run of the
    same build moved to ``noise``. A second run that cannot start leaves the results as they are."""
    from mcp_replay_action.compare import noise
    from mcp_replay_action.compare.carry import translated
    from mcp_replay_action.compare.engine import status_for

    transport, start = confirm.take()
    if isinstance(cassette.interactions, StreamedInteractions) and not first.translation.across:
        # Read from disk again on this pass: what the first run failed on, it still holds.
        cassette = replace(cassette, interactions=cassette.interactions.reusing(first.recorded.values()))
    second = _Session(cassette, transport, options)
    second.gather = first.results.differing()  # a cosmetic change too: a set's order in a description
    second.hear_session = first.heard.row in second.gather
    second.twins = first.live
    second.correlations = first.carry.flow or first.carry.correlations if first.carry is not None else None
    try:
        start()
        second.run()
    except ReplayError:
        return first.results
    finally:
        transport.close()
    out = ResultList()
    # The second start's notifications, its threaded values spelled as the first start's.
    spelled = functools.partial(heard_again.spelled, theirs=second.carry, mine=first.carry)
    for result in first.results:
        live_a, live_b = first.live.get(result.seq), second.live.get(result.seq)
        if result.seq in second.gather and result.seq == first.heard.row and second.dead is None:
            # The session's notifications, heard again to the end (``heard_again.py``).
            a, b = first.heard.live_heard(), spelled(second.heard.live_heard())
            kept, ignored = heard_again.unrepeated(
                result.findings, first.heard.expected_session(first.carry), a, b, first.compare_options
            )
        elif result.seq not in second.gather or live_a is None or live_b is None:
            out.append(result)
            continue
        else:
            # The second start minted its own values: spelled as the first run's, a threaded value
            # is never learned as noise (``Carry.translated``).
            live_b = translated(second.carry, first.carry, live_b)
            rules = noise.learn([live_a, live_b], first.compare_options, result.seq)
            recorded = first.expected.get(result.seq, first.recorded[result.seq].response)
            kept, ignored = noise.split(result.findings, rules, recorded, first.compare_options, live_a)
            heard = first.heard_live.get(result.seq), spelled(second.heard_live.get(result.seq))
            kept, varied = heard_again.unrepeated(
                kept, first.heard.differed.get(result.seq), *heard, first.compare_options
            )
            ignored = ignored + varied
        if ignored or kept != result.findings:  # noise moved out, or a document's first difference past it
            result = replace(result, findings=kept, noise=result.noise + ignored, status=status_for(kept))
        out.append(result)
    return out


@dataclass(frozen=True)
class Outcome:
    """What a run produced: the report (every server text redacted), what was rewritten (update
    and refresh modes), the exit code the CLI and the action exit with, and the ignore rules that
    matched nothing (each edge warns of them: a typo ignores nothing, silently, otherwise)."""

    report: Report
    updates: tuple[UpdateSummary, ...] = ()
    exit_code: int = EXIT_OK
    # (flag, rule) of each --ignore-path / --ignore-key that matched nothing in this run.
    unused_rules: tuple[tuple[str, str], ...] = ()

    @property
    def settled(self) -> bool:
        """True when a rewriting run rewrote every change (none kept for want of an answer)."""
        return bool(self.updates) and not any(u.kept for u in self.updates)


class Progress(Protocol):
    """Who hears of a run as it goes (the CLI's ``report.progress.ConsoleProgress``)."""

    def live(self, path: str, total: int) -> Callable[[int], None] | None:
        """A tick callback for one cassette of ``total`` interactions (None: none wanted)."""

    def finished(self, result: CassetteResult) -> None:
        """One cassette's result, as soon as it is known (shown path, redacted)."""


def run(plan: Plan, early: EarlyServer | None = None, progress: Progress | None = None) -> Outcome:
    """Replay every cassette of ``plan`` against a fresh server each, gate the report and, in
    update or refresh mode, rewrite each cassette's changed responses. ``early``: the first
    cassette's server, spawned already (``early.spawn_early``); stopped here if never used.
    ``progress`` hears of each cassette as it finishes (and, one cassette at a time, as it goes).

    Every cassette is validated before any server is spoken to (only the early one may have
    started), but only one is held in memory at a time in check mode: with several, each is read once to check it and again just before its
    replay. Nothing is written until every cassette has replayed, so a server that cannot start
    leaves every file as it was. Raises ``CassetteError`` for a bad cassette and
    ``ServerStartError`` for a server that cannot be used.
    """
    try:
        with thawing():  # the cassettes read are kept from the collector's walks until the end
            return _run(plan, early, progress)
    finally:
        if early is not None:
            early.discard()  # a server no replay took (a bad cassette) is stopped and reaped


def _run(plan: Plan, early: EarlyServer | None, progress: Progress | None) -> Outcome:
    cassettes: Iterable[Cassette]
    # A check-mode replay only iterates each cassette: a large one is streamed from disk.
    stream = not plan.rewrites
    if len(plan.paths) == 1:
        cassettes = [_load_checked(plan.paths[0], stream=stream)]
    else:
        for path in plan.paths:
            _load_checked(path, stream=stream)  # dropped at once: a glob is never all loaded
        cassettes = (_load_checked(path, stream=stream) for path in plan.paths)
    if plan.rewrites:
        from mcp_replay_action.replay.update import rewrite, write_cassette
    results: list[CassetteResult] = []
    rewritten: list[tuple[Cassette, Cassette, UpdateSummary]] = []
    if plan.jobs > 1 and len(plan.paths) > 1 and not plan.rewrites:
        results = list(_replay_in_parallel(plan, progress))
        cassettes = ()
    for cassette in cassettes:
        live_by_seq: dict[int, JSONObject] = {}
        heard = LiveHeard() if plan.rewrites else None
        # Only the first cassette's server may have been started early.
        transport, start = early.take() if early and not early.taken else (open_transport(plan.target), None)
        result = replay_cassette(
            cassette,
            transport,
            plan,
            on_live=keep_in(live_by_seq) if plan.rewrites else None,
            confirm=functools.partial(open_transport, plan.target) if plan.confirm else None,  # no noise rewritten
            start=start,
            tick=progress.live(plan.shown(cassette.path), len(cassette.interactions)) if progress else None,
            keep=heard,
        )
        result = replace(result, path=plan.shown(result.path))
        results.append(result)
        if progress is not None:
            progress.finished(result)
        if plan.rewrites:
            redactor = live_redactor(cassette.meta, plan)
            rewritten.append((cassette, *rewrite(cassette, result, live_by_seq, redactor, heard, plan.compare)))
    for old, new, summary in rewritten:
        if summary.updated:
            write_cassette(new, old)
    report = build_report(results, target=plan.target.describe(), policy=plan.gate)
    updates = tuple(summary for _, _, summary in rewritten)
    return Outcome(
        report=report,
        updates=updates,
        exit_code=_exit_code(plan, report, updates),
        unused_rules=unused_rules_in(plan),
    )


# What a worker of ``_replay_in_parallel`` replays with: set before the workers are forked, so
# they inherit it rather than receive it pickled.
_WORK: Plan | None = None


def _replay_in_parallel(plan: Plan, progress: Progress | None) -> tuple[CassetteResult, ...]:
    """Every cassette of ``plan`` replayed by ``plan.jobs`` worker processes, each cassette with
    its own server (so its own isolated home and setup run); results (shown paths) in the order of
    the paths, each told to ``progress`` as it finishes."""
    # Processes, not threads: comparing is CPU work under the GIL, and it is what should run
    # beside the servers. Fork, so the workers inherit _WORK; no thread of ours runs here.
    import concurrent.futures
    import multiprocessing

    global _WORK
    _WORK = plan
    try:
        context = multiprocessing.get_context("fork")
        with concurrent.futures.ProcessPoolExecutor(min(plan.jobs, len(plan.paths)), mp_context=context) as pool:
            futures = {pool.submit(_replay_one, path): i for i, path in enumerate(plan.paths)}
            results: list[CassetteResult | None] = [None] * len(plan.paths)
            for future in concurrent.futures.as_completed(futures):
                result = future.result()
                result = replace(result, path=plan.shown(result.path))
                results[futures[future]] = result
                if progress is not None:
                    progress.finished(result)
            assert all(r is not None for r in results)
            return tuple(r for r in results if r is not None)
    finally:
        _WORK = None


def _replay_one(path: str) -> CassetteResult:
    assert _WORK is not None, "only called in a worker forked by _replay_in_parallel"
    plan = _WORK
    return replay_cassette(
        _load_checked(path, stream=True),
        open_transport(plan.target),
        plan,
        confirm=functools.partial(open_transport, plan.target) if plan.confirm else None,
    )


def live_redactor(meta: Mapping[str, JSON], plan: Plan) -> Redactor:
    """The redactor of a cassette's live answers (header ``meta``) in a run of ``plan``: the
    built-in rules, the plan's (``--redact``, ``--redact-pattern``), the header's, and every
    value of the server's environment but the public ones (``redact.redactor_for``)."""
    base = Redactor(keys=plan.redact_keys, patterns=plan.redact_patterns, limits=plan.compare.limits)
    return redactor_for(meta, base, plan.target.env, plan.public_env)


def unused_rules_in(plan: Plan) -> tuple[tuple[str, str], ...]:
    """Every ignore rule of ``plan.compare`` that matches nothing in its cassettes' recordings
    (identical answers skip normalisation, so a rule that fits the recording is not unused): the
    cassettes are read a line at a time, and only until every rule has matched something."""
    options = plan.compare
    if not (options.ignore_paths or options.ignore_keys):
        return ()  # no rule to warn about, and no need to import the normaliser to say so
    from mcp_replay_action.compare.normalize import normalize, unused_rules

    for path in plan.paths:
        if not unused_rules(options):
            break
        for inter in load(path, stream=True).interactions:
            normalize(inter.response, options)
            if not unused_rules(options):
                break
    return tuple(unused_rules(options))


def _load_checked(path: str, *, stream: bool = False) -> Cassette:
    with frozen():  # what is read lives for the whole replay: no collection need walk it
        cassette = load(path, stream=stream)
    if not cassette.interactions:
        # Nothing replayed must not read as a perfect grade.
        raise CassetteError(cassette.path, None, "no interactions: nothing to replay (record a session into it)")
    return cassette


def _exit_code(plan: Plan, report: Report, updates: tuple[UpdateSummary, ...]) -> int:
    if report.gate.passed or plan.mode == "refresh":
        return EXIT_OK
    if plan.mode == "update" and not any(u.kept for u in updates):
        return EXIT_OK  # every change the gate failed on was rewritten
    return EXIT_GATE


def keep_in(into: dict[int, JSONObject]) -> OnLive:
    """An ``on_live`` that keeps each live answer in ``into``, by its interaction's seq."""

    def on_live(inter: Interaction, live: JSONObject) -> None:
        into[inter.seq] = live

    return on_live
