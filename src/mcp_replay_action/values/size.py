"""The size of an answer: the UTF-8 bytes of its compact JSON (what a server sends, and what a
model is handed), and the model tokens that many bytes make, estimated.

A replay measures every answer it compares, so the measure is made cheap: the standard library's
C encoder, built once (``json.dumps`` with options builds an encoder per call, and
``JSONEncoder.encode`` another C encoder per call: the 10,000 answers of a calc-sample replay took
90-144 ms with ``json.dumps`` and 64-75 ms here, measured in one process under load 5 to 7). Its
contract: exactly
``len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8",
"surrogatepass"))`` (tests/test_size.py checks it on generated values); where the C encoder is
missing, that plain expression is what runs. A small answer (``WHOLE_BELOW``) is encoded whole;
a long one is measured in bounded pieces (see ``SLICE``), never encoded whole.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterable

from mcp_replay_action.model import JSON

# Model tokens are estimated as bytes / 4, the usual rule of thumb for English text and JSON
# with the BPE tokenizers of current models (no tokenizer is loaded: it would be a guess too).
BYTES_PER_TOKEN = 4

# A bigger answer is only flagged (a ``size`` finding) or shown as grown above this many bytes: a
# 40-byte answer that became 200 bytes costs a model nothing worth a word.
SIZE_FLOOR_BYTES = 1024


def over_floor(size: int) -> bool:
    """Whether an answer of ``size`` bytes is big enough for its growth to be news (over
    ``SIZE_FLOOR_BYTES``): the one test behind the ``size`` finding (``replay.measures.growth``)
    and a report's "answer grew" (``report._format.size_change``)."""
    return size > SIZE_FLOOR_BYTES


def plain_bytes(answer: JSON) -> int:
    """The reference measure (``answer_bytes`` equals it)."""
    return len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def _c_encoder() -> Callable[[JSON, int], Iterable[str]] | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    plain = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    try:  # what JSONEncoder.iterencode builds for a one-shot encode (no circular check: parsed JSON has none)
        return make(None, plain.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)  # type: ignore[no-any-return]
    except TypeError:  # another CPython's signature: the plain measure
        return None


_ENCODE = _c_encoder()


# An answer is measured piece by piece, never encoded whole: a 50 MiB answer encoded at once is
# a second 50 MiB in memory beside the two parsed answers (peak RSS 133 -> 186 MiB on
# bench_big_answer's 50 MiB row). Objects and short lists are walked; a longer list is encoded
# SLICE items at a time and a long string CHUNK characters at a time, so what is held at once is
# bounded by one slice or one chunk.
SLICE = 64
CHUNK = 1 << 16


def _utf8(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def _encoded(value: JSON) -> int:
    """The bytes of ``value`` encoded whole (a scalar, or a slice of a list)."""
    if _ENCODE is None:
        return plain_bytes(value)
    return _utf8("".join(_ENCODE(value, 0)))


def _string(text: str) -> int:
    escape = json.encoder.encode_basestring
    if len(text) <= CHUNK:
        return _utf8(escape(text))
    # Escaping is per character, so the chunks' escapes add up (each without its two quotes).
    return 2 + sum(_utf8(escape(text[i : i + CHUNK])) - 2 for i in range(0, len(text), CHUNK))


# An answer holding fewer than this many characters and members in all (most answers) is encoded
# whole, at C speed: what that holds at once is a few hundred KiB at most.
WHOLE_BELOW = 1 << 16


def _small(answer: JSON) -> bool:
    """Whether ``answer`` holds fewer than ``WHOLE_BELOW`` string characters and container
    members in all: looked at breadth first, given up as soon as it is not."""
    budget = WHOLE_BELOW
    todo = [answer]
    for node in todo:  # grows as it goes
        kind = type(node)
        if kind is dict:
            budget -= len(node) + sum(map(len, node))
            todo.extend(node.values())
        elif kind is list:
            budget -= len(node)
            todo.extend(node)
        elif kind is str:
            budget -= len(node)
        if budget < 0:
            return False
    return True


def answer_bytes(answer: JSON) -> int:
    """The size of an answer as a server sends it: the UTF-8 bytes of its compact JSON."""
    if type(answer) is dict and _small(answer):
        return _encoded(answer)
    return _pieces(answer)


def _pieces(answer: JSON) -> int:
    """``answer_bytes``, measured piece by piece (see ``SLICE``)."""
    kind = type(answer)
    if kind is dict:
        # Keys are str: every answer measured is parsed JSON (a cassette's, or a live one off the
        # wire, redacted and carried with its keys kept), and JSON object keys are strings.
        # "{" and "}", a ":" per member and a "," between members.
        return 1 + 2 * len(answer) + sum(_string(k) + _pieces(v) for k, v in answer.items()) if answer else 2
    if kind is list:
        if not answer:
            return 2
        if len(answer) <= SLICE:
            return 1 + len(answer) + sum(map(_pieces, answer))
        # Each slice encoded with its brackets and inner commas: one bracket each comes off, and
        # the slices' own "," and the outer "[" go back on.
        return 1 + sum(_encoded(answer[i : i + SLICE]) - 1 for i in range(0, len(answer), SLICE))
    if kind is str:
        return _string(answer)
    return _encoded(answer)


def tokens(size: int) -> int:
    """The model tokens ``size`` bytes of JSON make, estimated (``BYTES_PER_TOKEN``)."""
    return -(-size // BYTES_PER_TOKEN)
