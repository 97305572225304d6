"""The finding-path notation: what a finding prints parses back to the same steps, so it can be
pasted as an ``--ignore-path``."""

from __future__ import annotations

import pytest

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.values.paths import (
    box_segment,
    ident_segment,
    index_segment,
    key_segment,
    parse_path,
    path_order,
)

pytestmark = pytest.mark.unit


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


def test_indices_sort_as_numbers() -> None:
    paths = ["$.hits[10].id", "$.hits[2].id", "$.hits", "$.hits[2]", "$.m[1][10]", "$.m[1][9]", "$.hits[1]x"]
    assert sorted(paths, key=path_order) == [
        "$.hits",
        "$.hits[1]x",
        "$.hits[2]",
        "$.hits[2].id",
        "$.hits[10].id",
        "$.m[1][9]",
        "$.m[1][10]",
    ]


def test_a_replays_findings_list_indices_in_number_order() -> None:
    from mcp_replay_action.compare.engine import compare

    recorded = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"hits": list(range(12))}}}
    live = {"jsonrpc": "2.0", "id": 1, "result": {"structuredContent": {"hits": [0, 1, -2, *range(3, 10), -10, 11]}}}
    # Two changed leaves: the differ's order is not ours; the report lists [2] before [10].
    paths = [f.path for f in compare(recorded, live)]
    assert paths == ["$.result.structuredContent.hits[2]", "$.result.structuredContent.hits[10]"]
