"""A human summary of one cassette, for ``mcp-replay inspect``.

:func:`summarize` reduces a :class:`~mcp_replay_action.model.cassette.Cassette` to plain facts (who was
recorded, in which protocol era, what was said, what was redacted); :func:`render_summary` turns
those facts into text. Nothing here talks to a server.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from mcp_replay_action.cassette.header import server_info
from mcp_replay_action.cassette.jsonl import cut_short_note
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.wire.protocol import LIFECYCLE_METHODS, detect_era, is_input_required


@dataclass(frozen=True)
class InteractionSummary:
    """One interaction as ``inspect`` lists it.

    ``outcome`` is ``ok``, ``error`` (a JSON-RPC error, ``error_code`` set), ``tool-error`` (a
    result with ``isError: true``), ``input-required`` (a stateless-era multi round-trip leg) or
    ``notification`` (nothing answers a notification).
    """

    seq: int
    line: int
    kind: str
    method: str
    name: str | None
    outcome: str
    error_code: int | None = None
    latency_ms: float | None = None
    http_status: int | None = None
    sse: bool = False


@dataclass(frozen=True)
class HttpLifecycle:
    """A bare HTTP exchange mcp-recorder logged (the SSE ``GET``, the closing ``DELETE``)."""

    method: str
    path: str
    status: int | None
    sse: bool
    latency_ms: float | None
    after: int  # how many client-side interactions came before it


@dataclass(frozen=True)
class Totals:
    """Interactions by kind; every interaction and HTTP lifecycle entry is counted exactly once.

    ``lifecycle`` holds the protocol's own traffic (``initialize``, ``notifications/initialized``,
    ``server/discover``, ``ping``) and mcp-recorder's bare HTTP lifecycle entries; ``requests`` and
    ``notifications`` are the rest of what the client sent. ``errors`` counts responses that are
    JSON-RPC errors or tool errors, whatever their kind.
    """

    requests: int = 0
    notifications: int = 0
    server_requests: int = 0
    server_notifications: int = 0
    lifecycle: int = 0
    errors: int = 0


@dataclass(frozen=True)
class CassetteSummary:
    """Everything ``mcp-replay inspect`` shows about a cassette."""

    path: str
    source_format: str
    recorded_at: str | None
    server_name: str | None
    server_version: str | None
    protocol_version: str | None
    era: str | None
    transport: str | None
    target: str | None
    tool_version: str | None
    interactions: tuple[InteractionSummary, ...]
    totals: Totals
    redaction: tuple[str, ...]
    http_lifecycle: tuple[HttpLifecycle, ...] = ()
    noise: tuple[str, ...] = ()  # calibrated noise rules, one line each (``calibrate``)
    threading: tuple[str, ...] = ()  # declared threading rules (``--thread``/``--no-thread``)
    cut_short: int = 0  # a last line left out, cut short (``Cassette.cut_short``)


def summarize(cassette: Cassette) -> CassetteSummary:
    """The facts ``inspect`` shows, read from the header and the interactions."""
    meta = cassette.meta or {}
    era = detect_era(cassette.interactions, meta)
    name, version = _server_identity(cassette)
    items = tuple(_summarize_one(i) for i in cassette.interactions)
    return CassetteSummary(
        path=cassette.path,
        source_format=cassette.source_format,
        recorded_at=_str_or_none(meta.get("recorded_at")),
        server_name=name,
        server_version=version,
        protocol_version=_str_or_none(meta.get("protocol_version")) or era.protocol_version or None,
        era=_str_or_none(meta.get("era")) or era.name or None,
        transport=_str_or_none(meta.get("transport")) or ("stdio" if meta.get("server") else None),
        target=_target(meta),
        tool_version=_str_or_none(meta.get("tool_version")),
        interactions=items,
        totals=_totals(cassette, items),
        redaction=_redaction_rules(meta.get("redaction")),
        http_lifecycle=_http_lifecycle(meta.get("http_lifecycle")),
        noise=_noise_rules(meta),
        threading=_threading_rules(meta),
        cut_short=cassette.cut_short,
    )


def _threading_rules(meta: JSON) -> tuple[str, ...]:
    """The header's declared threading rules, one line each (``--thread KEY``, ``--no-thread PATH``)."""
    from mcp_replay_action.compare.correlate import ThreadRules

    rules = ThreadRules.from_meta(meta if isinstance(meta, dict) else None)
    return (*(f"--thread {r}" for r in rules.thread), *(f"--no-thread {r}" for r in rules.no_thread))


def _noise_rules(meta: JSON) -> tuple[str, ...]:
    """The header's calibrated noise rules (``calibrate``), one short line each."""
    from mcp_replay_action.compare.noise import rules_by_seq

    lines = []
    for seq, rules in sorted(rules_by_seq(meta).items()):
        for rule in rules:
            line = f"#{seq} {rule.path}"
            if rule.pattern is not None:
                line += f"  text /{rule.pattern[:80]}/"
            if rule.evidence:
                line += "  seen: " + ", ".join(repr(e[:30]) for e in rule.evidence[:4])
            lines.append(line)
    return tuple(lines)


def _http_lifecycle(entries: JSON) -> tuple[HttpLifecycle, ...]:
    if not isinstance(entries, list):
        return ()
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        status = entry.get("response_status")
        latency = entry.get("latency_ms")
        position = entry.get("position")
        out.append(
            HttpLifecycle(
                method=str(entry.get("http_method") or "?"),
                path=str(entry.get("http_path") or ""),
                status=status if isinstance(status, int) else None,
                sse=bool(entry.get("response_is_sse")),
                latency_ms=latency if isinstance(latency, (int, float)) else None,
                after=position if isinstance(position, int) else 0,
            )
        )
    return tuple(out)


def _str_or_none(value: JSON) -> str | None:
    return str(value) if value not in (None, "") else None


def _server_identity(cassette: Cassette) -> tuple[str | None, str | None]:
    """serverInfo from the header, else from the initialize result or a stateless result's _meta."""
    info = cassette.meta.get("server_info")
    if not isinstance(info, dict):
        info = server_info(cassette.interactions)
    if not info:
        return None, None
    return _str_or_none(info.get("name")), _str_or_none(info.get("version"))


def _target(meta: JSONObject) -> str | None:
    server = meta.get("server")
    command = None
    if isinstance(server, list) and server:
        command = shlex.join(str(part) for part in server)
    elif isinstance(server, str) and server:
        command = server
    url = _str_or_none(meta.get("url"))
    if url and command:
        return f"{url} (started by: {command})"
    return url or command


def _summarize_one(inter: Interaction) -> InteractionSummary:
    transport = inter.transport or {}
    status = transport.get("http_status")
    if inter.kind in ("notification", "server-notification"):
        outcome, code = "notification", None
    else:
        outcome, code = _outcome(inter.response)
    return InteractionSummary(
        seq=inter.seq,
        line=inter.line,
        kind=inter.kind,
        method=inter.method,
        name=inter.tool_name,
        outcome=outcome,
        error_code=code,
        latency_ms=inter.latency_ms,
        http_status=status if isinstance(status, int) else None,
        sse=bool(transport.get("sse")),
    )


def _outcome(response: JSONObject | None) -> tuple[str, int | None]:
    if not isinstance(response, dict):
        return "no-response", None
    error = response.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        return "error", code if isinstance(code, int) else None
    if is_input_required(response):
        return "input-required", None
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return "tool-error", None
    return "ok", None


def _totals(cassette: Cassette, items: tuple[InteractionSummary, ...]) -> Totals:
    counts = {"request": 0, "notification": 0, "server-request": 0, "server-notification": 0}
    lifecycle = 0
    for item in items:
        if item.kind in ("request", "notification") and item.method in LIFECYCLE_METHODS:
            lifecycle += 1
        else:
            counts[item.kind] += 1
    lifecycle += len(_http_lifecycle(cassette.meta.get("http_lifecycle")))
    return Totals(
        requests=counts["request"],
        notifications=counts["notification"],
        server_requests=counts["server-request"],
        server_notifications=counts["server-notification"],
        lifecycle=lifecycle,
        errors=sum(1 for item in items if item.outcome in ("error", "tool-error")),
    )


def _redaction_rules(rules: JSON) -> tuple[str, ...]:
    """The header's redaction record as one short line per rule family (``keys: a, b``)."""
    if not isinstance(rules, dict):
        return ()
    out: list[str] = []
    for family, value in rules.items():
        if family == "placeholder" or value in (None, False, [], {}, ""):
            continue
        if value is True:
            out.append(str(family))
        elif isinstance(value, (list, tuple)):
            out.append(f"{family}: {', '.join(str(v) for v in value)}")
        elif isinstance(value, dict):
            inner = ", ".join(f"{k}={v}" for k, v in value.items())
            out.append(f"{family}: {inner}")
        else:
            out.append(f"{family}: {value}")
    return tuple(out)


# --------------------------------------------------------------------------- rendering


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _printable(text: str, limit: int = 80) -> str:
    """Server-chosen text for one line of output: no control characters, bounded length."""
    clean = "".join(ch if ch.isprintable() else " " for ch in text)
    return clean if len(clean) <= limit else clean[: limit - 3] + "..."


def interaction_line(item: InteractionSummary) -> str:
    """``#3 line 5  tools/call [add] -> ok (7 ms)``: one interaction, one line."""
    label = _printable(item.method or "?")
    if item.name:
        label += f" [{_printable(item.name)}]"
    where = f"#{item.seq}" + (f" line {item.line}" if item.line else "")
    if item.kind.startswith("server-"):
        label = f"server: {label}"
    if item.outcome == "notification":
        outcome = ""
    elif item.outcome == "error":
        outcome = "error" + (f" {item.error_code}" if item.error_code is not None else "")
    else:
        outcome = item.outcome
    if item.kind == "server-request" and item.outcome != "no-response":
        outcome = f"answered {outcome}"
    extras = ["notification"] if item.outcome == "notification" else []
    if item.http_status is not None or item.sse:
        extras.append(" ".join(p for p in (str(item.http_status or ""), "SSE" if item.sse else "") if p))
    if item.latency_ms is not None:
        extras.append(f"{round(item.latency_ms, 1):g} ms")
    tail = f" ({', '.join(extras)})" if extras else ""
    arrow = "" if item.outcome == "notification" else " -> "
    return f"{where}  {label}{arrow}{outcome}{tail}"


def lifecycle_line(entry: HttpLifecycle) -> str:
    """``GET /mcp -> 200 SSE (40 ms)``: one of mcp-recorder's bare HTTP exchanges."""
    status = " ".join(p for p in (str(entry.status or ""), "SSE" if entry.sse else "") if p) or "?"
    latency = f" ({round(entry.latency_ms, 1):g} ms)" if entry.latency_ms is not None else ""
    return f"{_printable(entry.method)} {_printable(entry.path)} -> {status}{latency}"


def render_summary(summary: CassetteSummary) -> str:
    """The text ``mcp-replay inspect`` prints."""
    fmt = "mcp-recorder JSON" if summary.source_format == "mcp-recorder-json" else "mcp-replay JSONL"
    server = " ".join(p for p in (summary.server_name, summary.server_version and f"v{summary.server_version}") if p)
    protocol = summary.protocol_version or "unknown"
    if summary.era:
        protocol += f" ({summary.era} era)"
    lines = [
        f"{summary.path or '<cassette>'}  [{fmt}]",
        f"  Recorded:  {summary.recorded_at or 'unknown'}",
        f"  Server:    {server or 'unknown'}",
        f"  Protocol:  {protocol}",
        f"  Transport: {summary.transport or 'unknown'}",
        f"  Target:    {summary.target or 'unknown'}",
    ]
    if summary.tool_version:
        lines.append(f"  Recorder:  mcp-replay {summary.tool_version}")
    lines.append("")
    lines.append(f"  Interactions ({len(summary.interactions)}):")
    lines.extend(f"    {interaction_line(item)}" for item in summary.interactions)
    if not summary.interactions:
        lines.append("    (none)")
    if summary.cut_short:
        lines.append(f"    {cut_short_note(summary.path, summary.cut_short)}")
    if summary.http_lifecycle:
        lines.append("")
        lines.append(f"  HTTP lifecycle ({len(summary.http_lifecycle)}):")
        lines.extend(f"    {lifecycle_line(entry)}" for entry in summary.http_lifecycle)
    t = summary.totals
    parts = [
        _plural(t.requests, "request"),
        _plural(t.notifications, "notification"),
        _plural(t.server_requests, "server request"),
        _plural(t.server_notifications, "server notification"),
        f"{t.lifecycle} lifecycle",
    ]
    lines.append("")
    lines.append(f"  Summary: {', '.join(parts)}; {_plural(t.errors, 'error')}")
    if summary.redaction:
        lines.append("  Redaction:")
        lines.extend(f"    {rule}" for rule in summary.redaction)
    else:
        lines.append("  Redaction: none recorded")
    if summary.noise:
        lines.append("  Noise (calibrated: reported, never gating; remove with calibrate --clear):")
        lines.extend(f"    {rule}" for rule in summary.noise)
    if summary.threading:
        lines.append("  Threading (declared, beside what the data flow proves; see docs/threading.md):")
        lines.extend(f"    {rule}" for rule in summary.threading)
    return "\n".join(lines)
