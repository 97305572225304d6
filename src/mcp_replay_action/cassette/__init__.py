"""The cassette package: a cassette's header and the two file formats (the model itself,
``Interaction`` and ``Cassette``, is plain data in ``mcp_replay_action.model.cassette``).

- ``header``: ``CassetteHeader``, the one builder of a recording's ``meta``;
- ``jsonl``: our JSONL format (``load`` reads either format, ``save``/``dumps`` write ours);
- ``recorder_json``: mcp-recorder's JSON format, read and written.

The names callers need are re-exported here: ``from mcp_replay_action.cassette import load``.
"""

from mcp_replay_action.cassette.jsonl import (
    SCHEMA_ID,
    cut_short_line,
    cut_short_note,
    dumps,
    dumps_over,
    interaction_from_json,
    iter_lines,
    load,
    save,
    with_lines,
)
from mcp_replay_action.host.files import atomic_write_text

__all__ = [
    "SCHEMA_ID",
    "atomic_write_text",
    "cut_short_line",
    "cut_short_note",
    "dumps",
    "dumps_over",
    "interaction_from_json",
    "iter_lines",
    "load",
    "save",
    "with_lines",
]
