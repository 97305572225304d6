"""The cassette format: loading, validation errors with file:line, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.cassette import dumps, load, save, with_lines
from mcp_replay_action.errors import CassetteError
from mcp_replay_action.model.cassette import Cassette, Interaction

pytestmark = pytest.mark.unit

HEADER = {"schema": "mcp-replay/cassette@1", "meta": {"server": ["python", "s.py"]}}
REQ = {
    "seq": 0,
    "kind": "request",
    "ts": 0.0,
    "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    "response": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
}
NOTE = {
    "seq": 1,
    "kind": "notification",
    "ts": 0.1,
    "message": {"jsonrpc": "2.0", "method": "notifications/initialized"},
    "response": None,
}


def write(tmp_path: Path, *lines: object, raw: str | None = None) -> Path:
    path = tmp_path / "c.jsonl"
    text = raw if raw is not None else "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines)
    path.write_text(text)
    return path


def test_load_round_trip_and_line_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, HEADER, REQ, NOTE)
    cassette = load(path)
    assert cassette.meta == HEADER["meta"]
    assert [i.line for i in cassette.interactions] == [2, 3]
    assert cassette.interactions[0].label == "tools/list"
    assert cassette.requests == (cassette.interactions[0],)
    save(cassette, tmp_path / "out.jsonl")
    again = load(tmp_path / "out.jsonl")
    assert again.interactions == cassette.interactions


def test_blank_lines_keep_real_line_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, raw=json.dumps(HEADER) + "\n\n" + json.dumps(REQ) + "\n")
    assert load(path).interactions[0].line == 3


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        ([{"schema": "mcp-replay/cassette@9"}], 1, "unknown schema"),
        ([{"meta": {}}], 1, "missing header"),
        ([HEADER, "{not json"], 2, "invalid JSON"),
        ([HEADER, REQ, {**REQ, "seq": 1, "kind": "bogus"}], 3, "invalid interaction"),
        ([HEADER, {k: v for k, v in REQ.items() if k != "message"}], 2, "message"),
        ([HEADER, {**REQ, "response": None, "seq": 2}], 2, "invalid interaction"),
        ([HEADER, REQ, REQ], 3, "duplicate seq"),
        ([HEADER, [1, 2]], 2, "expected a JSON object"),
        ([HEADER, {**NOTE, "message": {"jsonrpc": "2.0", "id": 3, "method": "x"}}], 2, "invalid interaction"),
    ],
)
def test_malformed_cassettes_name_file_and_line(tmp_path: Path, lines: list[object], line: int, words: str) -> None:
    path = write(tmp_path, *lines)
    with pytest.raises(CassetteError) as info:
        load(path)
    assert info.value.line == line
    assert f"{path}:{line}: " in str(info.value)
    assert words in str(info.value)
    assert "\n" not in info.value.one_line()


def test_missing_empty_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such file"):
        load(tmp_path / "nope.jsonl")
    with pytest.raises(CassetteError, match="empty file"):
        load(write(tmp_path, raw=""))
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(CassetteError, match="not UTF-8"):
        load(binary)


def test_atomic_save_leaves_old_file_when_write_fails(tmp_path: Path) -> None:
    target = tmp_path / "keep.jsonl"
    good = Cassette(meta={"a": 1}, interactions=(Interaction(seq=0, kind="notification", message=NOTE["message"]),))
    save(good, target)
    before = target.read_text()

    class Boom:
        def __repr__(self) -> str:
            raise RuntimeError("boom")

    bad = Cassette(meta={"a": object()}, interactions=())
    with pytest.raises(TypeError):
        save(bad, target)
    assert target.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.jsonl"]  # no temp file left behind


def test_dumps_is_one_interaction_per_line(tmp_path: Path) -> None:
    inter = Interaction(
        seq=0, kind="request", message=REQ["message"], response={"jsonrpc": "2.0", "id": 1, "result": {"text": "a\nb"}}
    )
    text = dumps(Cassette(meta={}, interactions=(inter,)))
    assert len(text.splitlines()) == 2
    assert with_lines(Cassette(interactions=(inter,))).interactions[0].line == 2
    # The newline inside the value is written escaped, and reads back as the same text.
    line = text.splitlines()[1]
    assert "\\n" in line and json.loads(line)["response"]["result"]["text"] == "a\nb"


def test_an_interaction_read_from_a_line_equals_the_one_its_constructor_makes() -> None:
    import dataclasses
    import pickle

    from mcp_replay_action.cassette.schema import interaction_from_json

    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add"}}
    response = {"jsonrpc": "2.0", "id": 1, "result": {}}
    docs = [
        {"seq": 2, "kind": "request", "message": message, "response": response},
        {"seq": 3, "kind": "request", "message": message, "response": response, "ts": 1, "latency_ms": 2.5},
        {"seq": 4, "kind": "notification", "message": {"jsonrpc": "2.0", "method": "x"}, "transport": {"k": 1}},
    ]
    for doc in docs:
        read = interaction_from_json(doc, path="c.jsonl", line=7)
        fields = {"ts": 0.0, "response": None, "latency_ms": None, "transport": None, **doc, "line": 7}
        made = Interaction(**{**fields, "ts": float(fields["ts"])})
        assert read == made and repr(read) == repr(made)
        assert list(vars(read)) == [f.name for f in dataclasses.fields(Interaction)]
        assert type(read.ts) is float and pickle.loads(pickle.dumps(read)) == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            read.seq = 9  # type: ignore[misc]


# Blank lines as a file may hold them: every character str.isspace (and so str.strip) knows as
# space, a carriage return (read as a line break), and nothing at all.
_BLANKS = ("\n", " \n", "\t\t\n", "\r\n", "\r", "\u3000\n", "\x1c\x1d\n", "\u2028\n", "\x0b\x0c\n")


def _random_cassette(rng: Any, path: Path) -> None:
    """A cassette of a few interactions of very different lengths, with blank lines anywhere
    (before the header too) and a file that may end without a newline or with blank lines."""
    parts = [rng.choice(_BLANKS) for _ in range(rng.randrange(3))]
    parts.append(json.dumps(HEADER) + "\n")
    for seq in range(rng.randrange(1, 9)):
        parts.extend(rng.choice(_BLANKS) for _ in range(rng.randrange(3)))
        text = 'é \\ " \u2028 ' + "x" * rng.choice((0, 10, 300, 3000))
        line = {
            **REQ,
            "seq": seq,
            "message": {**REQ["message"], "id": seq},
            "response": {"jsonrpc": "2.0", "id": seq, "result": {"content": [{"type": "text", "text": text}]}},
        }
        parts.append(json.dumps(line, ensure_ascii=rng.random() < 0.5) + rng.choice(("\n", "\r\n", "\r")))
    parts.extend(rng.choice(_BLANKS) for _ in range(rng.randrange(3)))
    text = "".join(parts)
    if rng.random() < 0.3:
        text = text.rstrip("\n")
    path.write_text(text, newline="")


def test_a_streamed_cassette_hands_out_kept_and_known_lines_as_read_ones(tmp_path: Path, monkeypatch: Any) -> None:
    """A streamed cassette keeps its longest line decoded from the check pass (``KEEP_LINE_CHARS``)
    and any interactions it is given (``reusing``): each is handed out for its line, in order,
    without decoding that line again, and a reader that stops at one never reads its line. On
    random files with blank lines of every kind, every pass equals the loaded cassette's."""
    import random

    from mcp_replay_action.cassette import jsonl

    read: list[int] = []  # line numbers read by the passes
    decoded: list[int] = []  # line numbers decoded by the passes
    iter_lines, decode = jsonl.iter_lines, jsonl._decode

    def counted_lines(path: str) -> Any:
        for number, text in iter_lines(path):
            read.append(number)
            yield number, text

    def counted_decode(text: str, path: str, line: int) -> Any:
        decoded.append(line)
        return decode(text, path, line)

    rng = random.Random(11)
    for trial in range(150):
        path = tmp_path / f"c{trial}.jsonl"
        _random_cassette(rng, path)
        plain = [(n, t) for n, t in enumerate(open(path, encoding="utf-8"), start=1) if t.strip()]
        assert list(jsonl.iter_lines(path)) == plain  # blank is what strip() calls blank
        held = load(path).interactions
        monkeypatch.setattr(jsonl, "STREAM_ABOVE_BYTES", 0)
        monkeypatch.setattr(jsonl, "KEEP_LINE_CHARS", rng.choice((1, 500, 5000)))
        streamed = load(path, stream=True).interactions
        monkeypatch.undo()
        assert isinstance(streamed, jsonl.StreamedInteractions)
        assert len(streamed.known) <= 1 and set(streamed.known) <= {i.line for i in held}
        reused = rng.sample(list(held), rng.randrange(len(held) + 1))
        for lazy in (streamed, streamed.reusing(reused)):
            monkeypatch.setattr(jsonl, "iter_lines", counted_lines)
            monkeypatch.setattr(jsonl, "_decode", counted_decode)
            for _ in range(2):
                read.clear()
                decoded.clear()
                assert tuple(lazy) == held
                assert sorted(decoded) == sorted(i.line for i in held if i.line not in lazy.known)
                assert read == sorted(set(read))  # every line read once, in order
                assert read[-1] == held[-1].line or held[-1].line in lazy.known
            # A reader that stops at an interaction it is handed reads no further line, and not
            # that interaction's line when it was known and no blank line is before it.
            stop = rng.randrange(len(held))
            read.clear()
            handed = iter(lazy)
            for _ in range(stop):
                next(handed)
            inter = next(handed)
            del handed  # stopped here: the pass is closed
            assert inter == held[stop]
            if inter.line in lazy.known and inter.line - 1 in dict(plain):
                assert max(read, default=0) < inter.line
            else:
                assert max(read) <= inter.line
            monkeypatch.undo()


def test_a_line_is_decoded_as_json_loads_decodes_it_or_refused_with_its_words() -> None:
    """``_decode`` reads a line that is one object straight with the decoder's scanner: every line
    (written here or by hand: spaces and CR after it, a BOM, text after the object, other kinds of
    space, NaN, deep nesting, arrays, cut short) gives json.loads' value or json.loads' error."""
    import random

    from mcp_replay_action.cassette.jsonl import _decode

    def reference(text: str) -> tuple[str, str]:
        try:
            return "ok", repr(json.loads(text))
        except json.JSONDecodeError as exc:
            return "error", f"invalid JSON: {exc.msg} (column {exc.colno})"
        except RecursionError:
            return "error", "invalid JSON: nested too deeply"

    def decoded(text: str) -> tuple[str, str]:
        try:
            return "ok", repr(_decode(text, "c.jsonl", 3))
        except CassetteError as exc:
            assert (exc.path, exc.line) == ("c.jsonl", 3)
            return "error", exc.reason

    rng = random.Random(4)
    bodies = [
        '{"seq":2,"kind":"request","message":{"jsonrpc":"2.0","id":1,"method":"tools/call"},"response":null}',
        '{"a": NaN, "b": -Infinity, "c": [1, 2.5e3, true, null], "d": "\\u00e9\\ud800"}',
        "{}",
        '{"a": {"b": [{"c": "x"}]}}',
        "{" * 3000 + "}" * 3000,
        '{"a": 1',
        "[1, 2]",
        "7",
    ]
    tails = ["", "\n", " \n", "\t\r\n", "\r\n", " x\n", "}\n", ",\n", "\u00a0\n", "\x0b\n", "\x0c", " {}\n"]
    heads = ["", "", "", " ", "\ufeff", "\n"]
    for _ in range(3000):
        text = rng.choice(heads) + rng.choice(bodies) + rng.choice(tails)
        assert decoded(text) == reference(text), text[:80]
