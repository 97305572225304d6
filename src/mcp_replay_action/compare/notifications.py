"""What the server sends besides its answers, compared by meaning, never by timing.

A tool call may be accompanied by progress notifications, log messages
(``notifications/message``), change notices (``notifications/*/list_changed``,
``notifications/resources/updated``) and requests to the client (sampling, elicitation, roots).
The recording keeps them as ``server-notification`` and ``server-request`` lines after the request
they came with; ``replay/heard.py`` gathers the live ones the same way. Each kind is compared for
what a client can tell:

- **progress** (``notifications/progress``): how many arrived (when the recorded ones went up in
  equal steps: uneven steps are sent as time allows, and their count is timing), the last one's
  ``progress``, ``total`` and ``message``, and whether it still reaches its ``total``
  (``finished``); never when they came.
- **log messages**: as a sequence of (level, data), data masked like any text (times, UUIDs),
  lined up with ``difflib`` so one message added does not shift every later one into a change.
- **change notices and any other notification**: by presence per method (a server may coalesce
  two ``list_changed`` into one; a client refetches once either way).
- **requests to the client**: as a sequence of methods, each one's params masked and compared.

Progress is compared per request (it names its request); the rest over the whole session, in
order (``replay/heard.py`` says why).
Findings name their place as ``$.notifications.progress``, ``$.notifications.message[2]``,
``$.notifications[method=...]`` and ``$.server_requests[method=...]``, and their rule from the class
table (``classes.py``).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

from mcp_replay_action.compare.classes import finding
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.model import JSONObject
from mcp_replay_action.model.results import Finding
from mcp_replay_action.values.paths import ident_segment, index_segment

PROGRESS = "notifications/progress"
LOG = "notifications/message"
# RFC 5424's severities, as MCP names them: from ``warning`` up, a log message says something went wrong.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
WARNING = LEVELS.index("warning")
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"  # a stream's event: replay/streams.py compares it
# Sent as a background task moves on, whenever that is: how many land in which request's window is
# timing. The task's outcome is compared where it is polled (replay/tasks.py).
TIMED = frozenset({"notifications/tasks/status"})

_NOTES = "$.notifications"
LOG_AT = _NOTES + ".message["  # a log message's finding path, up to its index in the recording
_Opcode = tuple[str, int, int, int, int]  # difflib's: what to do, and the ranges on each side
_ASKED = "$.server_requests"


def part_at(path: str) -> str | None:
    """The part (``part_of``'s names) a finding at ``path`` is about; None for one about an answer."""
    if path.startswith(_ASKED):
        return "asked"
    for prefix, part in ((".progress", "progress"), (".message", "log"), ("[", "other")):
        if path.startswith(_NOTES + prefix):
            return part
    return None


def ignored(method: object, ignore: Iterable[str]) -> bool:
    """Whether ``--ignore-notifications`` names ``method`` (``progress`` is short for
    ``notifications/progress``)."""
    return any(method in (m, f"notifications/{m}") for m in ignore)


def comparable(messages: Iterable[JSONObject], ignore: Iterable[str] = ()) -> list[JSONObject]:
    """The messages compared here: not ignored, not a subscription stream's event, not timing."""
    ignore = tuple(ignore)
    return [
        m
        for m in messages
        if m.get("method") not in TIMED and not ignored(m.get("method"), ignore) and not _on_stream(m)
    ]


def compare_heard(
    recorded: Sequence[JSONObject], live: Sequence[JSONObject], options: CompareOptions | None = None
) -> tuple[Finding, ...]:
    """The differences between what the server sent besides its answers (a request's progress,
    or a session's other messages), recorded and live (both already ``comparable``), worst first."""
    options = options or CompareOptions()
    if recorded == live:
        return ()
    rec, now = parted(recorded), parted(live)
    out = [
        *_progress(rec["progress"], now["progress"], options),
        *_logs(rec["log"], now["log"], options),
        *_presence(rec["other"], now["other"]),
        *_asked(rec["asked"], now["asked"], options),
    ]
    return tuple(sorted(out, key=lambda f: ("breaking", "additive", "cosmetic").index(f.cls)))


def _on_stream(message: JSONObject) -> bool:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and SUBSCRIPTION_ID in meta


def part_of(message: JSONObject) -> str:
    """Which part a message is compared in: ``progress``, ``log``, ``other`` (by presence per
    method) or ``asked`` (a request to the client)."""
    method = message.get("method")
    return "asked" if "id" in message else "progress" if method == PROGRESS else "log" if method == LOG else "other"


def parted(messages: Sequence[JSONObject]) -> dict[str, list[JSONObject]]:
    parts: dict[str, list[JSONObject]] = {"progress": [], "log": [], "other": [], "asked": []}
    for m in messages:
        parts[part_of(m)].append(m)
    return parts


def params_of(message: JSONObject) -> dict[str, Any]:
    params = message.get("params")
    return params if isinstance(params, dict) else {}


def masked(value: Any, options: CompareOptions | None) -> str:
    """``value`` masked as any answer is (times, UUIDs, addresses), written canonically; ``_meta``
    (a request's or a progress token's bookkeeping) left out."""
    # Imported here: the replay reads this module's names before its server has started, and the
    # normaliser is only needed once something was heard (``engine.py`` imports it no sooner).
    from mcp_replay_action.compare.normalize import canonical, normalize

    if isinstance(value, dict):
        value = {k: v for k, v in value.items() if k != "_meta"}
    return canonical(normalize(value, options or CompareOptions()))


# -- progress -------------------------------------------------------------------------------------


def _progress(rec: list[JSONObject], now: list[JSONObject], options: CompareOptions) -> list[Finding]:
    path = _NOTES + ".progress"
    if rec and not now:
        said = f"progress notifications stopped: recorded {len(rec)}, live none"
        return [finding("progress-dropped", "structure-change", path, said, before=len(rec), after=0)]
    if now and not rec:
        said = f"progress notifications appeared: {len(now)} where the recording has none"
        return [finding("progress-added", "structure-change", path, said, before=0, after=len(now))]
    if not rec:
        return []
    out: list[Finding] = []
    if len(rec) != len(now) and _stepwise(rec):
        said = f"progress notifications: recorded {len(rec)}, live {len(now)}"
        out.append(finding("progress-changed", "structure-change", path, said, before=len(rec), after=len(now)))
    last_rec, last_now = params_of(rec[-1]), params_of(now[-1])
    keys: tuple[str, ...] = ("progress", "total")
    if _reached(last_rec) and _reached(last_now) is False:
        # Said without the live values: a server that reports progress as time allows (every
        # 100 ms, say) ends each start at another step and count, and a confirmation pass learns
        # those as noise; that no start reaches the total any more is the same on every start.
        said = (
            "progress no longer reaches its total: the recording's last notification was "
            f"{json.dumps(last_rec.get('progress'))} of {json.dumps(last_rec.get('total'))}"
        )
        out.append(finding("progress-unfinished", "value-change", f"{path}.finished", said, before=True, after=False))
        keys = ("total",)
    for key in keys:
        was, new = last_rec.get(key), last_now.get(key)
        if was != new:
            said = f"the last progress notification's {key}: {json.dumps(was)} -> {json.dumps(new)}"
            out.append(finding("progress-changed", "value-change", f"{path}.{key}", said, before=was, after=new))
    was_text, new_text = last_rec.get("message"), last_now.get("message")
    if masked(was_text, options) != masked(new_text, options):
        said = f"the last progress message: {json.dumps(was_text)} -> {json.dumps(new_text)}"
        out.append(
            finding("progress-text-changed", "value-change", f"{path}.message", said, before=was_text, after=new_text)
        )
    return out


def _stepwise(messages: list[JSONObject]) -> bool:
    """Whether recorded progress went up in equal steps (1, 2, 3 of 3; 25, 50, 75, 100): a server
    that reports each step, whose count is part of what it says. Steps of uneven size are a server
    sending progress as time allows (PyPI's jcodemunch-mcp: at most every 100 ms), whose count is
    timing: 45 recorded, 37 to 56 live over 5 unchanged replays, each a second start to learn it."""
    values: list[float] = []
    for message in messages:
        value = params_of(message).get("progress")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return True
        values.append(value)
    steps = [b - a for a, b in zip(values, values[1:], strict=False)]
    return all(math.isclose(step, steps[0], rel_tol=1e-9, abs_tol=1e-12) for step in steps)


def _reached(params: dict[str, Any]) -> bool | None:
    """Whether a progress notification says the work is done (``progress`` at its ``total``);
    None when it names no total."""
    progress, total = params.get("progress"), params.get("total")
    numbers = all(type(v) in (int, float) for v in (progress, total))
    return progress >= total if numbers else None  # type: ignore[operator]


# -- log messages -----------------------------------------------------------------------------------


def _rank(message: JSONObject) -> int:
    level = params_of(message).get("level")
    return LEVELS.index(level) if level in LEVELS else -1


def log_key(message: JSONObject, options: CompareOptions) -> str:
    """What a log message is compared by: its level, logger and masked data."""
    params = params_of(message)
    return json.dumps([params.get("level"), params.get("logger"), masked(params.get("data"), options)])


def _aligned(rec: list[JSONObject], now: list[JSONObject], options: CompareOptions) -> Sequence[_Opcode]:
    """The recorded and live log messages lined up by what they are compared by (``log_key``):
    ``difflib``'s opcodes, so one message added does not shift every later one into a change."""
    a, b = [log_key(m, options) for m in rec], [log_key(m, options) for m in now]
    if a == b:
        return [("equal", 0, len(a), 0, len(b))] if a else []
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _logs(rec: list[JSONObject], now: list[JSONObject], options: CompareOptions) -> list[Finding]:
    out: list[Finding] = []
    for op, i1, i2, j1, j2 in _aligned(rec, now, options):
        if op == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out.append(_log_changed(rec[i1 + k], now[j1 + k], i1 + k))
        for i in range(i1 + pairs, i2):
            said = f"log message removed: {_shown(rec[i])}"
            out.append(
                finding("log-changed", "structure-change", _log_path(i), said, before=params_of(rec[i]), after=None)
            )
        for j in range(j1 + pairs, j2):
            rule = "log-level-raised" if _rank(now[j]) >= WARNING else "log-changed"
            said = f"log message added: {_shown(now[j])}"
            out.append(
                finding(rule, "structure-change", _log_path(i1 + pairs), said, before=None, after=params_of(now[j]))
            )
    return out


def _log_changed(was: JSONObject, now: JSONObject, at: int) -> Finding:
    raised = _rank(now) >= WARNING and _rank(now) > _rank(was)
    said = f"log message changed: {_shown(was)} -> {_shown(now)}"
    rule = "log-level-raised" if raised else "log-changed"
    return finding(rule, "value-change", _log_path(at), said, before=params_of(was), after=params_of(now))


def _log_path(i: int) -> str:
    return _NOTES + ".message" + index_segment(i)


def compared_at(
    found: Finding, recorded: Sequence[JSONObject], live: Sequence[JSONObject], options: CompareOptions | None = None
) -> tuple[JSONObject, JSONObject] | None:
    """What a value change ``compare_heard`` found (``found``, from ``recorded`` against some live
    messages) is about, recorded and as ``live`` holds it there, as plain values the answers'
    comparison and noise rules take (``noise.py``): a changed log message's level, logger and data,
    the last progress message, or a request to the client's params, each beside the live message
    it is lined up with. None for any other finding, or when ``live`` holds nothing there."""
    path, rec, now = found.path, parted(recorded), parted(live)
    if path == _NOTES + ".progress.message":
        if not (rec["progress"] and now["progress"]):
            return None
        return {"message": params_of(rec["progress"][-1]).get("message")}, {
            "message": params_of(now["progress"][-1]).get("message")
        }
    if path.startswith(_ASKED):
        for op, i1, i2, j1, j2 in _methods_aligned(rec["asked"], now["asked"]):
            for i, j in zip(range(i1, i2), range(j1, j2), strict=False):
                if op == "equal" and rec["asked"][i].get("params") == found.before:
                    return _unmeta(params_of(rec["asked"][i])), _unmeta(params_of(now["asked"][j]))
        return None
    at = path.removeprefix(LOG_AT).removesuffix("]")
    if not (path.startswith(LOG_AT) and at.isdigit() and int(at) < len(rec["log"])):
        return None
    i = int(at)
    for op, i1, i2, j1, j2 in _aligned(rec["log"], now["log"], options or CompareOptions()):
        if op in ("equal", "replace") and i1 <= i < i1 + min(i2 - i1, j2 - j1):
            return _logged(rec["log"][i]), _logged(now["log"][j1 + i - i1])
    return None


def _unmeta(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` without ``_meta`` (bookkeeping, never compared: ``masked``)."""
    return {k: v for k, v in value.items() if k != "_meta"}


def _logged(message: JSONObject) -> JSONObject:
    """What a log message is compared by (``log_key``), as a value: level, logger and data."""
    params = params_of(message)
    data = params.get("data")
    if isinstance(data, dict):
        data = _unmeta(data)
    return {"level": params.get("level"), "logger": params.get("logger"), "data": data}


def _shown(message: JSONObject) -> str:
    params = params_of(message)
    data = params.get("data")
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    if len(text) > 80:
        text = text[:79] + "…"
    return f"{params.get('level')}: {text}"


# -- change notices and the rest: by presence ------------------------------------------------------


def _presence(rec: list[JSONObject], now: list[JSONObject]) -> list[Finding]:
    had = {str(m.get("method")) for m in rec}
    has = {str(m.get("method")) for m in now}
    out: list[Finding] = []
    for method in sorted(had - has):
        path = _NOTES + ident_segment("method", method)
        out.append(
            finding("notification-dropped", "structure-change", path, f"{method} did not arrive", before=1, after=0)
        )
    for method in sorted(has - had):
        path = _NOTES + ident_segment("method", method)
        said = f"{method} arrived where the recording has none"
        out.append(finding("notification-added", "structure-change", path, said, before=0, after=1))
    return out


# -- requests to the client -------------------------------------------------------------------------


def _methods_aligned(rec: list[JSONObject], now: list[JSONObject]) -> Sequence[_Opcode]:
    """The recorded and live requests to the client lined up by method (``difflib``'s opcodes)."""
    a, b = [str(m.get("method")) for m in rec], [str(m.get("method")) for m in now]
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _asked(rec: list[JSONObject], now: list[JSONObject], options: CompareOptions) -> list[Finding]:
    a, b = [str(m.get("method")) for m in rec], [str(m.get("method")) for m in now]
    out: list[Finding] = []
    for op, i1, i2, j1, j2 in _methods_aligned(rec, now):
        if op == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                was, new = rec[i].get("params"), now[j].get("params")
                if masked(was, options) != masked(new, options):
                    path = _ASKED + ident_segment("method", a[i])
                    said = f"the server asks {a[i]} with other params"
                    out.append(finding("server-request-changed", "value-change", path, said, before=was, after=new))
            continue
        for i in range(i1, i2):
            path = _ASKED + ident_segment("method", a[i])
            said = f"the server no longer asks {a[i]}"
            out.append(finding("server-request-dropped", "structure-change", path, said, before=a[i], after=None))
        for j in range(j1, j2):
            path = _ASKED + ident_segment("method", b[j])
            said = f"the server now asks {b[j]} (the recording has no answer for it)"
            out.append(finding("server-request-added", "structure-change", path, said, before=None, after=b[j]))
    return out
