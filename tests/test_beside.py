"""beside.decode_beside: json.loads' value, exactly, or None; the known text itself where the line
spells it, a text built around the changed middle where it spells it with a stretch changed."""

from __future__ import annotations

import json
import random
import re
import tracemalloc
from typing import Any

import pytest

from mcp_replay_action.values import beside
from mcp_replay_action.values.beside import decode_beside

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]

# Characters every escape kind and every UTF-8 length is made of; the surrogate is lone.
ALPHABET = ['"', "\\", "/", "\n", "\t", "\r", "\b", "\f", "\x01", "\x1f", "\x7f", "<", "&", "é", "日", "\u2028"]
ALPHABET += ["\U0001f600", "a", "b", " ", "{", "}", "[", "]", ":", ","]


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks, anchors and pieces of a few characters: every path of the chunked comparison
    (many chunks, halving in the first or a later one, pieces of the suffix) on short texts."""
    monkeypatch.setattr(beside, "_CHUNK", 7)
    monkeypatch.setattr(beside, "_ANCHOR", 5)
    monkeypatch.setattr(beside, "_PIECE", 3)


def text_of(rnd: random.Random, size: int, astral: bool = True) -> str:
    """A text of ``size`` characters: mostly plain, with every escape kind and non-ASCII."""
    kinds = ALPHABET if astral else [c for c in ALPHABET if c != "\U0001f600"]
    out = []
    for _ in range(size):
        out.append(rnd.choice(kinds) if rnd.random() < 0.3 else rnd.choice("abcdefgh0123"))
    return "".join(out)


def json_text(rnd: random.Random, records: int) -> str:
    """A JSON text as a tool answers one (its records hold escapes and non-ASCII)."""
    items = [
        {"id": i, "name": text_of(rnd, rnd.randint(0, 6)), "v": rnd.choice([1, 1.5, None, True])}
        for i in range(records)
    ]
    return json.dumps({"records": items}, ensure_ascii=rnd.random() < 0.5)


def mutated(rnd: random.Random, known: str) -> str:
    """``known`` with one to three stretches replaced, inserted or deleted, at its start, middle
    or end (or not changed at all)."""
    text = known
    for _ in range(rnd.choice([0, 1, 1, 1, 2, 3])):
        where = rnd.choice(["start", "end", "any", "any"])
        at = {"start": 0, "end": len(text)}.get(where, rnd.randint(0, len(text)))
        cut = rnd.choice([0, 0, 1, 2, 5])
        new = text_of(rnd, rnd.choice([0, 1, 1, 2, 4]))
        if rnd.random() < 0.1:
            new += "\ud800"  # a lone surrogate in the live text
        text = text[:at] + new + text[at + cut :]
    return text


def envelope(rnd: random.Random, text: str, known: str) -> Any:
    """An answer holding ``text``, perhaps also ``known`` itself or as JSON inside a string."""
    content: list[Any] = [{"type": "text", "text": text}]
    if rnd.random() < 0.2:
        content.insert(rnd.randint(0, 1), {"type": "text", "text": json.dumps({"inner": known})})
    if rnd.random() < 0.1:
        content.append({"type": "text", "text": known})
    if rnd.random() < 0.1:
        content.insert(0, {"type": "text", "text": known[:20]})
    answer: Any = {"jsonrpc": "2.0", "id": rnd.choice([1, "x", 2.5]), "result": {"content": content}}
    if rnd.random() < 0.1:
        answer = [answer]
    return answer


def foreign(line: str, rnd: random.Random) -> str:
    """Escapings other writers use: Go's \\u003c for "<" and \\u0026 for "&", upper-case hex,
    "\\/" for "/", \\u escapes for what JSON.stringify writes as is."""
    kind = rnd.choice(["go", "upper", "slash", "unicode"])
    if kind == "go":
        return line.replace("<", "\\u003c").replace("&", "\\u0026")
    if kind == "upper":
        # Real escapes only: the backslash not itself escaped.
        return re.sub(r"(?<!\\)((?:\\\\)*)\\u([0-9a-f]{4})", lambda m: m.group(1) + "\\u" + m.group(2).upper(), line)
    if kind == "slash":
        return line.replace("/", "\\/")
    return line.replace("\u2028", "\\u2028").replace("é", "\\u00e9")


def spelled(rnd: random.Random, value: Any) -> bytes:
    """``value`` as some writer writes it: either convention, spaces in the envelope or not."""
    separators = rnd.choice([(",", ":"), (", ", ": "), (" ,\t", " :\r\n ")])
    line = json.dumps(value, ensure_ascii=rnd.random() < 0.5, separators=separators)
    if rnd.random() < 0.15:
        line = foreign(line, rnd)
    if rnd.random() < 0.1:
        line += rnd.choice([" ", "\t", "\r"])
    return line.encode("utf-8", "surrogatepass")


def loads(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError as exc:
        return exc


def check(line: bytes, known: str) -> Any:
    """decode_beside's value, held to json.loads': the same repr (types, key order, -0.0, 1 and
    1.0 apart) or None; a line loads rejects is None. Clears only what it decoded."""
    expected = loads(line)
    buffer = bytearray(line)
    got = decode_beside(buffer, known)
    if got is None:
        assert buffer == line  # untouched: the caller decodes it as usual
        return None
    assert not isinstance(expected, ValueError), line
    assert repr(got) == repr(expected), line
    assert len(buffer) == 0
    return got


def texts(value: Any) -> list[str]:
    found = []
    todo = [value]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
        elif isinstance(node, str):
            found.append(node)
    return found


@pytest.mark.usefixtures("small_chunks")
def test_many_lines_decode_as_json_loads_decodes_them() -> None:
    rnd = random.Random(11)
    decoded = same = 0
    for _ in range(3000):
        known = json_text(rnd, rnd.randint(1, 12)) if rnd.random() < 0.7 else text_of(rnd, rnd.randint(1, 300))
        text = mutated(rnd, known)
        line = spelled(rnd, envelope(rnd, text, known))
        got = check(line, known)
        if got is not None:
            decoded += 1
            same += any(t is known for t in texts(got))
    assert decoded > 2000  # nearly every line is decoded beside its text
    assert same > 300


@pytest.mark.usefixtures("small_chunks")
def test_a_line_that_spells_known_exactly_holds_known_itself() -> None:
    rnd = random.Random(3)
    for _ in range(300):
        known = json_text(rnd, rnd.randint(1, 8))
        value = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": known}]}}
        for ensure_ascii in (True, False):
            line = json.dumps(value, ensure_ascii=ensure_ascii).encode()
            got = check(line, known)
            assert got is not None
            assert got["result"]["content"][0]["text"] is known


@pytest.mark.usefixtures("small_chunks")
def test_a_changed_text_is_built_from_known_around_its_middle() -> None:
    rnd = random.Random(5)
    decoded = 0
    for _ in range(500):
        known = json_text(rnd, rnd.randint(2, 10))
        text = mutated(rnd, known)
        if "\ud800" in text:
            continue
        value = {"result": {"content": [{"type": "text", "text": text}]}, "jsonrpc": "2.0", "id": 7}
        for ensure_ascii in (True, False):
            line = json.dumps(value, ensure_ascii=ensure_ascii).encode()
            got = decode_beside(bytearray(line), known)
            if got is None:
                # Found by neither end: both changed (no stretch of known in between is looked for).
                assert not text.startswith(known[:5]) and not text.endswith(known[-5:])
                continue
            decoded += 1
            assert repr(got) == repr(json.loads(line))
    assert decoded > 700


@pytest.mark.usefixtures("small_chunks")
def test_a_known_text_with_surrogates_is_left_to_the_usual_decode() -> None:
    # "\ud83d\ude00" in a line is one character, and two surrogates in known escape to it.
    for known in ["{\ud83d\ude00}" * 20, "[\ud800" + "x" * 50 + "]"]:
        for line in [
            json.dumps({"t": known}).encode(),
            json.dumps({"t": known}, ensure_ascii=False).encode("utf-8", "surrogatepass"),
        ]:
            assert decode_beside(bytearray(line), known) is None
    known = "{" + "x" * 40 + "}"
    line = json.dumps({"t": known[:10] + "\ud83d\ude00" + known[10:]}).encode()
    assert check(line, known) is not None  # a pair in the live text alone is decoded


@pytest.mark.usefixtures("small_chunks")
def test_cut_points_never_fall_inside_an_escape() -> None:
    # known ends as the line does, but the line's last characters are one escape: "n" vs "\n",
    # "u0041" vs "\u0041", and a backslash pair split.
    cases = [
        ("{" + "a" * 30 + "n", "{" + "a" * 30 + "\n"),
        ("{" + "a" * 30 + "u0041", "{" + "a" * 30 + "\u0041"),
        ("{" + "a" * 30 + "\\", "{" + "a" * 30 + "\\\\"),
        ("n" + "a" * 30 + "}", "\n" + "a" * 30 + "}"),
        ("\\" + "a" * 30 + "}", "\\\\" + "a" * 30 + "}"),
        ("{" + "a" * 15 + "n" + "a" * 15, "{" + "a" * 15 + "\n" + "a" * 15),
    ]
    for known, text in cases:
        for ensure_ascii in (True, False):
            check(json.dumps({"t": text}, ensure_ascii=ensure_ascii).encode(), known)
            check(json.dumps({"t": text}, ensure_ascii=ensure_ascii).encode().replace(b"\\n", b"\\u000a"), known)


@pytest.mark.usefixtures("small_chunks")
def test_a_token_must_be_a_real_string_token() -> None:
    known = '{"a": "' + "x" * 40 + '"}'
    inner = json.dumps(known)  # known as JSON inside a string: \"{\\\"a ...
    for value in (
        {"s": inner},
        {"s": inner, "t": known},
        {"s": "\\" + known},
        {"s": '"' + known + '"'},
        {"s": known + '", "t": "' + known},
        [known, known],
        {known: 1},
        {"t": known, "t ": 2},
        {"t": 1, known: known},
    ):
        for ensure_ascii in (True, False):
            check(json.dumps(value, ensure_ascii=ensure_ascii).encode(), known)


@pytest.mark.usefixtures("small_chunks")
def test_duplicate_keys_keep_the_last_value_as_json_loads_does() -> None:
    known = "[" + "y" * 60 + "]"
    changed = known[:30] + "Z" + known[31:]
    for raw in (
        '{"t": ' + json.dumps(known) + ', "t": "x"}',
        '{"t": "x", "t": ' + json.dumps(known) + "}",
        '{"t": ' + json.dumps(changed) + ', "t": ' + json.dumps(known) + "}",
        '{"t": "x", "u": {"t": 1, "t": ' + json.dumps(changed) + "}}",
    ):
        check(raw.encode(), known)


@pytest.mark.usefixtures("small_chunks")
def test_truncated_and_broken_lines_are_none() -> None:
    rnd = random.Random(21)
    for _ in range(1500):
        known = json_text(rnd, rnd.randint(1, 6))
        line = bytearray(spelled(rnd, envelope(rnd, mutated(rnd, known), known)))
        how = rnd.choice(["cut", "flip", "byte", "drop", "nul"])
        at = rnd.randrange(len(line))
        if how == "cut":
            del line[at:]
        elif how == "flip":
            line[at] = rnd.choice(b'"\\{}[],:u')
        elif how == "byte":
            line[at] = rnd.choice([0xFF, 0xC3, 0x80, 0xED, 0x00, 0x0A, 0x1F])
        elif how == "drop":
            del line[at]
        else:
            line[1:1] = b"\x00"
        check(bytes(line), known)


@pytest.mark.usefixtures("small_chunks")
def test_lines_json_loads_reads_otherwise_are_left_to_it() -> None:
    known = "{" + "k" * 40 + "}"
    value = json.dumps({"t": known})
    for line in (
        value.encode("utf-16"),
        value.encode("utf-8-sig"),
        b" " + value.encode(),
        json.dumps(known).encode(),
        b"{}",
        b"",
    ):
        assert decode_beside(bytearray(line), known) is None


def test_a_changed_text_is_built_without_a_second_copy_and_after_the_line_is_let_go() -> None:
    # Real sizes: the in-place appends (beside._build) and the early clear of the line are the
    # point of the module. What it allocates while decoding is the text and little more.
    rnd = random.Random(1)
    record = json.dumps({"id": 1, "name": "item", "tags": ["a", "b"]})
    known = "[" + ",".join([record] * 60000) + "]"  # 2.6 MiB
    for where in (0.0, 0.5, 1.0):
        at = int(len(known) * where)
        text = known[:at] + text_of(rnd, 5) + known[at + 3 :]
        line = bytearray(json.dumps({"result": {"content": [{"type": "text", "text": text}]}}).encode())
        del text
        tracemalloc.start()
        try:
            got = decode_beside(line, known)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert got is not None and len(line) == 0
        assert peak < len(known) * 1.1 + (1 << 20)  # a copy of the prefix made twice would not be


def test_the_build_appends_in_place() -> None:
    known = "x" * (8 << 20)
    tracemalloc.start()
    try:
        text = beside._build(known, 4 << 20, "yy", 4 << 20, 1 << 16)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert text == known[: 4 << 20] + "yy" + known[4 << 20 :]
    assert peak < len(known) * 1.2


def read_in_pieces(rnd: random.Random, line: bytes, known: str) -> tuple[beside.Reader, int]:
    """A Reader fed ``line`` in pieces of random sizes; and the most it held at once."""
    first = rnd.randint(0, min(len(line), 80))
    reader = beside.Reader(known, bytearray(line[:first]))
    most = len(reader.buf)
    at = first
    while at < len(line):
        size = rnd.choice([1, 2, 7, 30, 200])
        reader.feed(line[at : at + size])
        at += size
        most = max(most, len(reader.buf))
    return reader, most


@pytest.mark.usefixtures("small_chunks")
def test_a_line_read_as_it_arrives_decodes_as_json_loads_does(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(13)
    decoded = 0
    for round_ in range(4000):
        # Now and then the token's start is looked for in the first 300 bytes only.
        monkeypatch.setattr(beside, "_SEEK", 300 if round_ % 5 == 0 else 8 << 20)
        known = json_text(rnd, rnd.randint(1, 12)) if rnd.random() < 0.7 else text_of(rnd, rnd.randint(1, 300))
        line = bytearray(spelled(rnd, envelope(rnd, mutated(rnd, known), known)))
        if rnd.random() < 0.2:
            at = rnd.randrange(len(line))
            if rnd.random() < 0.5:
                del line[at:]
            else:
                line[at] = rnd.choice(b'"\\{}[],:u\xff\x00')
        expected = loads(bytes(line))
        reader, _ = read_in_pieces(rnd, bytes(line), known)
        got = reader.finish()
        if got is None:
            assert reader.line() == line  # given back whole, as it came
            continue
        decoded += 1
        assert not isinstance(expected, ValueError), line
        assert repr(got) == repr(expected), line
    assert decoded > 2000


@pytest.mark.usefixtures("small_chunks")
def test_a_line_read_as_it_arrives_is_never_held_whole_where_it_spells_known() -> None:
    rnd = random.Random(2)
    for _ in range(200):
        known = json_text(rnd, 40)
        at = rnd.choice([len(known), len(known) - 3, len(known) // 2])
        text = known[:at] + "changed" + known[at + 1 :] if at < len(known) else known
        line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}).encode()
        reader, most = read_in_pieces(rnd, line, known)
        got = reader.finish()
        assert got == json.loads(line)
        envelope_size = line.index(b'"text": "') + 10
        # The envelope, a chunk or two of known's escaping and a piece; past a difference, the rest.
        assert most <= envelope_size + 2 * 6 * beside._CHUNK + 200 + len(line) - at, (at, len(known))
        if at == len(known):
            assert got["result"]["content"][0]["text"] is known
