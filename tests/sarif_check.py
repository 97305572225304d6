"""A SARIF log checked against the SARIF 2.1.0 JSON Schema shipped with the tests
(tests/schemas/sarif-2.1.0.json, from oasis-tcs/sarif-spec sarif-2.1/schema at a560296; never
fetched)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-2.1.0.json").read_text("utf-8"))


def valid_sarif(text: str) -> dict[str, Any]:
    """The log ``text`` holds, once it is valid SARIF 2.1.0 (the first errors otherwise)."""
    log = json.loads(text)
    validator = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]
    return log
