"""The size of an answer: the UTF-8 bytes of its compact JSON (what a server sends, and what a
model is handed), and the model tokens that many bytes make, estimated.

A replay measures every answer it compares, so the measure is made cheap: the standard library's
C encoder, built once (``json.dumps`` with options builds an encoder per call, and
``JSONEncoder.encode`` another C encoder per call: the 10,000 answers of a calc-sample replay took
90-144 ms with ``json.dumps`` and 64-75 ms here, measured in one process under load 5 to 7). Its
contract: exactly
``len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8",
"surrogatepass"))`` (tests/test_size.py checks it on generated values); where the C encoder is
missing, that plain expression is what runs.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

# Model tokens are estimated as bytes / 4, the usual rule of thumb for English text and JSON
# with the BPE tokenizers of current models (no tokenizer is loaded: it would be a guess too).
BYTES_PER_TOKEN = 4


def plain_bytes(answer: Any) -> int:
    """The reference measure (``answer_bytes`` equals it)."""
    return len(json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))


def _c_encoder() -> Callable[[Any, int], Any] | None:
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    plain = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    try:  # what JSONEncoder.iterencode builds for a one-shot encode (no circular check: parsed JSON has none)
        return make(None, plain.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)  # type: ignore[no-any-return]
    except TypeError:  # another CPython's signature: the plain measure
        return None


_ENCODE = _c_encoder()


def answer_bytes(answer: Any) -> int:
    """The size of an answer as a server sends it: the UTF-8 bytes of its compact JSON."""
    if _ENCODE is None:
        return plain_bytes(answer)
    text = "".join(_ENCODE(answer, 0))
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def tokens(size: int) -> int:
    """The model tokens ``size`` bytes of JSON make, estimated (``BYTES_PER_TOKEN``)."""
    return -(-size // BYTES_PER_TOKEN)
