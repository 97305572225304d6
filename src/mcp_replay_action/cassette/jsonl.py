"""Our cassette format: a JSONL file of recorded MCP interactions, read and written.

Line 1 is a header (``{"schema": "mcp-replay/cassette@1", "meta": {...}}``); every further line is
one interaction, so a line number points at exactly one interaction (annotations rely on it).
``load`` also reads mcp-recorder's JSON (``recorder_json``), told apart by content.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import cast

from mcp_replay_action.cassette.recorder_json import from_recorder_json
from mcp_replay_action.cassette.schema import interaction_from_json, schema_error
from mcp_replay_action.errors import CassetteError
from mcp_replay_action.host import inside
from mcp_replay_action.host.files import atomic_write_text
from mcp_replay_action.model import JSON
from mcp_replay_action.model.cassette import Cassette, Interaction

SCHEMA_ID = "mcp-replay/cassette@1"
# A cassette larger than this is not held in memory when read for a check-mode replay: its
# interactions are read from disk a line at a time, again on each pass over them.
STREAM_ABOVE_BYTES = 16 * 1024 * 1024
# Except its longest line, when it is this long or longer: the check pass keeps that one decoded.
# A replay holds it whole at its turn anyway (the recorded answer it compares), and decoding a
# 50 MiB line costs 0.2 s a pass; one line kept keeps memory bounded however long the file is.
KEEP_LINE_CHARS = 1 << 20


class StreamedInteractions:
    """The interactions of a large JSONL cassette ``load`` has already checked, read a line at a
    time on every iteration; only the count is kept, and ``known``: interactions already decoded
    (the check pass's longest line, a confirming run's failed ones), each handed out for its line
    without reading that line again."""

    def __init__(self, path: str, count: int, known: Mapping[int, Interaction] | None = None) -> None:
        self.path = path
        self.count = count
        self.known: Mapping[int, Interaction] = known or {}

    def reusing(self, known: Iterable[Interaction]) -> StreamedInteractions:
        """These interactions, where each of ``known`` (read from this file on an earlier pass)
        stands for its line, not decoded again: a replay confirming a failed answer of 50 MiB
        already holds its interaction."""
        return StreamedInteractions(self.path, self.count, {**self.known, **{i.line: i for i in known}})

    def __iter__(self) -> Iterator[Interaction]:
        lines = iter_lines(self.path)
        header = next(lines, None)
        known = self.known
        left = self.count
        ahead = header[0] + 1 if header else 0  # the line after the last one read
        while left > 0:
            inter = known.get(ahead)
            if inter is not None:
                # Handed out before its line is read: a reader that stops at it (a confirming
                # run, after the answer it gathers) never reads that line's text at all (when no
                # blank line comes before it, as in every file written here).
                yield inter
                left -= 1
                if left:
                    passed = next(lines, None)  # its line, read past
                    if passed is None:
                        return
                    ahead = passed[0] + 1
                continue
            got = next(lines, None)
            if got is None:
                return
            number, text = got
            yield known.get(number) or interaction_from_json(
                _decode(text, self.path, number), path=self.path, line=number
            )
            left -= 1
            ahead = number + 1
        # The last interaction is handed out: whatever follows it is blank, and is not read.

    def __len__(self) -> int:
        return self.count


def _decode(text: str, path: str, line: int) -> JSON:
    if text[:1] == "{":
        # A line that is one object and JSON whitespace after it (every line written here) is
        # read by the decoder's scanner straight away: what json.loads does around it (a BOM,
        # leading whitespace, the trailing check) is ~15% of decoding a 10,000-call cassette.
        try:
            value, end = _SCAN(text, 0)
        except Exception:  # whatever it is (StopIteration, RecursionError), json.loads says it as before
            pass
        else:
            if not text[end:].strip(_JSON_SPACE):
                return value
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(path, line, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise CassetteError(path, line, "invalid JSON: nested too deeply") from None


# json.loads' own scanner (no hooks, NaN and Infinity allowed) and the whitespace it skips.
_SCAN: Callable[[str, int], tuple[JSON, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_JSON_SPACE = " \t\n\r"


def iter_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """(line number, text) of every non-blank line. In the action, no link under the workspace is
    followed on the way to the file (``host/inside.py``): the code under test may have planted one
    after the plan found the cassette."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        fd = inside.open_file(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise CassetteError(str(path), None, "no such file") from None
    except OSError as exc:
        raise CassetteError(str(path), None, f"cannot read it ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise CassetteError(str(path), None, "is a directory, not a cassette")
        # Reading a FIFO or a device could block forever or never end.
        raise CassetteError(str(path), None, "not a regular file (a FIFO, socket or device)")
    try:
        with open(fd, encoding="utf-8") as fh:
            for number, text in enumerate(fh, start=1):
                # Not text.strip(), which copies a 50 MiB line to learn that it is not blank.
                if not text.isspace():
                    yield number, text
    except UnicodeDecodeError as exc:
        raise CassetteError(str(path), None, f"not UTF-8 text ({exc.reason})") from None


def load(path: str | os.PathLike[str], *, stream: bool = False) -> Cassette:
    """Read a cassette: mcp-replay JSONL, or mcp-recorder's JSON (detected by content).

    ``stream``: a JSONL cassette over ``STREAM_ABOVE_BYTES`` is checked line by line and its
    ``interactions`` are a ``StreamedInteractions`` (iterate it; no indexing), so memory stays
    flat however long it is. For readers that only iterate (a check-mode replay)."""
    spath = str(path)
    lines = iter_lines(path)
    first = next(lines, None)
    if first is None:
        raise CassetteError(spath, None, "empty file: expected a header line")
    number, text = first
    stripped = text.lstrip()
    if stripped.startswith("{") and not stripped.rstrip().endswith("}"):
        # A pretty-printed document spanning many lines: the mcp-recorder format.
        return _load_foreign(spath)
    header = _decode(text, spath, number)
    if isinstance(header, dict) and "version" in header and "interactions" in header:
        return _load_foreign(spath)
    if not isinstance(header, dict) or "schema" not in header:
        raise CassetteError(
            spath, number, 'missing header: the first line must be {"schema": "mcp-replay/cassette@1", ...}'
        )
    if header["schema"] != SCHEMA_ID:
        raise CassetteError(spath, number, f"unknown schema {header['schema']!r} (this version reads {SCHEMA_ID!r})")
    reason = schema_error("header", header)
    if reason:
        raise CassetteError(spath, number, f"invalid header: {reason}")
    streamed = stream and os.path.getsize(spath) > STREAM_ABOVE_BYTES
    interactions: list[Interaction] = []
    seen: set[int] = set()
    longest = KEEP_LINE_CHARS - 1
    kept: dict[int, Interaction] = {}  # a streamed cassette's longest line, decoded (KEEP_LINE_CHARS)
    cut = 0
    for number, text in lines:
        try:
            doc = _decode(text, spath, number)
        except CassetteError:
            if text.endswith("\n"):
                raise
            # Only a file's last line can lack its end: a recorder killed while it wrote it.
            # That interaction was in flight; the ones before it are whole.
            cut = number
            break
        inter = interaction_from_json(doc, path=spath, line=number)
        if inter.seq in seen:
            raise CassetteError(spath, number, f"duplicate seq {inter.seq}")
        seen.add(inter.seq)
        if not streamed:
            interactions.append(inter)
        elif len(text) > longest:
            longest = len(text)
            kept = {number: inter}
    if streamed:
        # Typed as the tuple it stands in for: every reader of a streamed cassette only iterates.
        lazy = cast("tuple[Interaction, ...]", StreamedInteractions(spath, len(seen), kept))
        return Cassette(meta=header.get("meta") or {}, interactions=lazy, path=spath, cut_short=cut)
    return Cassette(meta=header.get("meta") or {}, interactions=tuple(interactions), path=spath, cut_short=cut)


def cut_short_line(path: str | os.PathLike[str]) -> int:
    """The number of ``path``'s last line when ``load`` leaves it out as cut short, else 0:
    cheap for every file that ends its last line (all but a killed recording's)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            fh.seek(size - 1)
            if fh.read(1) == b"\n":
                return 0
            fh.seek(0)
            data = fh.read()
    except OSError:
        return 0
    start = data.rfind(b"\n") + 1
    try:
        json.loads(data[start:])
    except (ValueError, RecursionError):
        return data.count(b"\n", 0, start) + 1
    return 0


def cut_short_note(path: str, line: int) -> str:
    """What every reader says of a last line ``load`` left out."""
    return f"{path}:{line}: the last line is cut short (the recording was killed while it wrote it): left out"


def _load_foreign(path: str) -> Cassette:
    return from_recorder_json(path)


def header_line(meta: Mapping[str, JSON], *, escaped: bool = False) -> str:
    """A cassette's first line (no end of line): the schema and ``meta``. ``escaped``: every
    non-ASCII character escaped (the one spelling of a lone surrogate that UTF-8 can hold)."""
    return json.dumps({"schema": SCHEMA_ID, "meta": meta}, ensure_ascii=escaped, separators=(",", ":"))


def interaction_line(inter: Interaction, *, escaped: bool = False) -> str:
    """One interaction's line (no end of line); ``escaped`` as for ``header_line``."""
    return json.dumps(inter.to_json(), ensure_ascii=escaped, separators=(",", ":"))


def dumps(cassette: Cassette) -> str:
    """The JSONL text of a cassette: header, then one interaction per line."""
    out = [header_line(cassette.meta)]
    out.extend(interaction_line(i) for i in cassette.interactions)
    return "\n".join(out) + "\n"


def dumps_over(cassette: Cassette, original: Cassette) -> str:
    """The JSONL text of ``cassette``, an edited copy of ``original`` (read from its file): every
    line whose content did not change keeps the file's original text byte for byte, so a review
    diff shows only what changed, whatever spacing the file was written with."""
    raw = dict(iter_lines(original.path))
    before = {i.seq: i for i in original.interactions}
    out = [header_line(cassette.meta)]
    if cassette.meta == original.meta and 1 in raw:
        out[0] = raw[1].rstrip("\r\n")
    for inter in cassette.interactions:
        old = before.get(inter.seq)
        if old is not None and old == inter and inter.line in raw:
            out.append(raw[inter.line].rstrip("\r\n"))
        else:
            out.append(interaction_line(inter))
    return "\n".join(out) + "\n"


def save(cassette: Cassette, path: str | os.PathLike[str]) -> None:
    """Write a cassette atomically. Redaction is the recorder's job and happens before this."""
    atomic_write_text(path, dumps(cassette))


def with_lines(cassette: Cassette) -> Cassette:
    """Give every interaction the line number it will have once written (header is line 1)."""
    return cassette.with_interactions(replace(i, line=n) for n, i in enumerate(cassette.interactions, start=2))
