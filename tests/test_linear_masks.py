"""Every pattern run over server text is linear in the text's length.

A real server's 4.4 MB MCP App bundle (npm ``@modelcontextprotocol/server-pdf``) once hung a replay
for minutes: the epoch-in-text mask, tried at every position of a long run of word characters,
read to the run's end each time. Here each path server text takes (the masks, normalisation,
the redactor, the report's escaping) meets long adversarial runs at n and 8n characters, timed
in one test as a ratio with a wide margin (8 for linear, 64 for quadratic; the bound is 24), and
the linear epoch mask is checked to find exactly what the plain pattern found.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_replay_action.compare import correlate, masks, normalize
from mcp_replay_action.compare.engine import CompareOptions
from mcp_replay_action.redact import Redactor
from mcp_replay_action.values import safe
from profiles import examples

pytestmark = pytest.mark.unit

# Runs that defeat a pattern which rescans: word characters, digits, hex, spaces, and the near
# matches of each mask (a key and a colon but no epoch, a date start, a clock start, a scheme
# without its host, a temp path, a Python repr that never closes, a flag, a bearer word).
UNITS = [
    "a",
    "7",
    "3f",
    "a1",
    " ",
    " \t",
    "a-",
    "a.",
    "_x",
    "ts: 1",
    "ts=",
    "Mon ",
    "Nov 2 ",
    "2026-",
    "1:2",
    "12/",
    "a+b",
    "http:/",
    "x.y://",
    "/tmp/a1",
    "datetime.date(2026, 1, 1, tzinfo=",
    "-a ",
    "Bearer ",
    "0x",
    "@a #1 ",
    "é9",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE",  # a key's header again and again, never its END
]
SMALL = 25_000
RATIO = 24  # linear is 8; quadratic 64


def _best(fn: Callable[[str], Any], text: str) -> float:
    best = float("inf")
    for _ in range(3):  # CPU time, the least of three: other processes on the machine do not count
        start = time.process_time()
        fn(text)
        best = min(best, time.process_time() - start)
    return best


def _run(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n] + "!"


def _assert_linear(fn: Callable[[str], Any], unit: str) -> None:
    small, big = _best(fn, _run(unit, SMALL)), _best(fn, _run(unit, 8 * SMALL))
    # Below a millisecond the timer's own noise dominates: such a call is linear enough.
    assert big < 0.002 or big / max(small, 1e-4) < RATIO, (unit, small, big)


_REDACTOR = Redactor()
_OPTIONS = CompareOptions()
PATHS: dict[str, Callable[[str], Any]] = {
    "mask_text": lambda s: masks.mask_text.__wrapped__(s, ()),  # type: ignore[attr-defined]
    "mask_text_dated": lambda s: masks.mask_text.__wrapped__(s, (739000,)),  # type: ignore[attr-defined]
    "normalize": lambda s: normalize.normalize({"result": {"contents": [{"uri": "x", "text": s}]}}, _OPTIONS),
    "redact": lambda s: _REDACTOR.apply({"text": s}),
    # threading reads the words of every request and answer text, and finds a word in prose
    "correlate_words": lambda s: correlate.quoted_values({"params": {"text": s}}),
    "correlate_locate": lambda s: correlate.locate(s + " id note_x7k2q9.", "note_x7k2q9", s + " id note_zz81ab."),
    "safe": lambda s: (safe.no_mentions(s), safe.no_references(s), safe.no_workflow_commands(s), safe.xml_text(s)),
}


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("path", sorted(PATHS))
def test_server_text_paths_are_linear_on_long_runs(path: str, unit: str) -> None:
    _assert_linear(PATHS[path], unit)


def test_the_epoch_mask_still_masks_a_time_keyed_epoch_after_a_long_run() -> None:
    text = "a" * 300_000 + " created_at: 1796000000 " + "7" * 1000 + " ts=1796000000123"
    masked = masks.mask_text.__wrapped__(text, ())  # type: ignore[attr-defined]
    assert masked.endswith(" created_at: " + masks.TIMESTAMP + " " + "7" * 1000 + " ts=" + masks.TIMESTAMP)


# The plain pattern the linear one replaced: what it found is what the masks must still find.
_PLAIN_EPOCH = re.compile(r"(?P<key>[A-Za-z_][\w-]*)(?P<q>['\"]?)\s*[:=]\s*(?P<num>\d{10}(?:\d{3})?)(?:\.\d+)?(?!\d)")
_PIECES = ["a", "t", "s", "_", "-", "1", "9", "1796000000", "1796000000123", ":", "=", " ", "'", '"', ".", "é", "at"]


def _show(match: re.Match[str]) -> str:
    # What ``mask_text`` keeps of a match: the text before the key as it is, then the parts.
    return match.string[match.start() : match.start("key")] + f"<{match['key']}|{match['q']}|{match['num']}>"


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
def test_the_linear_epoch_mask_finds_what_the_plain_pattern_found(text: str) -> None:
    assert masks._sub_epochs(text, _show) == _PLAIN_EPOCH.sub(_show, text)
