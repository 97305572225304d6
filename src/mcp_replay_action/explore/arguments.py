"""Arguments for a tool from its ``inputSchema``, the same every time (docs/baseline.md).

For each required property, in this order: the schema's first ``examples`` value, its
``default``, its ``const``, its first ``enum`` value, else the smallest value its type and
format accept (``0`` within ``minimum``/``maximum``, ``""`` or ``minLength`` letters, ``[]`` or
``minItems`` items, ``false``, an object of its own required properties). Optional properties
are left out: the fewer arguments, the fewer ways a call can do something. The result is checked
against the schema with ``jsonschema``; a schema that is not valid JSON Schema, or that the value
made does not satisfy, is ``Unsatisfiable`` and the tool is skipped (named, never a crash).
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

from mcp_replay_action.model import JSON, JSONObject

T = TypeVar("T")
MAX_DEPTH = 24  # nested schemas (and $ref hops) followed before we give up on a schema

# A value of each string format a server is likely to declare, chosen to be plainly harmless.
FORMATS: dict[str, str] = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00Z",
    "duration": "PT0S",
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri-reference": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "json-pointer": "",
    "regex": "",
}
# Strings tried in turn against a ``pattern`` (a schema's own regex, run on our short words only).
PATTERN_TRIES = ("", "a", "0", "a0", "A", "example", "1970-01-01", "https://example.com/")


class Unsatisfiable(ValueError):
    """The tool's ``inputSchema`` is not valid JSON Schema, or no value we make satisfies it."""


def arguments_for(schema: JSON) -> JSONObject:
    """The arguments a tool with ``schema`` as its ``inputSchema`` is called with; raises
    ``Unsatisfiable`` with the reason in a few words."""
    from jsonschema import exceptions, validators

    if schema is None:
        return {}
    if not isinstance(schema, dict):
        raise Unsatisfiable("its inputSchema is not a JSON object")
    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise Unsatisfiable(f"its inputSchema is not valid JSON Schema: {_short(exc.message)}") from None
    value = _Maker(schema).make(schema, 0)
    if value is None and schema.get("type") in (None, "object"):
        value = {}
    if not isinstance(value, dict):
        raise Unsatisfiable("its inputSchema does not describe an object of arguments")
    try:
        error = exceptions.best_match(cls(schema).iter_errors(value))
    except Exception as exc:  # an unresolvable $ref, a pattern the validator cannot compile: a bad schema
        raise Unsatisfiable(f"its inputSchema cannot be checked: {_short(str(exc))}") from None
    if error is not None:
        raise Unsatisfiable(f"no arguments made from its inputSchema satisfy it: {_short(error.message)}")
    return value


class _Maker:
    """The smallest value a (sub)schema accepts, following local ``$ref``s into ``root``."""

    def __init__(self, root: JSONObject) -> None:
        self.root = root

    def make(self, schema: JSON, depth: int) -> JSON:
        if depth > MAX_DEPTH:
            raise Unsatisfiable("its inputSchema nests too deeply (or refers to itself)")
        if schema is False:
            raise Unsatisfiable("its inputSchema accepts nothing")
        if not isinstance(schema, dict):
            return None  # ``true``: anything goes, and nothing is the least
        if isinstance(schema.get("$ref"), str):
            return self.make(self._follow(schema["$ref"]), depth + 1)
        if isinstance(schema.get("examples"), list) and schema["examples"]:
            return schema["examples"][0]
        for key in ("default", "const"):
            if key in schema:
                return schema[key]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return schema["enum"][0]
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                return self._first_option(schema, key, options, depth)
        if isinstance(schema.get("allOf"), list):
            return self.make(_merged(schema), depth + 1)
        return self._of_type(schema, _first_type(schema), depth)

    def _first_option(self, schema: JSONObject, key: str, options: list[Any], depth: int) -> JSON:
        # The first branch (with the schema's own keywords beside it) whose value we can make;
        # the whole is checked against the schema at the end.
        rest = {k: v for k, v in schema.items() if k != key}
        for option in options:
            try:
                return self.make({**rest, **option} if isinstance(option, dict) else option, depth + 1)
            except Unsatisfiable:
                continue
        raise Unsatisfiable(f"no branch of its {key} can be satisfied")

    def _follow(self, ref: str) -> JSON:
        if not ref.startswith("#"):
            raise Unsatisfiable(f"its inputSchema refers outside itself ({_short(ref)})")
        node: JSON = self.root
        for part in [p for p in ref[1:].split("/") if p]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise Unsatisfiable(f"its inputSchema has a $ref that cannot be followed ({_short(ref)})")
        return node

    def _of_type(self, schema: JSONObject, kind: str | None, depth: int) -> JSON:
        if kind == "object" or (kind is None and ("properties" in schema or "required" in schema)):
            props = _of(schema, "properties", dict, {})
            required = _of(schema, "required", list, [])
            return {name: self.make(props.get(name, {}), depth + 1) for name in required if isinstance(name, str)}
        if kind == "array":
            count = _of(schema, "minItems", int, 0)
            items = _of(schema, "items", dict, {})
            prefix = _of(schema, "prefixItems", list, [])
            out = [self.make(p, depth + 1) for p in prefix[:count]]
            out += [self.make(items, depth + 1) for _ in range(count - len(out))]
            return out
        if kind in ("integer", "number"):
            return _number(schema, kind)
        if kind == "boolean":
            return False
        if kind == "null":
            return None
        return _string(schema)


def _first_type(schema: JSONObject) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):
        # A nullable type (``["string", "null"]``) is called with the value, not with null.
        named = [k for k in kind if isinstance(k, str) and k != "null"]
        return named[0] if named else ("null" if "null" in kind else None)
    return kind if isinstance(kind, str) else None


def _merged(schema: JSONObject) -> JSONObject:
    """``allOf`` folded into one schema: properties and required lists joined, other keywords
    taken from the last part that names them (the whole is checked at the end)."""
    out: JSONObject = {k: v for k, v in schema.items() if k != "allOf"}
    for part in schema["allOf"]:
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, dict):
                out["properties"] = {**(out.get("properties") or {}), **value}
            elif key == "required" and isinstance(value, list):
                out["required"] = list(dict.fromkeys([*(out.get("required") or []), *value]))
            else:
                out[key] = value
    return out


def _number(schema: JSONObject, kind: str) -> int | float:
    low: float | None = None
    for key, step in (("minimum", 0), ("exclusiveMinimum", 1)):
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            low = max(low, bound + step) if low is not None else bound + step
    high = schema.get("maximum")
    value: float = 0 if low is None or low <= 0 else low
    if isinstance(high, (int, float)) and not isinstance(high, bool) and value > high:
        value = high
    if kind == "integer":
        value = int(-(-value // 1))  # the smallest integer not below it
    return value


def _string(schema: JSONObject) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    length = _of(schema, "minLength", int, 0)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            compiled = re.compile(pattern)
        except re.error:
            raise Unsatisfiable(f"its inputSchema's pattern is not a regular expression: {_short(pattern)}") from None
        for word in PATTERN_TRIES:
            if len(word) >= length and compiled.search(word):
                return word
        raise Unsatisfiable(f"no string we make matches the pattern {_short(pattern)}")
    return "a" * length


def _of(schema: JSONObject, key: str, kind: type[T], default: T) -> T:
    """``schema[key]`` when it is a ``kind``, else ``default`` (a keyword of the wrong type is
    left to the validator's check)."""
    value = schema.get(key)
    return value if isinstance(value, kind) else default


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
