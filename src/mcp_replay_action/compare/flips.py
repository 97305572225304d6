"""Error parity: a success that became an error, or the reverse, as one finding that says so
(a JSON-RPC error where a result was, or a tool result whose ``isError`` flipped), before any
leaf is compared; and the envelope and ``isError: false`` set aside so they never read as a
change.
"""

from __future__ import annotations

from typing import Any

from mcp_replay_action.compare.classes import finding as _classed
from mcp_replay_action.compare.matchers import ENVELOPE
from mcp_replay_action.compare.normalize import normalize
from mcp_replay_action.compare.render import BRIEF_CAP, brief, cap, render, unbox
from mcp_replay_action.model.results import Finding

ERROR_TEXT_CAP = 300  # the live error text quoted in the message of a success that became an error


def is_rpc_error(message: Any) -> bool:
    return isinstance(message, dict) and "error" in message and "result" not in message


def rpc_error_flip(recorded: Any, live: Any) -> Finding | None:
    was, now = is_rpc_error(recorded), is_rpc_error(live)
    if was == now:
        return None
    if now:
        error = live.get("error")
        message = "a result became an error"
        detail = error_brief(error, ERROR_TEXT_CAP)
        return _classed(
            "result-became-error",
            "error-status-change",
            "$",
            f"{message}: {detail}" if detail else message,
            before=render(unbox(normalize(recorded.get("result")))),
            after=render(error),
        )
    return _classed(
        "error-became-result",
        "error-status-change",
        "$",
        f"an error became a result (was: {error_brief(recorded.get('error'))})",
        before=render(recorded.get("error")),
        after=render(unbox(normalize(live.get("result")))),
    )


def error_brief(error: Any, limit: int = BRIEF_CAP * 2) -> str:
    if isinstance(error, dict):
        code = error.get("code")
        text = error.get("message")
        parts = [str(code)] if code is not None else []
        if isinstance(text, str):
            parts.append(text)
        return cap(" ".join(parts), limit)
    return brief(error, limit)


def result_of(body: Any) -> Any:
    return body.get("result") if isinstance(body, dict) else None


def drop_false_is_error(body: Any) -> None:
    # An absent isError means false; servers differ in whether they spell it out.
    result = result_of(body)
    if isinstance(result, dict) and result.get("isError") is False:
        del result["isError"]


def tool_error_flip(before: Any, after: Any) -> Finding | None:
    was = result_of(before)
    now = result_of(after)
    if not isinstance(was, dict) or not isinstance(now, dict):
        return None
    was_error, now_error = was.get("isError") is True, now.get("isError") is True
    if was_error == now_error:
        return None
    if now_error:
        text = content_text(now)
        message = "the tool result became an error (isError)" + (f": {text}" if text else "")
    else:
        message = "the tool result is no longer an error"
    return _classed(
        "tool-became-error" if now_error else "tool-no-longer-error",
        "error-status-change",
        "$.result.isError",
        message,
        before=render(unbox(was.get("content", was))),
        after=render(unbox(now.get("content", now))),
    )


def content_text(result: dict[str, Any]) -> str:
    """The text blocks of a tool result's ``content``, joined on one line and capped: what an
    error result says, for the message that reports it."""
    content = unbox(result.get("content"))
    if not isinstance(content, list):
        return ""
    texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return cap(" ".join(" ".join(texts).split()), ERROR_TEXT_CAP)


def is_error_result(body: Any) -> bool:
    result = result_of(body)
    return isinstance(result, dict) and result.get("isError") is True


def body_of(message: Any) -> Any:
    if isinstance(message, dict):
        return {k: v for k, v in message.items() if k not in ENVELOPE}
    return message
