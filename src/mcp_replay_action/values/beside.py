"""Decoding a long JSON line beside a text it very likely holds.

A replayed server's long answer is nearly always its recording, or its recording with a few
bytes changed. Decoding such a line the usual way holds its bytes, their text and the parsed value
at once beside the recording's own copy of the long text: four times the answer. Here the line's
bytes are compared with the escaping of the ``known`` text a chunk at a time, without copying
the line: where the line spells ``known`` exactly, the value holds ``known`` itself; where it
spells ``known`` with a stretch changed, only that stretch is decoded from the line, and the
text is built from ``known`` around it once the line is let go.

The answer is ``json.loads(line)``'s, exactly, or None when that cannot be made certain (the
caller then decodes the line as usual): the token must be a real string token, every cut point
must fall between two escapes, and the rest of the line is parsed by ``json`` itself.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from json.encoder import encode_basestring, encode_basestring_ascii

from mcp_replay_action.model import JSON

# Characters of ``known`` escaped and compared with the line at a time: big enough that the
# per-chunk calls cost little, small enough that an escaped chunk is a small copy.
_CHUNK = 1 << 18
# Characters from each end of ``known`` whose escaping locates its token in the line.
_ANCHOR = 1 << 12
# Characters of ``known`` appended at a time when a changed text is built beside it.
_PIECE = 1 << 20
# Candidate opening quotes tried before giving up (``known``'s start may recur in the envelope).
_CANDIDATES = 8

# A string token: its quotes, and between them any bytes but a quote or backslash, or an escape.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
_SURROGATE = re.compile("[\ud800-\udfff]")
_DECODE = json.JSONDecoder().decode  # what json.loads decodes text with, given no options
# The string scanner that decoder uses (strict): ``(text, index past the closing quote)``.
_SCANSTRING: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]

Escape = Callable[[str], bytes]


def _escape_ascii(chunk: str) -> bytes:
    """``chunk`` as ``json.dumps`` writes it inside its quotes (Python servers)."""
    return encode_basestring_ascii(chunk)[1:-1].encode("ascii")


def _escape_utf8(chunk: str) -> bytes:
    """``chunk`` as ``json.dumps(..., ensure_ascii=False)`` or ``JSON.stringify`` writes it inside
    its quotes, in UTF-8."""
    return encode_basestring(chunk)[1:-1].encode("utf-8", "surrogatepass")


def decode_beside(line: bytearray, known: str) -> JSON | None:
    """``json.loads(line)``'s value, exactly, with the string token of ``line`` that spells
    ``known`` (or ``known`` with a stretch changed) taken from ``known`` rather than decoded: the
    very object ``known`` when equal, else a text built around its changed middle. None when the
    line holds no such token or any part of it cannot be made certain (the caller decodes it as
    usual: nothing of it has been touched). On success ``line`` is cleared (the caller passes its
    only buffer: the bytes go before the text is built)."""
    escapes = _escapes_for(known)
    if escapes is None or not _usable(line):
        return None
    try:
        found = _locate(line, known, escapes)
    except (ValueError, RecursionError):
        return None
    return None if found is None else _complete(line, known, found)


def _usable(line: bytearray) -> bool:
    """Whether ``json.loads`` reads ``line`` as UTF-8 (no BOM, no UTF-16/32 NUL pattern in its
    first bytes) and it opens a container: the envelope is then parsed by the same rules with the
    token replaced."""
    return len(line) >= 4 and line[:1] in (b"{", b"[") and line[1] != 0


def _escapes_for(known: str) -> tuple[Escape, ...] | None:
    """The escapings ``known`` is compared in (one where both spell it alike); None for a text
    that cannot be: empty, or holding a surrogate (``\\ud83d\\ude00`` in a line is one
    character, and two surrogates in ``known`` escape to it)."""
    if not known or not _surrogate_free(known):
        return None
    # The two escapings agree on ASCII but for DEL, which only ``ensure_ascii`` escapes.
    if known.isascii() and "\x7f" not in known:
        return (_escape_ascii,)
    return (_escape_ascii, _escape_utf8)


def _complete(line: bytearray, known: str, found: tuple[int, int, str, int, int]) -> JSON | None:
    """The value of ``line`` with the token ``_locate`` found in it (``found``) built beside
    ``known``; None (``line`` untouched) when the rest does not parse as ``json`` would."""
    q, prefix, middle, suffix, e = found
    try:
        placed = _envelope(line, q, e)
    except (ValueError, RecursionError):
        return None
    if placed is None:
        return None
    value, (container, key) = placed
    line.clear()  # certain now: the bytes go before the text is built
    container[key] = _build(known, prefix, middle, suffix)
    return value


def _surrogate_free(text: str) -> bool:
    return text.isascii() or _SURROGATE.search(text) is None  # isascii: O(1) in CPython


def _locate(line: bytearray, known: str, escapes: tuple[Escape, ...]) -> tuple[int, int, str, int, int] | None:
    """Where ``known``'s token is in ``line`` and how it differs: its opening quote ``q``, the
    characters of ``known`` it starts with (``prefix``) and ends with (``suffix``), the text of
    what lies between them decoded from the line (``middle``), and its closing quote ``e``."""
    n = len(known)
    q = _opening(line, known, escapes)
    if q is None:
        return _from_tail(line, known, escapes)
    prefix, at = _forward(line, q + 1, known, escapes, n, len(line))
    return _after(line, q, prefix, at, known, escapes)


def _after(
    line: bytearray, q: int, prefix: int, at: int, known: str, escapes: tuple[Escape, ...]
) -> tuple[int, int, str, int, int] | None:
    """``_locate`` past the start: the token opened at ``q`` spells ``known[:prefix]`` up to
    ``at`` (or did: those bytes may have been taken out of ``line``, ``Reader``)."""
    n = len(known)
    if prefix == n and line[at : at + 1] == b'"':
        return q, n, "", 0, at  # the line spells ``known`` exactly
    for e in _closings(line, q, at, known, escapes):
        suffix, cut = _backward(line, e, known, escapes, n - prefix, at)
        middle = _middle(line, at, cut)
        if middle is not None:
            return q, prefix, middle, suffix, e
    return None


def _opening(line: bytearray, known: str, escapes: tuple[Escape, ...], since: int = 0) -> int | None:
    """The opening quote of the first string token in ``line`` that starts as ``known`` does (one
    that would have ended before ``since`` was looked for already)."""
    head = known[:_ANCHOR]
    for escape in escapes:
        needle = b'"' + escape(head)
        at = line.find(needle, max(0, since - len(needle)))
        for _ in range(_CANDIDATES):
            if at < 0:
                break
            token = _string_at(line, at)
            if token is not None and token[0] == at:
                return at
            at = line.find(needle, at + 1)
    return None


def _from_tail(line: bytearray, known: str, escapes: tuple[Escape, ...]) -> tuple[int, int, str, int, int] | None:
    """``_locate`` for a token whose start is not ``known``'s: found by its end, matched from
    there backwards; its opening quote is the last quote before what matched (a quote in the
    changed start is found by matching the strings from the line's start)."""
    n = len(known)
    tail = known[-_ANCHOR:]
    for escape in escapes:
        needle = escape(tail) + b'"'
        at = line.find(needle)
        for _ in range(_CANDIDATES):
            if at < 0:
                break
            e = at + len(needle) - 1
            at = line.find(needle, at + 1)
            suffix, cut = _backward(line, e, known, escapes, n, 0)
            quote = line.rfind(b'"', 0, cut)
            token = _string_at(line, quote) if quote >= 0 else None
            if token is None:
                continue
            q = token[0]
            if token[1] not in (-1, e + 1) or cut <= q:
                continue
            # What of known's start the line still spells, up to what the end took.
            prefix, at = _forward(line, q + 1, known, escapes, n - suffix, cut)
            middle = _middle(line, at, cut)
            if middle is not None:
                return q, prefix, middle, suffix, e
    return None


def _string_at(line: bytearray, pos: int) -> tuple[int, int] | None:
    """The string token of ``line`` that holds the byte at ``pos``, quotes included: its start,
    and its end past the closing quote (-1 when it starts at ``pos``: the end is not looked for,
    which would read the whole token); None when ``pos`` is outside every string. The strings
    before it are matched one by one: an answer's envelope is short before its long text."""
    at = 0
    while True:
        at = line.find(b'"', at, pos + 1)
        if at < 0:
            return None
        if at == pos:
            return at, -1
        match = _STRING.match(line, at)
        if match is None:
            return None  # an unclosed string: not JSON
        if match.end() > pos:
            return at, match.end()
        at = match.end()


def _closings(line: bytearray, q: int, at: int, known: str, escapes: tuple[Escape, ...]) -> Iterator[int]:
    """Where the token opened at ``q`` may close: after the first place past ``at`` that spells
    ``known``'s end, and then, sure but slower (the whole token is matched), where its string
    really ends: the first may be in a later token when this one's end changed."""
    tail = known[-_ANCHOR:]
    first = -1
    for escape in escapes:
        needle = escape(tail) + b'"'
        found = line.find(needle, at)
        if found >= 0:
            first = found + len(needle) - 1
            yield first
            break
    match = _STRING.match(line, q)
    if match is not None and match.end() - 1 != first:
        yield match.end() - 1


def _forward(
    line: bytearray, pos: int, known: str, escapes: tuple[Escape, ...], limit: int, ceiling: int
) -> tuple[int, int]:
    """How many characters of ``known``, from its start, ``line`` spells from ``pos`` on (in
    either escaping, chunk by chunk; at most ``limit``, ending by ``ceiling``), and where in
    ``line`` they end. Chunks are escaped whole, so every end is between two escapes; the first
    differing character is found by halving."""
    i = 0
    while i < limit:
        chunk = known[i : min(i + _CHUNK, limit)]
        for escape in escapes:
            spelled = escape(chunk)
            if line.startswith(spelled, pos, ceiling):
                break
        else:
            best, best_end, _ = _longest_start(line, pos, ceiling, chunk, escapes)
            return i + best, best_end
        i += len(chunk)
        pos += len(spelled)
    return i, pos


def _longest_start(
    line: bytearray, pos: int, ceiling: int, chunk: str, escapes: tuple[Escape, ...]
) -> tuple[int, int, Escape]:
    """The longest start of ``chunk`` that ``line`` spells at ``pos`` (given not all of it; ending
    by ``ceiling``) in any of ``escapes``: how many characters, where they end, in which way."""
    best, best_end, best_escape = 0, pos, escapes[0]
    for escape in escapes:
        k, end = _halve_forward(line, pos, ceiling, chunk, escape)
        if k > best:
            best, best_end, best_escape = k, end, escape
    return best, best_end, best_escape


def _halve_forward(line: bytearray, pos: int, ceiling: int, chunk: str, escape: Escape) -> tuple[int, int]:
    """The longest start of ``chunk`` that ``line`` spells at ``pos`` (given not all of it; ending
    by ``ceiling``) in ``escape``'s way, and where it ends."""
    lo, hi = 0, len(chunk)  # chunk[:lo] is spelled there, chunk[:hi] is not
    end = pos
    while hi - lo > 1:
        mid = (lo + hi) // 2
        spelled = escape(chunk[lo:mid])
        if line.startswith(spelled, end, ceiling):
            lo, end = mid, end + len(spelled)
        else:
            hi = mid
    return lo, end


def _backward(
    line: bytearray, e: int, known: str, escapes: tuple[Escape, ...], limit: int, floor: int
) -> tuple[int, int]:
    """How many characters of ``known``, from its end, ``line`` spells just before ``e`` (at most
    ``limit``, never starting before ``floor``), and where they start."""
    n = len(known)
    j = 0  # known's last j characters are spelled from ``e - (e - cut)`` on
    cut = e
    while j < limit:
        chunk = known[max(n - j - _CHUNK, n - limit) : n - j]
        for escape in escapes:
            spelled = escape(chunk)
            if line.endswith(spelled, floor, cut):
                break
        else:
            best, best_cut = 0, cut
            for escape in escapes:
                k, start = _halve_backward(line, cut, floor, chunk, escape)
                if k > best:
                    best, best_cut = k, start
            return j + best, best_cut
        j += len(chunk)
        cut -= len(spelled)
    return j, cut


def _halve_backward(line: bytearray, cut: int, floor: int, chunk: str, escape: Escape) -> tuple[int, int]:
    """The longest end of ``chunk`` that ``line`` spells just before ``cut`` (not before
    ``floor``), and where it starts."""
    size = len(chunk)
    lo, hi = 0, size  # chunk's last lo characters are spelled there, its last hi are not
    start = cut
    while hi - lo > 1:
        mid = (lo + hi) // 2
        spelled = escape(chunk[size - mid : size - lo])
        if line.endswith(spelled, floor, start):
            lo, start = mid, start - len(spelled)
        else:
            hi = mid
    return lo, start


def _middle(line: bytearray, start: int, cut: int) -> str | None:
    """The text the bytes ``line[start:cut]`` spell inside a JSON string, decoded as ``json`` does
    (strict); None unless they are whole escapes and characters, with no quote ending the string
    among them: ``start`` is known to fall between two escapes, so this proves ``cut`` does."""
    try:
        text = str(memoryview(line)[start:cut], "utf-8", "surrogatepass") + '"'
        middle, end = _SCANSTRING(text, 0)
    except ValueError:  # UnicodeDecodeError included: a cut inside a UTF-8 sequence
        return None
    return middle if end == len(text) else None


def _envelope(line: bytearray, q: int, e: int) -> tuple[JSON, tuple[JSON, JSON]] | None:
    """``line`` parsed with a placeholder string for its token ``line[q:e + 1]``, and where in the
    value the placeholder is (its container and key); None unless it is there exactly once, as a
    value (a key, or a duplicate key's lost value, is left to the usual decode)."""
    placeholder = "mcp-replay-beside-" + os.urandom(16).hex()
    spelled = line[:q] + b'"' + placeholder.encode("ascii") + b'"' + line[e + 1 :]
    value = _DECODE(spelled.decode("utf-8", "surrogatepass"))
    del spelled
    spots: list[tuple[JSON, JSON]] = []
    todo = [value]
    while todo:
        node = todo.pop()
        if type(node) is dict:
            if placeholder in node:
                return None
            for key, item in node.items():
                if type(item) is str:
                    if item == placeholder:
                        spots.append((node, key))
                elif type(item) is dict or type(item) is list:
                    todo.append(item)
        elif type(node) is list:
            for index, item in enumerate(node):
                if type(item) is str:
                    if item == placeholder:
                        spots.append((node, index))
                elif type(item) is dict or type(item) is list:
                    todo.append(item)
    if len(spots) != 1:
        return None
    return value, spots[0]


def _build(known: str, prefix: int, middle: str, suffix: int, piece: int = _PIECE) -> str:
    """``known[:prefix] + middle + known[len(known) - suffix:]`` without a second full copy:
    CPython appends in place to a str only it holds (``text += ...`` into a local), so the text
    grows where it is (``realloc``) while the suffix is appended a piece at a time."""
    n = len(known)
    if prefix == n and not middle:
        return known
    text = known[:prefix]
    text += middle
    at = n - suffix
    while at < n:
        text += known[at : at + piece]
        at += piece
    return text


# CPython 3.11 appends in place only once the ``+=`` above is specialised for str, which its
# interpreter does after a few runs of the code: before that, each ``+=`` copies the whole text
# (a 40 MiB build then peaks at twice that). A few tiny builds at import make the first real one
# append in place (tests/test_beside.py holds a build's peak to this).
for _ in range(64):
    _build("warm-up", 2, "-", 3, 1)


# A line read beside ``known`` as it arrives is searched for its token's start in this many bytes
# at most: an answer's envelope before its long text is short.
_SEEK = 8 << 20


class Reader:
    """A long line decoded beside ``known`` while it arrives: ``feed`` each piece, ``finish`` at
    its end, for what ``decode_beside`` would give. The bytes that spell the start of ``known``
    are compared as they come and let go, so a line that is ``known``, or ``known`` changed near
    its end, is never held whole (a live answer that is its recording costs a few chunks, not a
    second copy of the answer); from the first difference on, the rest is kept and decoded at the
    end as ``decode_beside`` does. On None, ``line`` gives the line's bytes back whole."""

    def __init__(self, known: str, start: bytearray) -> None:
        """``start``: the line's first bytes, taken over (the caller's buffer, not copied)."""
        self.known = known
        self.buf = start  # the line so far, less the bytes that spelled known[:prefix]
        self.escapes = _escapes_for(known)
        self.q = -1  # the token's opening quote in ``buf``, once found
        self.prefix = 0  # characters of ``known`` the token starts with, their bytes taken out
        self.taken: list[tuple[int, int, Escape]] = []  # which escaping spelled known[a:b]
        self.comparing = self.escapes is not None  # else only kept
        self._looked = 0  # where the search for the token's start goes on
        self._next: tuple[str, list[tuple[Escape, bytes]]] | None = None  # the chunk compared next
        if self.comparing:
            self._advance(final=False)

    def feed(self, piece: bytes | bytearray) -> None:
        """The next bytes of the line (no newline among them)."""
        self.buf += piece
        if self.comparing:
            self._advance(final=False)

    def finish(self) -> JSON | None:
        """The line has ended: its value as ``decode_beside`` gives it (``buf`` then cleared), or
        None (then ``line`` gives it back)."""
        if self.escapes is None:
            return None
        if self.comparing:
            self._advance(final=True)
        if self.q < 0:
            return None
        try:
            found = _after(self.buf, self.q, self.prefix, self.q + 1, self.known, self.escapes)
        except (ValueError, RecursionError):
            return None
        return None if found is None else _complete(self.buf, self.known, found)

    def line(self) -> bytearray:
        """The line's bytes, whole: what was taken out spelled again as it was."""
        if self.taken:
            spelled = b"".join(escape(self.known[a:b]) for a, b, escape in self.taken)
            self.buf[self.q + 1 : self.q + 1] = spelled
            self.taken.clear()
            self.prefix = 0
        return self.buf

    def _advance(self, final: bool) -> None:
        """Compare what has arrived with the next chunks of ``known``, taking out the bytes that
        spell them; at the first difference (found by halving), stop comparing. ``final``: no more
        bytes will come, so a chunk longer than what is left is compared with what is left."""
        assert self.escapes is not None
        if self.q < 0:
            if len(self.buf) < 4 and not final:
                return  # too little to tell how json.loads reads it
            if not _usable(self.buf):
                self.comparing = False
                return
            q = self._seek()
            if q is None:
                if len(self.buf) > _SEEK:
                    self.comparing = False
                return
            self.q = q
        known, buf, start = self.known, self.buf, self.q + 1
        while self.prefix < len(known):
            if self._next is None:
                chunk = known[self.prefix : self.prefix + _CHUNK]
                self._next = (chunk, [(escape, escape(chunk)) for escape in self.escapes])
            chunk, spellings = self._next
            have = len(buf) - start
            for escape, spelled in spellings:
                if buf.startswith(spelled, start):
                    self._take(len(chunk), len(spelled), escape)
                    break
            else:
                if not final and any(len(spelled) > have for _, spelled in spellings):
                    return  # wait for the bytes that decide
                best, best_end, best_escape = _longest_start(buf, start, len(buf), chunk, self.escapes)
                self._take(best, best_end - start, best_escape)
                break
        self.comparing = False  # a difference, or all of known: the rest is kept

    def _take(self, chars: int, size: int, escape: Escape) -> None:
        """Take out the ``size`` bytes after the opening quote, which spell the next ``chars``
        characters of ``known`` in ``escape``'s way."""
        if chars:
            a = self.prefix
            if self.taken and self.taken[-1][1] == a and self.taken[-1][2] is escape:
                a = self.taken.pop()[0]
            self.taken.append((a, self.prefix + chars, escape))
            del self.buf[self.q + 1 : self.q + 1 + size]
            self.prefix += chars
        self._next = None

    def _seek(self) -> int | None:
        """The opening quote of the first string token that starts as ``known`` does, in what has
        arrived."""
        assert self.escapes is not None
        q = _opening(self.buf, self.known, self.escapes, self._looked)
        self._looked = len(self.buf)
        return q
