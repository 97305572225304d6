"""Plain data between the stages, with no behaviour beyond its own JSON form: a cassette and its
interactions (``cassette``), a replay's results and report (``results``), the gate (``gate``).

``JSON`` names a value as ``json.loads`` returns it (a dict, list, str, int, float, bool or None,
nested). It is ``Any`` to the type checker, since the code reads such values by ``isinstance`` as
it walks them; the name says what the value is where ``Any`` would say nothing.
"""

from typing import Any, TypeAlias

JSON: TypeAlias = Any
JSONObject: TypeAlias = dict[str, JSON]  # a JSON object: a message, its params or result, a header
