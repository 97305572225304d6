"""The finding-path notation, in one place: how a finding names where in a message something
changed, and how ``--ignore-path`` (and learned noise rules) name where not to look.

JSONPath-like, from the message root: ``$.result.content[0].text``. A key that is not a plain
word is quoted, ``$.result['odd key']``. An item of a named list (tools, prompts, resources) is
named by its identity, ``$.result.tools[name=add]`` (also ``[uri=...]``, ``[uriTemplate=...]``),
not by its position. JSON held in a string is entered with ``{json}``
(``$.result.content[0].text{json}.field``), base64 text with ``{base64}``. Patterns may also
use ``[]`` or ``[*]`` for any list item, ``*`` for any key, and may leave out ``$.``
(``result.content[].text``).

``parse_path(pattern)`` reads a pattern into tokens; ``key_segment``, ``index_segment``,
``ident_segment`` and ``box_segment`` render one step, so what a finding prints can be pasted
back as an ``--ignore-path``.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON

SEGMENT_CAP = 100  # characters of a key or identity shown in one step
_PLAIN_KEY = re.compile(r"[A-Za-z_$@][\w$@-]*")


# ("key", name) | ("anykey",) | ("index", n) | ("any",) | ("ident", field, value) | ("box", tag)
Token = tuple[Any, ...]

_PATH_TOKEN = re.compile(
    r"""
    \.?(?P<box>\{(?:json|base64)\})
  | \[\s*(?P<any>\*?)\s*\]
  | \[\s*(?P<index>-?\d+)\s*\]
  | \[\s*(?P<quoted>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\s*\]
  | \[\s*(?P<field>[A-Za-z_][\w]*)\s*=\s*(?P<value>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\]]*)\s*\]
  | \.?(?P<key>\*|[^.\[\]{}]+)
    """,
    re.VERBOSE,
)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return text


@lru_cache(maxsize=256)
def parse_path(pattern: str) -> tuple[Token, ...]:
    """Parse one ignore-path pattern into tokens, or raise ConfigError saying what is wrong."""
    text = pattern.strip()
    if text.startswith("$"):
        text = text[1:]
    if text.startswith("."):
        text = text[1:]
    if not text:
        raise ConfigError(f"invalid ignore path {pattern!r}: it names no key")
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        match = _PATH_TOKEN.match(text, pos)
        if match is None or match.end() == pos:
            raise ConfigError(f"invalid ignore path {pattern!r}: cannot read {text[pos : pos + 20]!r}")
        if match.group("box"):
            tokens.append(("box", match.group("box").strip(".{}")))
        elif match.group("index") is not None:
            tokens.append(("index", int(match.group("index"))))
        elif match.group("quoted") is not None:
            tokens.append(("key", _unquote(match.group("quoted"))))
        elif match.group("field") is not None:
            tokens.append(("ident", match.group("field"), _unquote(match.group("value"))))
        elif match.group("key") is not None:
            key = match.group("key").strip()
            tokens.append(("anykey",) if key == "*" else ("key", key))
        else:
            tokens.append(("any",))
        pos = match.end()
    return tuple(tokens)


def key_segment(key: JSON) -> str:
    """One object step: ``.name``, or ``['odd key']`` for a key that is not a plain word."""
    text = str(key)
    if _PLAIN_KEY.fullmatch(text):
        return "." + _cap(text)
    return "[" + json.dumps(_cap(text), ensure_ascii=False).replace("'", "\\'")[1:-1].join("''") + "]"


def index_segment(index: JSON) -> str:
    """One list step by position: ``[3]``."""
    return f"[{index}]"


def ident_segment(field: str, value: JSON) -> str:
    """One named-list step by identity: ``[name=add]``, quoted when the value needs it."""
    text = _cap(str(value))
    if re.search(r"[\[\]'\"\s=]", text):
        text = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return f"[{field}={text}]"


def box_segment(tag: str) -> str:
    """The step into text that holds JSON or base64: ``{json}``, ``{base64}``."""
    return "{" + tag + "}"


def _cap(text: str) -> str:
    return text if len(text) <= SEGMENT_CAP else text[: SEGMENT_CAP - 1] + "…"


_INDEX = re.compile(r"\[(\d+)\]")  # one pass, no backtracking: linear in the path


def path_order(path: str) -> tuple[tuple[str, int], ...]:
    """A finding path as a sort key in which list indices compare as numbers: ``hits[2]`` before
    ``hits[10]``, as a reader counts them (plain text order puts ``[10]`` first)."""
    parts = _INDEX.split(path)
    # split alternates text and captured digits: pair each text with the index after it.
    return tuple((parts[i], int(parts[i + 1]) if i + 1 < len(parts) else -1) for i in range(0, len(parts), 2))
