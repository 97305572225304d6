"""Replay: re-send a cassette's requests to a live server, answer what the server asks from the
cassette, compare every response with the recording, and grade the result.

This is where a cassette (files) meets a transport (servers). It sends exactly what was recorded,
in recorded order and in the recorded protocol era, except for values the live server minted
afresh (see ``carry.py``) and the JSON-RPC ids of server-to-client requests, which are answered
with the id the live server used.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_replay_action import __version__
from mcp_replay_action.carry import Carry
from mcp_replay_action.cassette import Cassette, Interaction, load, subject_of
from mcp_replay_action.compare import CompareOptions, compare, loosely_equal, status_for
from mcp_replay_action.errors import CassetteError, ServerExited, ServerStartError, TransportTimeout
from mcp_replay_action.grade import GRADES, meets, score
from mcp_replay_action.jsonrpc import is_failure
from mcp_replay_action.protocol import detect_era
from mcp_replay_action.redact import PLACEHOLDER, Redactor
from mcp_replay_action.results import CassetteResult, Finding, InteractionResult, Report, Substitution
from mcp_replay_action.session import ClientSession, diag_kwargs, error_answer
from mcp_replay_action.transport import Transport
from mcp_replay_action.transport.process import last_line

# After this many requests in a row got no answer in time, the server is taken to be hung and the
# rest of the cassette is marked missing without waiting out each timeout.
HUNG_AFTER = 2

# Called with each recorded request and the live response it got, before redaction (the caller
# that keeps it, ``update.py``, redacts it itself before anything touches disk).
OnLive = Callable[[Interaction, dict[str, Any]], None]


@dataclass(frozen=True)
class ReplayOptions:
    """How to replay. Every wait is bounded."""

    timeout: float = 30.0  # seconds to wait for each response
    startup_timeout: float = 30.0  # seconds for the first (handshake or discover) response
    total_timeout: float = 900.0  # seconds for a whole cassette
    compare: CompareOptions = field(default_factory=CompareOptions)
    redactor: Redactor | None = None
    # The extra environment the server was started with (``--env``): where a variable the
    # cassette's header redacts by name may get its value, besides our own environment.
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Gate:
    """Whether a report passes the configured gate, and why not."""

    passed: bool
    reasons: tuple[str, ...]
    min_grade: str | None
    fail_on_regression: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "reasons": list(self.reasons),
            "min_grade": self.min_grade,
            "fail_on_regression": self.fail_on_regression,
        }


def evaluate_gate(report: Report, *, min_grade: str | None, fail_on_regression: bool) -> Gate:
    """Apply ``--min-grade`` and ``--fail-on-regression`` to a finished report."""
    reasons: list[str] = []
    if min_grade is not None:
        if min_grade not in GRADES:
            raise ValueError(f"unknown grade {min_grade!r}")
        if not meets(report.score.grade, min_grade):
            reasons.append(f"grade {report.score.grade} is below the minimum {min_grade}")
    if fail_on_regression and (report.failed or report.missing):
        reasons.append(f"{report.failed} regression(s) and {report.missing} missing response(s)")
    return Gate(not reasons, tuple(reasons), min_grade, fail_on_regression)


def redactor_for(cassette: Cassette, base: Redactor | None, env: Mapping[str, str] | None = None) -> Redactor | None:
    """The redactor live responses go through: the user's rules plus the rules the cassette's
    header says ran when it was recorded (keys, patterns, and the values of named environment
    variables, looked up in ``env`` first, then in ours), so a value redacted on disk is redacted
    live too and never reads as a change."""
    found = cassette.meta.get("redaction")
    rules: dict[str, Any] = found if isinstance(found, dict) else {}
    keys = [k for k in rules.get("keys") or () if isinstance(k, str)]
    # A pattern the header had to redact itself (it was a literal secret) cannot be rebuilt.
    patterns = [p for p in rules.get("patterns") or () if isinstance(p, str) and PLACEHOLDER not in p]
    for name in rules.get("env") or ():
        value = ((env or {}).get(name) or os.environ.get(name)) if isinstance(name, str) else None
        if value and len(value) >= 4:
            patterns.append(re.escape(value))
    if base is None and not (keys or patterns or rules.get("defaults")):
        return None
    if not (keys or patterns):
        return base or Redactor()
    defaults = base.defaults if base is not None else bool(rules.get("defaults", True))
    return Redactor(
        keys=[*(base.keys if base else ()), *keys],
        patterns=[*(base.patterns if base else ()), *patterns],
        defaults=defaults,
        env_values=base.env_values if base else None,
    )


class _Session:
    """One cassette's replay against one live transport."""

    def __init__(
        self, cassette: Cassette, transport: Transport, options: ReplayOptions, on_live: OnLive | None = None
    ) -> None:
        self.cassette = cassette
        self.on_live = on_live
        self.transport = transport
        self.options = options
        self.redactor = redactor_for(cassette, options.redactor, options.env)
        self.carry = Carry(i.message for i in cassette.interactions if i.kind in ("request", "notification"))
        self.results: list[InteractionResult] = []
        self.server_requests = [i for i in cassette.interactions if i.kind == "server-request"]
        self.answered: set[int] = set()
        self.dead: Finding | None = None  # set once the server is gone or hung
        self.consecutive_timeouts = 0
        self.deadline = 0.0
        self.client = ClientSession(transport, answer=self._recorded_answer)

    def run(self) -> None:
        self.deadline = time.monotonic() + self.options.total_timeout
        first_request = True
        for inter in self.cassette.interactions:
            if inter.kind == "notification":
                self._notify(inter)
            elif inter.kind == "request":
                self._request(inter, first=first_request)
                first_request = False

    def _notify(self, inter: Interaction) -> None:
        if self.dead is not None:
            return
        try:
            self.transport.send(self.carry.apply(inter.message))
        except ServerExited:
            pass  # the next request reports the exit with its diagnostics

    def _request(self, inter: Interaction, *, first: bool) -> None:
        if self.dead is not None:
            self._missing(inter, self.dead)
            return
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            self.dead = _missing_finding(f"the whole-cassette timeout ({self.options.total_timeout:g} s) ran out")
            self._missing(inter, self.dead)
            return
        wait = min(self.options.startup_timeout if first else self.options.timeout, remaining)
        message, substitutions = self.carry.rewrite(inter.message)
        started = time.monotonic()
        try:
            live = self.client.request(message, wait)
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
            finding = _missing_finding(detail)
            if self.consecutive_timeouts >= HUNG_AFTER:
                self.dead = _missing_finding(f"skipped: the server stopped answering ({detail})")
            self._missing(inter, finding)
            return
        except ServerExited as exc:
            if first:
                if isinstance(exc, ServerStartError):
                    raise  # already says how start-up failed
                raise ServerStartError(
                    f"the server exited before answering {inter.method}", **diag_kwargs(self.transport)
                ) from exc
            diag = self.transport.diagnostics()
            tail = last_line(str(diag.get("stderr_tail", "")))
            status = diag.get("exit_status")
            detail = "the server exited" + (f" with status {status}" if status is not None else "")
            if status is None:
                # No process ended (an HTTP server answering 500, a broken stream): the
                # transport's own one-line account says what happened.
                detail = exc.one_line()
            if tail and "stderr:" not in detail:
                detail += f"; stderr: {tail}"
            if getattr(exc, "status", None) is not None and status is None:
                # An HTTP error status answers this one request; the server is still there and
                # the next request may well succeed.
                self._missing(inter, _missing_finding(detail))
                return
            self.dead = _missing_finding(detail)
            self._missing(inter, self.dead)
            return
        latency = (time.monotonic() - started) * 1000.0
        self.consecutive_timeouts = 0
        if self.on_live is not None:
            self.on_live(inter, live)
        recorded = inter.response
        # The recording was redacted before it reached disk, so a live answer equal to it holds
        # nothing to redact (redaction is idempotent): most answers of a passing replay skip it.
        if self.redactor is not None and not (recorded is not None and loosely_equal(live, recorded)):
            live = self.redactor.apply(live)
        findings = compare(recorded, live, self.options.compare)
        if recorded is not None and recorded != live:
            self.carry.learn(recorded, live)
        self.results.append(
            judge(inter, findings, live, latency_ms=round(latency, 3), sent=message, substitutions=substitutions)
        )

    def _recorded_answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Answer a server-to-client request with the recorded answer to the same question."""
        recorded = self._match_server_request(msg)
        if recorded is not None and recorded.response is not None:
            answer = dict(recorded.response)
            answer["id"] = msg["id"]
            return answer
        return error_answer(msg, f"mcp-replay: no recorded answer for {msg.get('method')}")

    def _match_server_request(self, msg: dict[str, Any]) -> Interaction | None:
        method = msg.get("method")
        params = _without_meta(msg.get("params"))
        fallback: Interaction | None = None
        for inter in self.server_requests:
            if inter.method != method:
                continue
            if inter.seq not in self.answered and _without_meta(inter.message.get("params")) == params:
                self.answered.add(inter.seq)
                return inter
            if fallback is None or (fallback.seq in self.answered and inter.seq not in self.answered):
                fallback = inter
        if fallback is not None:
            self.answered.add(fallback.seq)
        return fallback

    def _missing(self, inter: Interaction, finding: Finding) -> None:
        self.results.append(judge(inter, (finding,), None))


def replay_cassette(
    cassette: Cassette,
    transport: Transport,
    options: ReplayOptions | None = None,
    *,
    on_live: OnLive | None = None,
) -> CassetteResult:
    """Replay one cassette against a transport that has not been started yet, and close it after.

    ``on_live`` sees every live response as it arrives, unredacted, with the recorded request it
    answers (``--update`` keeps them); results never carry live payloads.

    Raises ``ServerStartError`` when the server cannot be started or never answers its first
    request; every later failure (a crash, a hang, a wrong answer) becomes findings instead.
    """
    options = options or ReplayOptions()
    era = detect_era(cassette.interactions, cassette.meta)
    session = _Session(cassette, transport, options, on_live)
    started = time.monotonic()
    try:
        transport.start()
        session.run()
    finally:
        transport.close()
    diag = transport.diagnostics()
    return CassetteResult(
        path=cassette.path,
        results=tuple(session.results),
        score=score(session.results),
        era=era.name,
        protocol_version=era.protocol_version,
        duration_s=round(time.monotonic() - started, 3),
        stderr_tail=str(diag.get("stderr_tail", ""))[-2000:] if session.dead else "",
        non_json_lines=int(diag.get("non_json_lines", 0) or 0),
    )


def replay_paths(
    paths: Iterable[str],
    make_transport: Callable[[Cassette], Transport],
    options: ReplayOptions | None = None,
    *,
    target: str = "",
    min_grade: str | None = None,
    fail_on_regression: bool = False,
) -> Report:
    """Load and replay every cassette (a fresh transport, so a fresh server, for each one).

    Every cassette is validated before any server starts, but only one is held in memory at a
    time: with several, each is read once to check it and again just before its replay."""
    paths = list(paths)
    cassettes: Iterable[Cassette]
    if len(paths) == 1:
        cassettes = [_checked(load(paths[0]))]
    else:
        for path in paths:
            _checked(load(path))  # dropped at once: a glob of big cassettes is never all loaded
        cassettes = map(_load_checked, paths)
    results = tuple(replay_cassette(c, make_transport(c), options) for c in cassettes)
    return build_report(results, target=target, min_grade=min_grade, fail_on_regression=fail_on_regression)


def _checked(cassette: Cassette) -> Cassette:
    if not cassette.interactions:
        # Nothing replayed must not read as a perfect grade.
        raise CassetteError(cassette.path, None, "no interactions: nothing to replay (record a session into it)")
    return cassette


def _load_checked(path: str) -> Cassette:
    return _checked(load(path))


def build_report(
    results: Sequence[CassetteResult],
    *,
    target: str = "",
    min_grade: str | None = None,
    fail_on_regression: bool = False,
) -> Report:
    """Combine per-cassette results into one report, scored over every interaction, and gate it."""
    everything = [r for c in results for r in c.results]
    report = Report(cassettes=tuple(results), score=score(everything), target=target, tool_version=__version__)
    gate = evaluate_gate(report, min_grade=min_grade, fail_on_regression=fail_on_regression)
    return Report(
        cassettes=report.cassettes,
        score=report.score,
        target=target,
        tool_version=__version__,
        # With no gate configured there is nothing to report as passed or failed.
        gate=gate.to_json() if min_grade is not None or fail_on_regression else {},
    )


def judge(
    inter: Interaction,
    findings: tuple[Finding, ...],
    live: dict[str, Any] | None,
    *,
    latency_ms: float | None = None,
    sent: dict[str, Any] | None = None,
    substitutions: tuple[Substitution, ...] = (),
) -> InteractionResult:
    """The verdict on one recorded request, given what compare found (``live`` None: no answer).

    ``sent`` is the request as really sent (after value threading), which names the interaction;
    ``substitutions`` are the recorded values it replaced."""
    return InteractionResult(
        seq=inter.seq,
        line=inter.line,
        method=inter.method,
        name=inter.tool_name if sent is None else subject_of(sent),
        status=status_for(findings),
        findings=findings,
        latency_ms=latency_ms,
        recorded_error=is_failure(inter.response),
        live_error=None if live is None else is_failure(live),
        substitutions=substitutions,
    )


def _missing_finding(detail: str) -> Finding:
    return Finding(kind="missing-response", cls="breaking", path="$", message=detail[:300])


def _without_meta(params: Any) -> Any:
    if isinstance(params, dict) and "_meta" in params:
        return {k: v for k, v in params.items() if k != "_meta"}
    return params
