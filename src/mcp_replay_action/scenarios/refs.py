"""``${name.path}`` in a scenario step: a value taken from an earlier step's answer.

A step that says ``save: note`` keeps its answer's ``result`` under ``note``; a later step's string
values may then quote it, ``${note.structuredContent.id}``. The path after the name is the finding
path notation (``paths.py``): ``.key``, ``[0]`` (``[-1]`` from the end), ``[name=add]`` for the
item of a list with that identity, ``{json}`` to enter JSON held in text. Text is also entered
without ``{json}`` when the path goes on into it and the text is a JSON object or array
(``${note.content[0].text.id}`` for a tool that answers JSON in its text).

A string that is one reference takes the value with its JSON type (a number stays a number);
a reference inside a longer string is spelled there (text as it is, anything else as JSON).

The loader builds ``Ref`` and ``Template`` values where it reads them (only a name an earlier step
of the same scenario saves is a reference: anything else is an environment variable, as before);
the recorder fills them in just before the step is sent (``fill``), from the answers so far.
Saved answers are the server's words and never reach a message whole: an error names the path and
what is there instead (keys, a type, a length), never the value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON
from mcp_replay_action.values.paths import Token, box_segment, ident_segment, index_segment, key_segment, parse_path

NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LEAD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?=$|[.\[{])")


@dataclass(frozen=True)
class Ref:
    """``${name.path}``: the value at ``tokens`` in the answer saved as ``name``."""

    name: str
    tokens: tuple[Token, ...]
    text: str  # as written between ``${`` and ``}``, for messages


@dataclass(frozen=True)
class Template:
    """A string with references inside it: literal text and ``Ref`` parts, in order."""

    parts: tuple[str | Ref, ...]


@dataclass(frozen=True)
class Failed:
    """What ``save`` keeps when the step was answered with an error."""

    error: JSON


class RefError(Exception):
    """A reference that cannot be filled in; the recorder adds the file, line and scenario."""


def lead_name(inner: str) -> str | None:
    """The saved name a reference starts with (``note`` of ``note.structuredContent.id``), or
    None when ``inner`` does not start like one."""
    match = _LEAD.match(inner)
    return match.group(1) if match else None


def parse_ref(inner: str) -> Ref:
    """``note.structuredContent.id`` read into a ``Ref``; ConfigError says what is wrong."""
    name = lead_name(inner)
    if name is None:
        raise ConfigError(f"${{{inner}}} is not a reference to a saved answer")
    rest = inner[len(name) :]
    tokens: tuple[Token, ...] = ()
    if rest:
        try:
            tokens = parse_path(rest[1:] if rest.startswith(".") else rest)
        except ConfigError as exc:
            reason = str(exc).split(": ", 1)[-1]
            raise ConfigError(f"${{{inner}}}: {reason}") from None
    for token in tokens:
        if token[0] in ("any", "anykey") or token == ("box", "base64"):
            raise ConfigError(f"${{{inner}}}: a reference names one value (no [], * or {{base64}})")
    return Ref(name=name, tokens=tokens, text=inner)


def has_refs(value: JSON) -> bool:
    if isinstance(value, (Ref, Template)):
        return True
    if isinstance(value, dict):
        return any(has_refs(v) for v in value.values())
    if isinstance(value, list):
        return any(has_refs(v) for v in value)
    return False


def fill(value: JSON, answers: Mapping[str, JSON]) -> JSON:
    """``value`` with every reference replaced by what it names in ``answers``; RefError if one
    cannot be."""
    if isinstance(value, Ref):
        return lookup(value, answers)
    if isinstance(value, Template):
        out = []
        for part in value.parts:
            got = part if isinstance(part, str) else lookup(part, answers)
            out.append(got if isinstance(got, str) else json.dumps(got, ensure_ascii=False))
        return "".join(out)
    if isinstance(value, dict):
        return {k: fill(v, answers) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, answers) for v in value]
    return value


def lookup(ref: Ref, answers: Mapping[str, JSON]) -> JSON:
    """The value ``ref`` names."""
    if ref.name not in answers:
        raise RefError(f"${{{ref.text}}}: no answer was saved as {ref.name!r}")
    value = answers[ref.name]
    if isinstance(value, Failed):
        raise RefError(f"${{{ref.text}}}: the step saved as {ref.name!r} was answered with an error{_code(value)}")
    where = ref.name
    for token in ref.tokens:
        value = _step(value, token, where, ref)
        where += _segment(token)
    return value


def _step(value: JSON, token: Token, where: str, ref: Ref) -> JSON:
    kind = token[0]
    if isinstance(value, str):
        parsed = _json_in(value)
        if parsed is None:
            raise RefError(f"${{{ref.text}}}: {where} is text that is not a JSON object or array")
        value = parsed
        if kind == "box":
            return value
    if kind == "box":
        raise RefError(f"${{{ref.text}}}: {where} is {_kind(value)}, not text holding JSON")
    if kind == "key":
        if isinstance(value, dict) and token[1] in value:
            return value[token[1]]
        keys = f" (its keys: {', '.join(map(str, list(value)[:12]))})" if isinstance(value, dict) and value else ""
        raise RefError(f"${{{ref.text}}}: {where} has no {token[1]!r}: it is {_kind(value)}{keys}")
    if kind == "index":
        if isinstance(value, list) and -len(value) <= token[1] < len(value):
            return value[token[1]]
        raise RefError(f"${{{ref.text}}}: {where} has no item [{token[1]}]: it is {_kind(value)}")
    if kind == "ident":
        field, wanted = token[1], token[2]
        if isinstance(value, list):
            for item in value:
                if isinstance(item, dict) and str(item.get(field)) == wanted:
                    return item
        raise RefError(f"${{{ref.text}}}: {where} has no item with {field} = {wanted!r}: it is {_kind(value)}")
    raise RefError(f"${{{ref.text}}}: cannot follow {token!r}")  # parse_ref refused the rest


def _json_in(text: str) -> JSON:
    if not text.lstrip().startswith(("{", "[")):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _kind(value: JSON) -> str:
    if isinstance(value, dict):
        return f"an object of {len(value)} keys"
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"


def _segment(token: Token) -> str:
    kind = token[0]
    if kind == "key":
        return key_segment(token[1])
    if kind == "index":
        return index_segment(token[1])
    if kind == "ident":
        return ident_segment(token[1], token[2])
    return box_segment(token[1])


def _code(value: Failed) -> str:
    error = value.error
    code = error.get("code") if isinstance(error, dict) else None
    return f" (code {code})" if isinstance(code, int) else ""
