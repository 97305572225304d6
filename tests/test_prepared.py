"""prepared.py: every fast path behind the seam (narrowing, reading ahead, the one-leaf shortcut,
redaction beside what was learned, decoding beside the expected text) finds exactly what the
plain path finds with every fast path off (the reference), on random JSON trees with one or more
random changes (fixed seeds), and is really taken: each counts itself on the ``Prepared`` it was
given, so a fast path that quietly did nothing fails here."""

from __future__ import annotations

import collections
import copy
import json
import random
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.compare.engine import compare
from mcp_replay_action.compare.options import CompareOptions
from mcp_replay_action.redact import Redactor
from mcp_replay_action.replay.engine import ahead_steps
from mcp_replay_action.transport.stdio import StdioTransport
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.prepared import Prepared

pytestmark = pytest.mark.integration

PLAIN = Limits(fast=False)
# Every fast path on, from small sizes on: the generated texts are a few KiB to a few hundred.
FAST = Limits(narrow_min_chars=0, stretch_min=8, read_ahead_chars=1, learn_min_chars=200, beside_from=4096)
WORDS = ["alpha", "beta", "2026-11-30T10:00:00Z", "0x1f2e", "x{y}", "a,b]", 'é "q" \\']
SECRETS = [
    "password=hunter2hunter2",
    "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5",
    "Bearer abcdefghijklmnopqrstuvwxyz0123",
]
OPTIONS = [
    CompareOptions(),
    CompareOptions(allow_reorder=True),
    CompareOptions(ignore_keys=("score",)),
    CompareOptions(ignore_paths=("result.content[].text{json}.meta",)),
]


def _leaf(rng: random.Random) -> Any:
    return rng.choice(
        [rng.randint(-9, 9), rng.random() * 100, True, False, None, rng.choice(WORDS), f"w{rng.randint(0, 99)}"]
    )


def _tree(rng: random.Random, depth: int = 0) -> Any:
    if depth > 3 or rng.random() < 0.3:
        return _leaf(rng)
    if rng.random() < 0.5:
        return {f"k{i}": _tree(rng, depth + 1) for i in range(rng.randint(0, 5))}
    return [_tree(rng, depth + 1) for _ in range(rng.randint(0, 5))]


def _document(rng: random.Random) -> dict[str, Any]:
    """A long named list of records (what a server lists) beside a random tree."""
    records = [
        {"name": f"item-{i}", "score": rng.randint(0, 9), "tags": ["a", "b"][: rng.randint(0, 2)], "v": _tree(rng, 2)}
        for i in range(rng.randint(30, 300))
    ]
    return {"records": records, "meta": _tree(rng), "total": len(records)}


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _changed(rng: random.Random, doc: Any, changes: int, secret: bool = False) -> Any:
    """``doc`` with ``changes`` random edits: a leaf or subtree replaced, a member removed or
    added, a record renamed, moved or removed; with ``secret``, one edit writes a secret."""
    out = copy.deepcopy(doc)
    for n in range(changes):
        path = rng.choice(_paths(out)[1:])
        *above, last = path
        parent = out
        for step in above:
            parent = parent[step]
        what = rng.random()
        if secret and n == 0:
            parent[last] = f"note {rng.choice(SECRETS)} end"
        elif what < 0.5:
            parent[last] = _leaf(rng) if rng.random() < 0.8 else _tree(rng, 2)
        elif what < 0.65:
            del parent[last]
        elif what < 0.8 and isinstance(parent, list):
            parent.insert(last, _tree(rng, 3))
        elif what < 0.9:
            records = out["records"]
            if records:
                records.insert(rng.randrange(len(records)), records.pop(rng.randrange(len(records))))
        else:
            records = out["records"]
            if records:
                records[rng.randrange(len(records))]["name"] = rng.choice(["item-x", "item-3", "2026-12-01T09:00:00Z"])
    return out


def _answer(doc: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": json.dumps(doc)}]}}


@pytest.mark.parametrize("seed", range(6))
def test_compare_given_what_was_prepared_finds_what_the_plain_compare_finds(seed: int) -> None:
    """Narrowing, the read-ahead it takes runs and names from (read whole, a few steps, or not at
    all) and the one-leaf shortcut give the plain path's findings, and each is taken."""
    fast_limits = replace(FAST, run_chars=700)  # runs of a few records: many, in a short text
    rng = random.Random(seed)
    taken: collections.Counter[str] = collections.Counter()
    for case in range(20):
        doc = _document(rng)
        if case % 4 == 0:  # one leaf changed, the shortcut's case
            edited = copy.deepcopy(doc)
            edited["records"][rng.randrange(len(edited["records"]))]["v"] = "changed"
        else:
            edited = _changed(rng, doc, rng.choice([1, 1, 2, 3]))
        recorded, live = _answer(doc), _answer(edited)
        options = rng.choice(OPTIONS)
        plain = compare(recorded, live, replace(options, limits=PLAIN))
        prepared = Prepared(fast_limits, recorded)
        redactor = Redactor()
        steps = ahead_steps(prepared, redactor)
        for _ in range(rng.choice([0, 3, 1 << 30])):
            if next(steps, False) is not None:
                break
        fast = compare(recorded, live, replace(options, limits=fast_limits), prepared)
        prepared.close()
        assert fast == plain, (seed, case, options)
        taken += prepared.taken
    assert taken["narrow"] >= 15 and taken["one_leaf"] >= 1, taken
    assert seed % 3 == 2 or taken["read_ahead"] >= 1, taken  # names read ahead, taken by the narrowing


@pytest.mark.parametrize("seed", range(4))
def test_redaction_beside_what_was_learned_is_the_plain_redaction(seed: int) -> None:
    """A live answer redacted beside its recording, with what was learned of the recording's long
    text, is what redacting it alone gives, hits and all; and the learned look settles most."""
    rng = random.Random(100 + seed)
    taken: collections.Counter[str] = collections.Counter()
    configs: list[dict[str, Any]] = [{}, {"keys": ("tags",)}, {"env_values": {"DB_PASSWORD": "item-7-secret"}}]
    for case in range(20):
        config = rng.choice(configs)
        clean = Redactor(**config).apply(_answer(_document(rng)))  # a recording is redacted on disk
        doc = json.loads(clean["result"]["content"][0]["text"])
        live = _answer(_changed(rng, doc, rng.choice([1, 2]), secret=rng.random() < 0.4))
        alone = Redactor(**config)
        expected = alone.apply(live)
        beside = Redactor(**config)
        prepared = Prepared(FAST, clean)
        for _ in ahead_steps(prepared, beside):
            pass
        got = beside.apply_beside(live, clean, prepared)
        plain = Redactor(**config).apply_beside(live, clean)  # nothing prepared: the plain walk
        assert got == expected == plain, (seed, case, config)
        assert beside.hits == alone.hits, (seed, case, config)
        taken += prepared.taken
    assert taken["learned_redaction"] >= 5, taken


def test_a_long_line_decoded_beside_the_expected_text_is_what_json_gives(tmp_path: Path) -> None:
    """A real process writes long answers, each its recording changed at random: read with a
    ``Prepared`` for that recording, each is what ``json.loads`` gives, and most are decoded
    beside it."""
    rng = random.Random(7)
    recorded = []
    lines = []
    for _ in range(8):
        doc = _document(rng)
        doc["records"] *= 30  # lines of a few hundred KiB: read in many pieces
        recorded.append(_answer(doc))
        live = _answer(_changed(rng, doc, rng.choice([0, 1, 2])))
        lines.append(json.dumps(live, ensure_ascii=rng.random() < 0.5))
    (tmp_path / "out.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    # One answer per request, as a server answers: each is read with what was prepared for it.
    code = (
        "import sys\n"
        "answers = open(sys.argv[1], encoding='utf-8').read().split('\\n')\n"
        "for n, _ in enumerate(sys.stdin):\n"
        "    sys.stdout.write(answers[n] + '\\n')\n"
        "    sys.stdout.flush()\n"
    )
    transport = StdioTransport([sys.executable, "-c", code, str(tmp_path / "out.jsonl")])
    taken: collections.Counter[str] = collections.Counter()
    try:
        transport.start()
        for n, (line, answer) in enumerate(zip(lines, recorded, strict=True)):
            prepared = Prepared(FAST, answer)
            transport.send({"jsonrpc": "2.0", "id": n, "method": "tools/call"})
            got = transport.receive(10, prepared)
            assert got == json.loads(line)
            taken += prepared.taken
    finally:
        transport.close()
    assert taken["beside"] >= 6, taken  # of 8


def test_with_the_fast_paths_off_nothing_is_prepared(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MCP_REPLAY_FAST=0`` is read into ``Limits`` (where it is read at all), and turns every
    fast path off; a prepared answer the plain path is given changes nothing."""
    monkeypatch.setenv("MCP_REPLAY_FAST", "0")
    assert Limits.from_env() == PLAIN and CompareOptions().limits == PLAIN
    monkeypatch.setenv("MCP_REPLAY_FAST", "1")
    assert Limits.from_env().fast and CompareOptions().limits.fast
    monkeypatch.delenv("MCP_REPLAY_FAST")
    assert Limits.from_env() == Limits()
    rng = random.Random(3)
    doc = _document(rng)
    recorded, live = _answer(doc), _answer(_changed(rng, doc, 1))
    prepared = Prepared(PLAIN, recorded)
    assert not list(ahead_steps(prepared, Redactor()))
    assert compare(recorded, live, CompareOptions(limits=PLAIN), prepared) == compare(
        recorded, live, CompareOptions(limits=PLAIN)
    )
    assert not prepared.taken
