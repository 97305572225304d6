"""The finding-path notation: what a finding prints parses back to the same steps, so it can be
pasted as an ``--ignore-path``."""

from __future__ import annotations

import pytest

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.values.paths import box_segment, ident_segment, index_segment, key_segment, parse_path


def test_rendered_steps_parse_back() -> None:
    path = (
        "$"
        + key_segment("result")
        + key_segment("tools")
        + ident_segment("name", "it's [odd] = x")
        + key_segment("odd key")
        + index_segment(2)
        + box_segment("json")
        + key_segment("field")
    )
    assert path == "$.result.tools[name='it\\'s [odd] = x']['odd key'][2]{json}.field"
    assert parse_path(path) == (
        ("key", "result"),
        ("key", "tools"),
        ("ident", "name", "it's [odd] = x"),
        ("key", "odd key"),
        ("index", 2),
        ("box", "json"),
        ("key", "field"),
    )


def test_pattern_forms_and_errors() -> None:
    assert parse_path("result.content[].text") == (("key", "result"), ("key", "content"), ("any",), ("key", "text"))
    assert parse_path("$.result.*[*]") == (("key", "result"), ("anykey",), ("any",))
    with pytest.raises(ConfigError, match="names no key"):
        parse_path("$.")
