"""How deep a JSON value or text nests, measured without recursion, and what is said of one too
deep to compare.

Python's JSON parser, our redactor and the comparison recurse once (or twice) per level, so an
answer nested some hundreds of levels deep ends in a ``RecursionError``. Measuring every answer
first would cost every replay a walk of every answer; instead the replay meets the error where
it happens (``replay/engine.py``, the transports) and only then measures here, to say how deep the
answer was. ``COMPARED`` is the depth every answer is compared to, whatever the stack it is
compared on (``tests/test_deep_answers.py`` holds it); deeper ones are compared too, until the
recursion limit stops them.
"""

from __future__ import annotations

import re

from mcp_replay_action.model import JSON

COMPARED = 200  # answers nested up to this many levels are always compared

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)  # linear: no nested quantifier can backtrack
_BRACKETS = bytes.maketrans(b"", b"")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def depth_of(value: JSON) -> int:
    """The levels of containers in ``value`` (0 for a scalar, 1 for ``[]`` or ``{"a": 1}``)."""
    deepest = 0
    stack: list[tuple[JSON, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item  # type: ignore[assignment]
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def text_depth(text: bytes | bytearray | str) -> int:
    """The deepest nesting of brackets in a JSON text, outside its strings (for a text too deep
    to parse); linear in its length."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    brackets = _STRING.sub(b"", raw).translate(_BRACKETS, _NOT_BRACKETS)
    deepest = level = 0
    for byte in brackets:
        if byte in b"[{":
            level += 1
            deepest = max(deepest, level)
        else:
            level -= 1
    return deepest


def too_deep(what: str, depth: int, to: str = "compare") -> str:
    """The one way a too-deep value is told: ``what``, its depth, what it is too deep ``to`` do
    (compare, read, redact), and the limit."""
    if to == "compare":
        limit = f"past Python's recursion limit; answers nested up to {COMPARED} levels are always compared"
    else:
        limit = "past Python's recursion limit"
    return f"{what} is nested {depth} levels deep, too deep to {to} ({limit})"
