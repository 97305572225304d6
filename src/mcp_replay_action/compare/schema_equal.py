"""Whether two spellings of a JSON Schema accept the same values: compared by what they accept
for the declared type, not by how they are written.

A server's SDK or a refactor rewrites schemas without changing them: ``exclusiveMaximum:
1000000`` on an integer becomes ``maximum: 999999``, ``type: ["string"]`` becomes ``type:
"string"``, a one-item ``enum`` becomes ``const``. ``validation_form(schema)`` is the canonical
form of a schema's own validation keywords (annotations such as ``description`` and the keywords
that hold subschemas left out; ``compare`` walks those itself), and two schemas whose forms are
equal validate every value alike. The rules, each an equivalence that holds for every value:

- ``type: [x]`` is ``type: x``; a type list is a set; ``number`` covers ``integer``.
- A one-item ``enum`` is ``const``; ``enum`` is a set.
- draft 4's boolean ``exclusiveMaximum: true`` beside ``maximum: n`` is draft 6's
  ``exclusiveMaximum: n`` (and ``false`` is no keyword); likewise the minimum.
- For an integer, ``exclusiveMaximum: n`` is ``maximum: ceil(n) - 1``, ``maximum: 9.5`` is
  ``maximum: 9``, ``exclusiveMinimum: n`` is ``minimum: floor(n) + 1``; the tighter of two
  bounds is the bound; ``multipleOf: 1`` says nothing more.
- For a number, the tighter of ``maximum`` and ``exclusiveMaximum`` is the bound.
- A keyword of a type the schema does not declare (``minLength`` on an integer) never applies.
- A keyword spelled out with the value that means "no constraint" is no keyword:
  ``minLength``/``minItems``/``minProperties`` 0, ``uniqueItems: false``, ``required: []``,
  ``properties: {}``, and ``{}`` or ``true`` under ``additionalProperties``, ``items`` and the like.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from mcp_replay_action.model import JSON, JSONObject

# Keywords whose value is a schema, or holds schemas: compared schema by schema, not here.
# Keywords that map names to schemas (a member's key is a name, never a keyword) and that list them.
SCHEMA_MAPS = frozenset({"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"})
SCHEMA_LISTS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})


def is_property_name(keys: Sequence[str | None]) -> bool:
    """Whether the last of a path's keys names a member of a schema's ``properties`` (or
    ``$defs``, ...) rather than a keyword: a property named ``title`` is a property, and removing it
    is removing a field. An odd run of such map keys comes before it (``properties.properties.title``
    is the ``title`` keyword of a property named ``properties``)."""
    run = 0
    while run + 1 < len(keys) and keys[-2 - run] in SCHEMA_MAPS:
        run += 1
    return run % 2 == 1


SUBSCHEMA_KEYS = frozenset(
    {
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "dependentSchemas",
        "items",
        "prefixItems",
        "additionalItems",
        "unevaluatedItems",
        "contains",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "$defs",
        "definitions",
    }
)
# Keywords for people and tools, not for validation (``compare`` classes their changes itself).
ANNOTATION_KEYS = frozenset(
    {"title", "description", "examples", "default", "$comment", "deprecated", "readOnly", "writeOnly"}
)
# Validation keywords that apply to one type only.
_TYPE_KEYWORDS = {
    "number": frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}),
    "string": frozenset({"minLength", "maxLength", "pattern", "contentEncoding", "contentMediaType"}),
    "array": frozenset({"minItems", "maxItems", "uniqueItems", "minContains", "maxContains"}),
    "object": frozenset({"minProperties", "maxProperties", "required", "dependentRequired", "dependencies"}),
}
# Keywords spelled out with the value that means "no constraint".
_NO_CONSTRAINT: dict[str, tuple[JSON, ...]] = {
    "minLength": (0,),
    "minItems": (0,),
    "minProperties": (0,),
    "uniqueItems": (False,),
    "required": ([],),
    "additionalProperties": (True, {}),
    "unevaluatedProperties": (True, {}),
    "items": (True, {}),
    "additionalItems": (True, {}),
    "unevaluatedItems": (True, {}),
    "properties": ({},),
    "patternProperties": ({},),
    "$defs": ({},),
    "definitions": ({},),
}


def validation_keys(schema: JSONObject, beside: JSONObject) -> list[str]:
    """The keys of ``schema`` that ``validation_form`` reads when it is compared with ``beside``:
    its own validation keywords, and a subschema keyword unless both hold a subschema that
    constrains (those two are compared subschema by subschema, by the caller)."""
    return [
        k
        for k in schema
        if k not in ANNOTATION_KEYS
        and (k not in SUBSCHEMA_KEYS or _says_nothing(k, schema[k]) or k not in beside or _says_nothing(k, beside[k]))
    ]


def validation_form(schema: JSONObject) -> str:
    """The canonical form of ``schema``'s validation keywords, as a string: equal for two
    schemas (each cut to its ``validation_keys``) exactly when, by the rules above, they accept
    the same values as far as those keywords go. Subschema keywords are read only where they say
    "no constraint"."""
    own = {k: v for k, v in schema.items() if k not in ANNOTATION_KEYS and not _says_nothing(k, v)}
    for k in SUBSCHEMA_KEYS & own.keys():
        own[k] = True  # a constraining subschema is there (what it says is compared on its own)
    types = _types(own.pop("type", None))
    if isinstance(own.get("enum"), list):
        values = own.pop("enum")
        if len(values) == 1 and "const" not in own:
            own["const"] = values[0]
        else:
            own["enum"] = sorted({_spelling(v) for v in values})
    if isinstance(own.get("required"), list):
        own["required"] = sorted({_spelling(v) for v in own["required"]})
    for bound, exclusive in (("maximum", "exclusiveMaximum"), ("minimum", "exclusiveMinimum")):
        flag = own.get(exclusive)
        if flag is True and _is_number(own.get(bound)):
            own[exclusive] = own.pop(bound)  # draft 4: the bound itself is excluded
        elif flag is False:
            del own[exclusive]
    if types == ["integer"]:
        _integer_bounds(own)
    elif types == ["number"]:
        _tighter(own, "maximum", "exclusiveMaximum", upper=True)
        _tighter(own, "minimum", "exclusiveMinimum", upper=False)
    if types and "number" in types:
        types = [t for t in types if t != "integer"]  # a number may be an integer
    if types is not None:
        declared = {"number" if t == "integer" else t for t in types}
        for type_name, keywords in _TYPE_KEYWORDS.items():
            if type_name not in declared:
                for k in keywords & own.keys():
                    del own[k]
        own["type"] = types[0] if len(types) == 1 else types
    return json.dumps(own, sort_keys=True, ensure_ascii=False, default=str)


def _says_nothing(key: str, value: JSON) -> bool:
    return key in _NO_CONSTRAINT and any(type(value) is type(v) and value == v for v in _NO_CONSTRAINT[key])


def _types(value: JSON) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return sorted(set(value))
    return None


def _is_number(value: JSON) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _spelling(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _integer_bounds(own: JSONObject) -> None:
    """An integer's bounds as one inclusive integer ``maximum`` and ``minimum``."""
    uppers = []
    if _is_number(own.get("maximum")):
        uppers.append(math.floor(own.pop("maximum")))
    if _is_number(own.get("exclusiveMaximum")):
        uppers.append(math.ceil(own.pop("exclusiveMaximum")) - 1)
    if uppers:
        own["maximum"] = min(uppers)
    lowers = []
    if _is_number(own.get("minimum")):
        lowers.append(math.ceil(own.pop("minimum")))
    if _is_number(own.get("exclusiveMinimum")):
        lowers.append(math.floor(own.pop("exclusiveMinimum")) + 1)
    if lowers:
        own["minimum"] = max(lowers)
    if own.get("multipleOf") == 1 and not isinstance(own.get("multipleOf"), bool):
        del own["multipleOf"]


def _tighter(own: JSONObject, inclusive: str, exclusive: str, *, upper: bool) -> None:
    """Keep only the tighter of a number's inclusive and exclusive bound on one side."""
    a, b = own.get(inclusive), own.get(exclusive)
    if not (_is_number(a) and _is_number(b)):
        return
    exclusive_wins = float(b) <= float(a) if upper else float(b) >= float(a)  # type: ignore[arg-type]
    del own[inclusive if exclusive_wins else exclusive]
