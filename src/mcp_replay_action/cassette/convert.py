"""``mcp-replay convert``: a cassette from one file format to the other (ours is JSONL, mcp-recorder's
is one JSON document; see ``cassette/recorder_json.py``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mcp_replay_action.cassette import atomic_write_text, dumps, load
from mcp_replay_action.cassette.recorder_json import dumps_recorder_json
from mcp_replay_action.errors import ConfigError

Format = Literal["jsonl", "recorder-json"]
FORMATS: tuple[str, ...] = ("jsonl", "recorder-json")


@dataclass(frozen=True)
class Conversion:
    """What :func:`convert_file` did."""

    src: str
    dst: str
    to: Format
    interactions: int


def target_format(dst: str | os.PathLike[str], to: str | None = None) -> Format:
    """The format to write: ``to`` if given, else from the extension (``.jsonl`` ours, ``.json`` theirs)."""
    if to is not None:
        if to not in FORMATS:
            raise ConfigError(f"unknown cassette format {to!r} (expected one of {', '.join(FORMATS)})")
        return "jsonl" if to == "jsonl" else "recorder-json"
    suffix = Path(dst).suffix.lower()
    if suffix == ".jsonl":
        return "jsonl"
    if suffix == ".json":
        return "recorder-json"
    raise ConfigError(
        f"{dst}: cannot tell the format from the extension {suffix or '(none)'!r}; "
        "pass --to jsonl or --to recorder-json"
    )


def convert_file(src: str | os.PathLike[str], dst: str | os.PathLike[str], to: str | None = None) -> Conversion:
    """Read ``src`` (either format) and write it to ``dst`` in the ``to`` format, atomically."""
    fmt = target_format(dst, to)
    cassette = load(src)
    text = dumps(cassette) if fmt == "jsonl" else dumps_recorder_json(cassette)
    atomic_write_text(dst, text)
    return Conversion(src=str(src), dst=str(dst), to=fmt, interactions=len(cassette.interactions))
