"""Redaction: scrub secrets from messages before a cassette touches disk (a VCR.py *filter*).

Three default rules, each cheap enough for every message of a long replay:

* **secret keys**: the value under a key that names a credential (``authorization``, ``api_key``,
  ``access_token``, ``password``, ``client_secret``, ``set-cookie``, ...). Keys are compared by
  their words, so ``apiKey``, ``API_KEY`` and ``x-api-key`` are all one key, while ``max_tokens``,
  ``tokens_used`` and MCP's own ``progressToken`` / ``nextCursor`` are not secrets and stay;
* **secret-shaped strings** anywhere in a string: ``Bearer <token>``, ``Basic <user:pass>``,
  well-known key prefixes (``sk-``, ``ghp_``, ``github_pat_``, ``xoxb-``, ``AKIA``, JWTs, PEM
  private keys, ...);
* **high-entropy tokens**: a standalone run of 32 to 100 token characters mixing upper case, lower
  case and digits whose entropy is what a random key has (hex digests and UUIDs do not qualify),
  except under keys that hold identifiers, cursors or state a replay must send back unchanged.

Content is not a secret: the base64 ``data`` of image and audio content, a resource ``blob`` and
everything under ``inputSchema`` / ``outputSchema`` are copied untouched, so a change in them is
still caught by replay.

Every redacted value becomes the fixed placeholder ``[REDACTED]``, never a hash of the secret. The
same Redactor is applied to the live response before comparing, so a recorded ``[REDACTED]`` meets
a live ``[REDACTED]`` and matches even when the secret rotates between runs (a per-secret hash
would then differ and report a false regression), and a short hash of a weak password is a
dictionary lookup away from the password.
"""

from __future__ import annotations

import base64
import binascii
import collections
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.minted import MINTED_KEYS

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared

PLACEHOLDER = "[REDACTED]"
MIN_VALUE_LENGTH = 4

# Key names (lower case, words joined) that hold a credential, as the whole key or its last words.
_SECRET_KEYS = frozenset(
    {
        "authorization",
        "apikey",
        "apisecret",
        "apitoken",
        "accesskey",
        "secretaccesskey",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "authtoken",
        "sessiontoken",
        "bearertoken",
        "password",
        "passwd",
        "passphrase",
        "secret",
        "secrets",
        "clientsecret",
        "cookie",
        "cookies",
        "setcookie",
        "privatekey",
        "secretkey",
        "signingkey",
        "encryptionkey",
        "masterkey",
        "credential",
        "credentials",
    }
)
# A key written as one word still counts when it ends in one of these (``dbpassword``).
_SECRET_ENDINGS = (
    "password",
    "passwd",
    "secret",
    "apikey",
    "privatekey",
    "accesstoken",
    "refreshtoken",
    "authtoken",
    "sessiontoken",
    "clientsecret",
)
# ``<word> token`` is a credential (``github_token``, ``csrf_token``) unless the word says it is
# protocol or accounting: pagination, progress, tokenizer vocabulary, usage counters.
_NOT_SECRET_TOKENS = frozenset(
    {
        "progress",
        "next",
        "nextpage",
        "page",
        "prev",
        "previous",
        "continuation",
        "continue",
        "cursor",
        "sync",
        "resume",
        "cancellation",
        "cancel",
        "pagination",
        "idempotency",
        "correlation",
        "change",
        "delta",
        "stop",
        "eos",
        "bos",
        "pad",
        "unk",
        "mask",
        "sep",
        "cls",
        "start",
        "end",
        "special",
        "max",
        "min",
        "num",
        "total",
        "input",
        "output",
        "prompt",
        "completion",
        "reasoning",
        "cached",
        "count",
        "used",
        "limit",
    }
)
# Keys whose values a replay sends back or compares verbatim (ids, cursors, server-minted state):
# the high-entropy rule, the one rule that guesses, leaves them alone.
_OPAQUE_KEYS = MINTED_KEYS | frozenset(
    {
        "id",
        "ids",
        "uuid",
        "guid",
        "cursor",
        "nextcursor",
        "requeststate",
        "progresstoken",
        "etag",
        "hash",
        "sha",
        "checksum",
        "digest",
        "uri",
        "url",
        "href",
        "path",
        "name",
        "method",
        "jsonrpc",
        "version",
        "protocolversion",
        "mimetype",
    }
)
# Content, not secrets: copied untouched wherever they appear.
_CONTENT_KEYS = frozenset({"inputSchema", "outputSchema", "blob"})
_MEDIA_TYPES = frozenset({"image", "audio"})
# No redacted twin to skip against (``Redactor.apply_beside``).
_NO_TWIN: Any = object()
_NO_TWINS: dict[str, Any] = {}

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

_TOKEN_CHARS = r"A-Za-z0-9_\-+/"
# The built-in secret shapes, as alternatives of one pattern (tried in this order at each place).
_BUILTIN_ALTERNATIVES = (
    r"(?P<bearer>\b[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+)(?P<bearer_token>[A-Za-z0-9\-._~+/]{8,}=*)",
    r"(?P<basic>\b[Bb][Aa][Ss][Ii][Cc][ \t]+)(?P<basic_token>[A-Za-z0-9+/]{8,}={0,2})",
    # A key's body never holds another BEGIN: stopping there keeps the search linear when a text
    # has many BEGIN lines and no END (each would otherwise scan on to the text's end).
    r"(?P<pem>-----BEGIN[A-Z ]*PRIVATE KEY-----(?:(?!-----BEGIN)[\s\S])*?-----END[A-Z ]*PRIVATE KEY-----)",
    r"(?P<prefix>(?<![A-Za-z0-9_\-])(?:"
    r"sk-[A-Za-z0-9_\-]{20,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|glpat-[A-Za-z0-9_\-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{16}"
    r"|AIza[0-9A-Za-z_\-]{35}"
    r"|(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{16,}"
    r"|npm_[A-Za-z0-9]{36}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"
    r"))",
    rf"(?P<entropy>(?<![{_TOKEN_CHARS}=.])[{_TOKEN_CHARS}]{{32,}}={{0,2}}(?![{_TOKEN_CHARS}=]))",
)
# Text every match of the ``prefix`` alternative contains (case matters there).
_PREFIX_MARKS = (
    "sk-",
    "gh",
    "github_pat_",
    "glpat-",
    "xox",
    "AKIA",
    "ASIA",
    "AIza",
    "_live_",
    "_test_",
    "npm_",
    "hf_",
    "eyJ",
)
# The alternatives joined, less those that cannot match a given text (``_builtin_for``), by which
# of them are kept.
_BUILTIN_WITHOUT: dict[tuple[bool, ...], re.Pattern[str]] = {}
# A cheap test that lets most strings skip the built-in shapes: every secret they find has a run of 20 token
# characters, or the word bearer/basic, or a PEM armour line.
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/]{20,}")
# The literals of the known-prefix shapes that match without such a run (``xoxb-0123456789`` is
# 15 characters; a JWT's runs are cut by its dots): a text holding one is scanned too.
_SHORT_PREFIX_MARKS = ("xox", "eyJ")
_BUILTIN_NAMES = (
    "secret-keys",
    "bearer",
    "basic-auth",
    "private-key-pem",
    "known-prefixes",
    "high-entropy",
    "url-password",
)
# JSON text is searched for secret keys only when one of these occurs in it at all.
_KEY_HINTS = ("pass", "secret", "token", "key", "auth", "cookie", "credential")
# ``NAME=value``, ``export NAME=value``, ``?api_key=value&``, ``Password=value;`` (connection
# strings), ``X-Api-Key: value`` and ``Authorization: Token value`` inside any text. The value is
# redacted when the name is a secret key, or when the value itself looks random.
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<name>-{0,2}[A-Za-z_][A-Za-z0-9_.\-]{0,63})(?P<sep>[ \t]*[=:][ \t]*)"
    r"(?P<scheme>(?:[Tt]oken|[Bb]asic|[Bb]earer|[Dd]igest|[Aa]pi[Kk]ey)[ \t]+)?"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s&;,'\"<>(){}\[\]]+)"
)
# ``scheme://user:password@host`` (postgres, mongodb+srv, redis://:password@, amqp, https, ...).
# The scheme is at most 64 characters: tried at every word start of a long run of them
# ("a.b.c.d..."), an unbounded one read to the run's end each time (quadratic). A longer one is
# matched from a later word start, and its password redacted the same.
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]{0,63}://[^\s:/@]*:)(?P<password>[^\s/@]+)@")
# Command-line flags whose value is a credential, beyond the secret key names: ``--auth``,
# ``--key``, ``--db-pass``. A one-letter flag is none of them (``is_secret_flag``).
_SECRET_FLAG_WORDS = frozenset({"auth", "key", "pass", "pw", "pwd", "passwd"})
_FLAG_IN_TEXT = re.compile(
    r"(?<![A-Za-z0-9_\-])(?P<flag>--?[A-Za-z][A-Za-z0-9_\-]*)(?P<sep>=|[ \t]+)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s'\"]+)"
)
# Integrity and digest spellings that are content a replay must send back unchanged.
_SRI = re.compile(r"sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}")
_DIGEST_BYTES = frozenset({16, 20, 32, 48, 64})
_WRAPPED_LINE_LENGTHS = (64, 76)  # PEM and MIME line lengths
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_REGEX_SYNTAX = re.compile(r"[*+?{\[]|\\[dDwWsSb]")
_SCHEMES = frozenset({"token", "basic", "bearer", "digest", "apikey"})
_ASSIGNMENT_HINTS = (*_KEY_HINTS, "pw")
_SCHEME_HINTS = ("bearer", "basic")
_ODD_I = ("\u0130", "\u0131")  # İ folds to i plus a combining dot; ı does not fold at all
_SHELL_REFERENCE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]*>|\*+|x+|\.{3}")


def _folded(text: str) -> str:
    """``text`` case-folded for hint searches: a lower-case ASCII word occurs in it exactly when
    a ``re.IGNORECASE`` search finds the word in ``text`` (plain substring searches on it are
    several times faster than the regex, short strings included, and 20x on a 5 MiB answer).
    Case folding maps every letter ``re.IGNORECASE`` matches to an ASCII one (the long s, the
    Kelvin sign) but the two Turkish i's, which are mapped first."""
    for odd in _ODD_I:
        if odd in text:
            text = text.replace(odd, "i")
    return text.casefold()


_RUN = "\0run"  # the atom of Redactor._looked_for that stands for a long token run (_LONG_RUN)


class _Hints:
    """The hint searches on one text, which is folded once, on the first search. From
    ``long_from`` characters on (``Limits.long_text_chars``) a text's hint searches are
    remembered and its long-run test is made on bytes: each search of a 37 MiB answer costs
    ~25 ms, and one text is asked for the same words up to three times (``_KEY_HINTS`` after
    ``_ASSIGNMENT_HINTS``, ``bearer`` after ``_SCHEME_HINTS``)."""

    __slots__ = ("text", "long_from", "_folded", "_absent", "_lacks")

    def __init__(self, text: str, long_from: int) -> None:
        self.text = text
        self.long_from = long_from
        self._folded: str | None = None
        self._absent: set[str] | None = None  # words and letters a long text is known not to hold
        self._lacks: set[str] | None = None  # the same, as written (``has``)

    def any(self, words: tuple[str, ...]) -> bool:
        """Whether any of the lower-case ASCII ``words`` occurs in the text, in any case."""
        if self._folded is None:
            self._folded = _folded(self.text)
        folded = self._folded
        if len(folded) >= self.long_from:
            return self._any_long(words)
        for word in words:
            if word in folded:
                return True
        return False

    def has(self, literal: str) -> bool:
        """Whether ``literal`` occurs in a long text as written (``_occurs``)."""
        if self._lacks is None:
            self._lacks = set()
        return _occurs(literal, self.text, self._lacks)

    def _any_long(self, words: tuple[str, ...]) -> bool:
        if self._absent is None:
            self._absent = set()
        folded: str = self._folded  # type: ignore[assignment]  # folded by any()
        return any(_occurs(word, folded, self._absent) for word in words)


def _occurs(literal: str, text: str, absent: set[str]) -> bool:
    """``literal in text``, where ``absent`` holds literals and characters known not to occur in
    ``text`` (and is added to). A literal with a character the text lacks is not in it: one memchr
    per character settles most literals in a long text that is data, not prose, before any is
    searched for (each search of a 37 MB answer costs ~25 ms)."""
    if literal in absent:
        return False
    for char in literal:
        if char in absent:
            break
        if char not in text:
            absent.add(char)
            break
    else:
        if literal in text:
            return True
    absent.add(literal)
    return False


# ``_LONG_RUN`` as bytes: a token character is ASCII, so it is one byte in UTF-8, and every byte
# of any other character is above 0x7F; a long text is read in windows that overlap by a run's
# length less one, so a run is wholly inside one of them.
_TOKEN_AS_A = bytes(0x61 if re.fullmatch(r"[A-Za-z0-9_\-+/]", chr(c)) else 0x2E for c in range(256))
_RUN_WINDOW = 1 << 20


def _literal_test(hints: _Hints) -> Callable[[str], bool]:
    """Whether a literal occurs in ``hints.text``: ``_Hints.has`` on a long text, ``in`` else."""
    return hints.has if len(hints.text) >= hints.long_from else hints.text.__contains__


def _has_long_run(text: str, long_from: int) -> bool:
    """``_LONG_RUN.search(text) is not None``, several times faster on a text ``long_from``
    characters long or longer (``Limits.long_text_chars``)."""
    if len(text) < long_from:
        return _LONG_RUN.search(text) is not None
    run = b"a" * 20
    for start in range(0, len(text), _RUN_WINDOW):
        window = text[start : start + _RUN_WINDOW + 19].encode("utf-8", "surrogatepass")
        if run in window.translate(_TOKEN_AS_A):
            return True
    return False


# -- the text rules --------------------------------------------------------------------------
#
# Every rule run over a string declares what it looks for before it changes a text: its *atoms*,
# each a substring that either occurs in a text or not (a literal as written, a lower-case word in
# any case, or ``RUN_ATOM``: a run of 20 token characters), and its *gate*: whether it may change a
# text, from which of its atoms occur there (and what costs nothing to see of the text: its length,
# its first character). ``Redactor._text`` opens each gate on the text itself; beside a learned
# twin (``Redactor._quiet_beside``) the same gates are answered from the atoms the twin holds and
# what the few differing characters hold, and an atom a gate asks of without declaring it is an
# error there (a KeyError), never a skipped rule. What the fast path looks for is read from these
# declarations (``Redactor._looked_for``): there is no second list.

Atom = tuple[str, bool]  # (the substring, whether it is a word looked for in the folded text)
RUN_ATOM: Atom = (_RUN, False)


class Found:
    """What a gate asks of the text it gates: whether a literal occurs as written (``has``),
    any of some lower-case words in any case (``words``), a run of 20 token characters (``run``).
    This one answers from the text itself."""

    __slots__ = ("has", "words", "_original", "_run", "_long_from")

    def __init__(self, hints: _Hints, original: str, run: list[bool]) -> None:
        self.has: Callable[[str], bool] = _literal_test(hints)
        self.words: Callable[[tuple[str, ...]], bool] = hints.any
        self._long_from = hints.long_from
        # The long run is looked for once, in the text as it came (shared by the answers for
        # the texts the rules make of it), as the rules have always been gated.
        self._original = original
        self._run = run

    def run(self) -> bool:
        if not self._run:
            self._run.append(len(self._original) >= 12 and _has_long_run(self._original, self._long_from))
        return self._run[0]


class _Held(Found):
    """``Found`` answered from a table of atoms (``Redactor._quiet_beside``): a gate that asks of
    an atom no rule declared fails (KeyError) rather than pass a text unread."""

    __slots__ = ("held",)

    def __init__(self, held: Mapping[Atom, bool]) -> None:  # noqa: D107  # no super(): nothing of a text
        self.held = held
        self.has = lambda literal: held[literal, False]
        self.words = lambda words: any([held[word, True] for word in words])

    def run(self) -> bool:
        return self.held[RUN_ATOM]


class TextRule:
    """One rule over strings: ``atoms`` (what it looks for, see above), ``gate(text, found)``
    (whether it may change ``text``, asking ``found`` only of its own atoms: a closed gate must
    mean the rule leaves the text as it is) and ``run(redactor, hints, key)`` (the text it makes
    of ``hints.text``, found under ``key``; it counts its hits on the redactor). ``shortest``: no
    text shorter is changed by it."""

    __slots__ = ("name", "atoms", "gate", "run", "shortest")

    def __init__(
        self,
        name: str,
        atoms: Iterable[Atom],
        gate: Callable[[str, Found], bool],
        run: Callable[[Redactor, _Hints, str | None], str],
        shortest: int = 0,
    ) -> None:
        self.name = name
        self.atoms = tuple(dict.fromkeys(atoms))
        self.gate = gate
        self.run = run
        self.shortest = shortest

    def opens(self, text: str, found: Found) -> bool:
        """Whether the rule may change ``text`` (``found``: which of its atoms occur there)."""
        return len(text) >= self.shortest and self.gate(text, found)

    @classmethod
    def literal(cls, name: str, literal: str, run: Callable[[Redactor, _Hints, str | None], str]) -> TextRule:
        """A rule that may change only a text holding ``literal`` (as written)."""
        return cls(name, ((literal, False),), lambda text, found: found.has(literal), run, len(literal))

    def __repr__(self) -> str:
        return f"TextRule({self.name!r})"


def _words_of(hints: tuple[str, ...]) -> tuple[Atom, ...]:
    return tuple((word, True) for word in hints)


def _tokens_gate(text: str, found: Found) -> bool:
    """Whether the token shapes (``_builtin_for``) may find something."""
    has = found.has
    return found.run() or has("PRIVATE KEY") or any(map(has, _SHORT_PREFIX_MARKS)) or found.words(_SCHEME_HINTS)


def _tokens_run(redactor: Redactor, hints: _Hints, key: str | None) -> str:
    opaque = redactor._opaque_key(key)
    return _builtin_for(hints).sub(lambda m: redactor._builtin(m, opaque), hints.text)


def _assignment_gate(text: str, found: Found) -> bool:
    """Whether the assignment rule (``_ASSIGNMENT``) may find something."""
    return (found.has("=") or found.has(":")) and (found.run() or found.words(_ASSIGNMENT_HINTS))


def _assignment_run(redactor: Redactor, hints: _Hints, key: str | None) -> str:
    opaque = redactor._opaque_key(key)
    return _ASSIGNMENT.sub(lambda m: redactor._assignment(m, opaque), hints.text)


def _url_gate(text: str, found: Found) -> bool:
    """Whether the URL password rule (``_URL_PASSWORD``) may find something."""
    return found.has("@") and found.has("://")


def _url_run(redactor: Redactor, hints: _Hints, key: str | None) -> str:
    return _URL_PASSWORD.sub(redactor._url_password, hints.text)


def _always(text: str, found: Found) -> bool:
    """The gate of a rule with no cheap test (a user's pattern): it runs on every text."""
    return True


# The built-in rules over strings, in the order they run (``defaults``): the secret shapes, then
# ``NAME=value`` assignments, then URL passwords. A rule added here is looked for beside a twin too.
BUILTIN_TEXT_RULES = (
    TextRule(
        "secret-shapes",
        (RUN_ATOM, ("PRIVATE KEY", False), *((m, False) for m in _SHORT_PREFIX_MARKS), *_words_of(_SCHEME_HINTS)),
        _tokens_gate,
        _tokens_run,
        12,
    ),
    TextRule(
        "assignments",
        (("=", False), (":", False), RUN_ATOM, *_words_of(_ASSIGNMENT_HINTS)),
        _assignment_gate,
        _assignment_run,
        MIN_VALUE_LENGTH,
    ),
    TextRule("url-password", (("@", False), ("://", False)), _url_gate, _url_run, MIN_VALUE_LENGTH),
)


def _words(key: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(key)]


def _norm(key: str) -> str:
    """``X-Api-Key``, ``api_key``, ``apiKey`` -> ``xapikey`` / ``apikey``: case and separators ignored."""
    return "".join(ch for ch in key.lower() if ch.isalnum())


def is_secret_key(key: str) -> bool:
    """Whether the default rules treat the value under ``key`` as a credential."""
    words = _words(key)
    if not words:
        return False
    if _norm(key).endswith(_SECRET_ENDINGS):
        return True
    for n in (1, 2, 3):
        if len(words) >= n and "".join(words[-n:]) in _SECRET_KEYS:
            return True
    if words[-1] == "token":
        return len(words) == 1 or words[-2] not in _NOT_SECRET_TOKENS
    return False


def _is_opaque_key(key: str) -> bool:
    if _norm(key) in _OPAQUE_KEYS:
        return True
    words = _words(key)
    return bool(words) and words[-1] in ("id", "ids", "uuid", "cursor", "state")


def _entropy(text: str) -> float:
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in collections.Counter(text).values())


def looks_random(text: str) -> bool:
    """A 32..100 character token that mixes upper case, lower case and digits (at least two of
    each) with the entropy of a random key. Calibrated so that 99.9% of random base62 keys pass
    while hex digests, UUIDs, paths and ordinary identifiers do not."""
    core = text.rstrip("=")
    n = len(core)
    if n < 32 or n > 100 or core.count("/") > 3:
        return False
    if core.islower() or core.isupper():
        return False  # letters of one case only (a UUID, a hex digest): none of the other, no count needed
    # map() over str methods counts in C; a Python loop per character cost a fifth of a replay.
    if sum(map(str.isdigit, core)) < 2 or sum(map(str.isupper, core)) < 2 or sum(map(str.islower, core)) < 2:
        return False
    return _entropy(core) >= 4.0 + 0.016 * (n - 32)


def _basic_credentials(token: str) -> bool:
    """``Basic <base64 of user:password>``; a word that merely follows "basic" in prose is not."""
    try:
        decoded = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and all(32 <= b < 127 for b in decoded)


def is_secret_flag(flag: str) -> bool:
    """Whether command-line flag ``flag`` (without dashes) takes a credential as its value: its
    name says so (``--password``, ``--api-key``, ``--db-pass``, ``--auth``). A one-letter flag
    says nothing by itself: ``-p`` is a port (``ssh``, ``psql``, ``http.server``), ``mkdir``'s
    parents or ``cp``'s preserve far more often than mysql's password, and a value that looks
    like a secret is found by the token rules whatever flag it follows. ``--no-auth`` is a
    switch."""
    words = _words(flag)
    if len(flag) < 2 or not words or words[0] == "no":
        return False
    return is_secret_key(flag) or words[-1] in _SECRET_FLAG_WORDS


def _is_digest(token: str) -> bool:
    """An SRI integrity value (``sha512-...``) or base64 with its padding that decodes to the size
    of a common digest (MD5, SHA-1, SHA-256/384/512): content, not a key."""
    if _SRI.fullmatch(token):
        return True
    if len(token) % 4 or not (token.endswith("=") or "+" in token or "/" in token):
        return False
    try:
        return len(base64.b64decode(token, validate=True)) in _DIGEST_BYTES
    except (binascii.Error, ValueError):
        return False


def _is_wrapped_line(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is a whole line of PEM or MIME-wrapped base64 (a certificate,
    an attachment) next to another such line or to a ``-----BEGIN`` armour line."""
    if end - start not in _WRAPPED_LINE_LENGTHS:
        return False
    before, after = text[:start], text[end:]
    newline_before = before.rfind("\n")
    newline_after = after.find("\n")
    if before[newline_before + 1 :].strip() or (after if newline_after < 0 else after[:newline_after]).strip():
        return False
    previous = before[:newline_before].rsplit("\n", 1)[-1].strip() if newline_before >= 0 else ""
    following = after[newline_after + 1 :].split("\n", 1)[0].strip() if newline_after >= 0 else ""
    return any(n.startswith("-----") or (n and _BASE64_LINE.fullmatch(n)) for n in (previous, following))


class Redactor:
    """Scrubs secrets from any JSON value.

    ``keys`` adds key names whose values are always redacted (compared ignoring case and
    separators: ``session_id`` also matches ``sessionId`` and ``Session-Id``). ``patterns`` adds
    regular expressions searched in every string: the whole match is replaced, or only the first
    capturing group when the pattern has one (``password=(\\S+)``). ``defaults=False`` turns the
    built-in rules off. ``rules`` adds rules over strings (``TextRule``), run after the others.
    ``limits``: from what length a text is searched as a long one (``Limits.long_text_chars``;
    when not given, ``Limits.from_env()``: every redactor, a recording's included, obeys
    ``MCP_REPLAY_FAST=0``).
    """

    def __init__(
        self,
        keys: Iterable[str] = (),
        patterns: Iterable[str] = (),
        defaults: bool = True,
        env_values: Mapping[str, str] | None = None,
        rules: Iterable[TextRule] = (),
        limits: Limits | None = None,
    ) -> None:
        self.limits = limits if limits is not None else Limits.from_env()
        # With the fast paths off, every text is searched as a short one: the plain searches.
        self._long_from = self.limits.long_text_chars if self.limits.fast else sys.maxsize
        self.defaults = defaults
        self.extra_rules = tuple(rules)
        self.env_values = dict(env_values or {})
        # Longest first, so a value that contains another is replaced whole. Very short values
        # would replace innocent text everywhere.
        self._values = sorted(
            {v for v in self.env_values.values() if len(v) >= MIN_VALUE_LENGTH}, key=len, reverse=True
        )
        self.keys = tuple(dict.fromkeys(k for k in keys if k))
        self._user_keys = frozenset(_norm(k) for k in self.keys)
        self.patterns = tuple(dict.fromkeys(patterns))
        self._patterns = tuple(self._compile(p) for p in self.patterns)
        # Every rule over strings, in the order ``_text`` runs them (see ``TextRule``).
        self.text_rules: tuple[TextRule, ...] = (
            *(BUILTIN_TEXT_RULES if defaults else ()),
            TextRule("secret-keys", _words_of(_KEY_HINTS), self._key_gate, Redactor._json_keys, 12),
            *(TextRule(f"pattern {n}", (), _always, _pattern_run(p)) for n, p in enumerate(self._patterns, 1)),
            TextRule("env", ((v, False) for v in self._values), self._env_gate, Redactor._env, MIN_VALUE_LENGTH),
            *self.extra_rules,
        )
        self._shortest = min(rule.shortest for rule in self.text_rules)
        self._key_cache: dict[str, bool] = {}
        self._opaque_cache: dict[str, bool] = {}
        self.hits: collections.Counter[str] = collections.Counter()

    @staticmethod
    def _compile(pattern: str) -> re.Pattern[str]:
        try:
            return re.compile(pattern)
        except re.error as exc:
            raise ConfigError(f"invalid --redact-pattern {pattern!r}: {exc}") from None

    # -- public -----------------------------------------------------------------------------

    def apply(self, obj: Any) -> Any:
        """A redacted deep copy of ``obj`` (any JSON value); ``obj`` itself is never changed."""
        return self._walk(obj, None, False)

    def apply_beside(self, obj: Any, clean: Any, prepared: Prepared | None = None) -> Any:
        """``apply(obj)``, where ``clean`` is an already redacted twin of ``obj`` (a live answer
        and its recording): every part of ``obj`` equal to the part of ``clean`` at the same place
        is kept as it is, without a walk, since redaction is idempotent and depends only on the
        place (the keys above) and the value. Only what the live server changed is redacted. The
        result shares those unchanged parts with ``obj`` (neither is changed). Equal is ``==``, as
        everywhere a live answer is matched to its recording: a 1 where the recording has true
        (under a secret key, the one place they redact differently) is kept. ``prepared``: what
        ``learn`` learned of the long text ``clean`` holds, so that its live twin is searched only
        where the two differ."""
        return self._walk(obj, None, False, clean, prepared)

    def apply_argv(self, argv: Sequence[str]) -> list[str]:
        """A server command line with secrets hidden: values of ``--token X``, ``--api-key=X``,
        ``--db-pass X`` and ``API_KEY=X`` (an env assignment), the same inside a
        ``sh -c '...'`` script, header arguments such as ``Authorization: Bearer X``, and anything
        the string rules find."""
        out: list[str] = []
        hide_next = False
        for arg in argv:
            if hide_next:
                out.append(self._hit("secret-keys"))
                hide_next = False
                continue
            name, sep, value = arg.partition("=") if "=" in arg else arg.partition(":")
            flag = name.strip().lstrip("-")
            is_flag = arg.startswith("-")
            shown = value.strip()
            if (
                sep
                and shown
                and not _SHELL_REFERENCE.fullmatch(shown)
                and " " not in flag
                and flag
                and self._secret_arg(flag, is_flag)
            ):
                out.append(f"{name}{sep}{' ' if value.startswith(' ') else ''}{self._hit('secret-keys')}")
                continue
            if is_flag and not sep and self._secret_arg(flag, True):
                hide_next = True
            if " " in arg.strip():  # a script (``sh -c '...'``): its own flags count too
                arg = _FLAG_IN_TEXT.sub(self._flag_in_text, arg)
            out.append(self._text(arg, None))
        return out

    def _secret_arg(self, flag: str, is_flag: bool) -> bool:
        return self._secret_key(flag) or (is_flag and self.defaults and is_secret_flag(flag))

    def _flag_in_text(self, match: re.Match[str]) -> str:
        value = match.group("value")
        if value.startswith("-") or PLACEHOLDER in value or not self._secret_arg(match.group("flag").lstrip("-"), True):
            return match.group(0)
        return match.group("flag") + match.group("sep") + self._hit("secret-keys")

    def rules(self) -> dict[str, Any]:
        """What this redactor does, for a cassette header: rule names, user keys and patterns, and
        how many values each rule replaced so far. Never a secret value."""
        # A pattern that can only match fixed text is most likely the secret itself: the header
        # names it instead of writing it.
        patterns = [
            p if _REGEX_SYNTAX.search(p) else f"{PLACEHOLDER} literal pattern {n}"
            for n, p in enumerate(self.patterns, start=1)
        ]
        return {
            "placeholder": PLACEHOLDER,
            "defaults": list(_BUILTIN_NAMES) if self.defaults else [],
            "keys": list(self.keys),
            "patterns": patterns,
            **({"env": sorted(self.env_values)} if self.env_values else {}),
            "hits": dict(sorted(self.hits.items())),
        }

    def with_env_values(self, env_values: Mapping[str, str]) -> Redactor:
        """The same rules plus the values of these environment variables."""
        return Redactor(
            self.keys, self.patterns, self.defaults, {**self.env_values, **env_values}, self.extra_rules, self.limits
        )

    # -- long texts beside their recording ------------------------------------------------------

    def learn(self, text: str, prepared: Prepared) -> Iterator[None]:
        """Learn, a step at a time (for a replay waiting on a slow server), what the long
        redacted ``text`` holds of everything ``_text`` looks for before it changes anything (see
        ``_looked_for``), so that a live twin of it that differs in a few places is redacted by
        looking only around those places (``apply_beside``), where ``_text`` searched the whole
        twin (~0.15 s for a 37 MB text). Kept in ``prepared`` (``Prepared.learned``), for the
        ``apply_beside`` given it."""
        if len(text) < prepared.limits.learn_min_chars:
            return
        hints = _Hints(text, self._long_from)
        has = _literal_test(hints)
        held: dict[tuple[str, bool], bool] = {}
        for atom, folded in self._looked_for():
            if atom == _RUN:
                held[atom, folded] = _has_long_run(text, self._long_from)
            else:
                held[atom, folded] = hints.any((atom,)) if folded else has(atom)
            yield
        prepared.learned = (text, held)

    def _looked_for(self) -> list[Atom]:
        """Everything ``_text`` tests a text for before it changes it: the atoms its rules
        declare (``TextRule``), each one substring (or a run of 20) that either occurs or not: one
        that a text's twin lacks can only occur in the text where the two differ, give or take
        its length."""
        return list(dict.fromkeys(atom for rule in self.text_rules for atom in rule.atoms))

    def _quiet_beside(self, text: str, twin: str, held: dict[tuple[str, bool], bool]) -> bool:
        """Whether ``_text(text)`` would return ``text`` unchanged without looking further, found
        from what its learned ``twin`` holds: every atom the twin lacks is looked for only where
        the two differ (with its length less one on each side); an atom the twin holds, in all
        of ``text``. False when some rule would run (``_text`` then decides, as always).
        ``held``: what ``learn`` learned of ``twin``."""
        if self._patterns:
            return False
        from mcp_replay_action.values.narrow import common_prefix, common_suffix

        atoms = self._looked_for()
        margin = max(19, *(len(atom) - 1 for atom, _ in atoms))
        p = common_prefix(text, twin)
        s = common_suffix(text, twin, min(len(text), len(twin)) - p)
        window = text[max(0, p - margin) : len(text) - s + margin]
        folded = _folded(window)
        long_from = self._long_from
        whole = _Hints(text, long_from)

        def occurs(atom: str, in_folded: bool) -> bool:
            if not held[atom, in_folded]:  # only where the two differ, if anywhere
                if atom == _RUN:
                    return _has_long_run(window, long_from)
                return atom in (folded if in_folded else window)
            if atom == _RUN:
                return _has_long_run(text, long_from)
            return whole.any((atom,)) if in_folded else atom in text

        found = {atom: occurs(*atom) for atom in atoms}
        # Every rule's gate, asked of this text as ``_text`` would ask it (none opened, the text
        # it asks the later ones of is this one), from the atoms the rules declared.
        answers = _Held(found)
        return not any(rule.opens(text, answers) for rule in self.text_rules)

    # -- the walk ---------------------------------------------------------------------------

    def _secret_key(self, key: str) -> bool:
        cached = self._key_cache.get(key)
        if cached is None:
            cached = (self.defaults and is_secret_key(key)) or (bool(self._user_keys) and _norm(key) in self._user_keys)
            self._key_cache[key] = cached
        return cached

    def _opaque_key(self, key: str | None) -> bool:
        if key is None:
            return False
        cached = self._opaque_cache.get(key)
        if cached is None:
            cached = self._opaque_cache[key] = _is_opaque_key(key)
        return cached

    def _hit(self, rule: str) -> str:
        self.hits[rule] += 1
        return PLACEHOLDER

    def _walk(
        self, value: Any, key: str | None, secret: bool, clean: Any = _NO_TWIN, prepared: Prepared | None = None
    ) -> Any:
        """``value`` redacted; ``clean``: its already redacted twin at the same place, if any;
        ``prepared``: what was learned of a long text ``clean`` holds (``learn``)."""
        kind = type(value)
        if clean is not _NO_TWIN and kind is type(clean):
            try:
                if value == clean:
                    return value
            except RecursionError:  # hostile nesting: the plain walk decides
                clean = _NO_TWIN
        if kind is str:
            if secret:
                return self._hit("secret-keys") if value else value
            if type(clean) is str and prepared is not None:
                held = prepared.learned_of(clean)
                if (
                    held is not None
                    and len(value) >= prepared.limits.learn_min_chars
                    and self._quiet_beside(value, clean, held)
                ):
                    prepared.taken["learned_redaction"] += 1
                    return value
            return self._text(value, key)
        if kind is dict:
            twins = clean if type(clean) is dict else _NO_TWINS
            media = value.get("type") in _MEDIA_TYPES
            out: dict[str, Any] = {}
            for k, v in value.items():
                if k in _CONTENT_KEYS or (media and k == "data"):
                    out[k] = _copy(v)
                else:
                    out[k] = self._walk(v, k, secret or self._secret_key(k), twins.get(k, _NO_TWIN), prepared)
            return out
        if kind is list:
            if type(clean) is list and clean:
                twin_list = clean
                return [
                    self._walk(v, key, secret, twin_list[i] if i < len(twin_list) else _NO_TWIN, prepared)
                    for i, v in enumerate(value)
                ]
            return [self._walk(v, key, secret) for v in value]
        if secret and (kind is int or kind is float):
            return self._hit("secret-keys")
        return value  # None, booleans, numbers

    def _text(self, text: str, key: str | None) -> str:
        """``text`` with every rule run over it whose gate opens (``TextRule``), in order."""
        if len(text) < self._shortest:
            return text
        hints = _Hints(text, self._long_from)
        run: list[bool] = []
        found = Found(hints, text, run)
        for rule in self.text_rules:
            if len(text) >= rule.shortest and rule.gate(text, found):
                replaced = rule.run(self, hints, key)
                if replaced != text:
                    hints = _Hints(replaced, self._long_from)
                    found = Found(hints, text, run)
                    text = replaced
        return text

    def _key_gate(self, text: str, found: Found) -> bool:
        """Whether the secret-key rules may find something in JSON text ``text`` (``_json_keys``)."""
        return text[:1] in ("{", "[") and bool(self._user_keys or found.words(_KEY_HINTS))

    def _env_gate(self, text: str, found: Found) -> bool:
        """Whether an env value occurs in ``text``."""
        return any(map(found.has, self._values))

    def _env(self, hints: _Hints, key: str | None) -> str:
        text = hints.text
        for value in self._values:
            if value in text:
                self.hits["env"] += text.count(value)
                text = text.replace(value, PLACEHOLDER)
        return text

    def _assignment(self, match: re.Match[str], opaque: bool) -> str:
        name, value = match.group("name").lstrip("-"), match.group("value")
        quoted = value[:1] in ("'", '"') and len(value) >= 2
        inner = value[1:-1] if quoted else value
        if not inner or PLACEHOLDER in inner or inner.lower() in _SCHEMES or _SHELL_REFERENCE.fullmatch(inner):
            return match.group(0)  # "password=$DB_PASS", "key=<your key>", "token=***": no secret here
        if self._secret_key(name):
            rule = "secret-keys"
        elif not opaque and not self._opaque_key(name) and looks_random(inner) and not _is_digest(inner):
            rule = "high-entropy"
        else:
            return match.group(0)
        replaced = self._hit(rule)
        if quoted:
            replaced = value[0] + replaced + value[-1]
        head = match.group(0)[: match.start("value") - match.start(0)]
        return head + replaced

    def _url_password(self, match: re.Match[str]) -> str:
        if match.group("password") == PLACEHOLDER:
            return match.group(0)
        return match.group("head") + self._hit("url-password") + "@"

    def _builtin(self, match: re.Match[str], opaque: bool) -> str:
        group = match.lastgroup
        if group == "bearer_token":
            token = match.group("bearer_token")
            if token.isalpha() and token.islower():  # "Bearer authentication": prose, not a token
                return match.group(0)
            return match.group("bearer") + self._hit("bearer")
        if group == "basic_token":
            if not _basic_credentials(match.group("basic_token")):
                return match.group(0)
            return match.group("basic") + self._hit("basic-auth")
        if group == "pem":
            return self._hit("private-key-pem")
        if group == "prefix":
            return self._hit("known-prefixes")
        if group == "entropy" and not opaque and looks_random(match.group(0)):
            token = match.group(0)
            if _is_digest(token) or _is_wrapped_line(match.string, match.start(), match.end()):
                return token  # an integrity hash, a digest, a certificate line: content
            return self._hit("high-entropy")
        return match.group(0)

    def _user_match(self, match: re.Match[str]) -> str:
        self.hits["patterns"] += 1
        if match.re.groups and match.group(1) is not None:
            whole, start = match.group(0), match.start(1) - match.start(0)
            return whole[:start] + PLACEHOLDER + whole[match.end(1) - match.start(0) :]
        return PLACEHOLDER

    def _json_keys(self, hints: _Hints, key: str | None) -> str:
        """Secret keys inside JSON carried as text (a tool's text content): the secret strings are
        replaced in place, so the text keeps its exact formatting."""
        text = hints.text
        try:
            doc = json.loads(text)
        except ValueError:
            return text
        if not isinstance(doc, (dict, list)):
            return text
        found: list[str] = []
        self._collect(doc, False, found)
        for secret in dict.fromkeys(found):
            for literal in {json.dumps(secret), json.dumps(secret, ensure_ascii=False)}:
                if literal in text:
                    self.hits["secret-keys"] += 1
                    text = text.replace(literal, json.dumps(PLACEHOLDER))
        return text

    def _collect(self, value: Any, secret: bool, found: list[str]) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k not in _CONTENT_KEYS:
                    self._collect(v, secret or self._secret_key(k), found)
        elif isinstance(value, list):
            for v in value:
                self._collect(v, secret, found)
        elif secret and isinstance(value, str) and value and value != PLACEHOLDER:
            found.append(value)


def _pattern_run(pattern: re.Pattern[str]) -> Callable[[Redactor, _Hints, str | None], str]:
    """What a user's pattern makes of a text."""
    return lambda redactor, hints, key: pattern.sub(redactor._user_match, hints.text)


def _builtin_for(hints: _Hints) -> re.Pattern[str]:
    """The built-in shapes as one pattern for ``hints.text``, less every alternative that cannot match anywhere in it (a
    word or literal each of its matches holds is missing): what is left finds exactly what the
    whole would, since an alternative that never matches never decides a place, and scans several
    times faster (the bearer, basic and prefix alternatives are tried at every character)."""
    has = _literal_test(hints)
    keep = (
        hints.any(("bearer",)),
        hints.any(("basic",)),
        has("PRIVATE KEY"),
        any(map(has, _PREFIX_MARKS)),
        True,
    )
    pattern = _BUILTIN_WITHOUT.get(keep)
    if pattern is None:
        kept = (alternative for alternative, wanted in zip(_BUILTIN_ALTERNATIVES, keep, strict=True) if wanted)
        pattern = _BUILTIN_WITHOUT[keep] = re.compile("|".join(kept))
    return pattern


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (faster than copy.deepcopy; strings are immutable)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


def env_secrets(env: Mapping[str, str] | None, public: Iterable[str] = ()) -> dict[str, str]:
    """The variables of ``env`` (the server's extra environment: the action's ``env`` input, the
    CLI's ``--env``) whose values are secrets: every one, whatever its name, except those declared
    public (``env-public``, ``--env-public NAME``). They are given on purpose and often come from
    secrets, so a server that echoes its environment must not publish them."""
    shown = set(public)
    return {name: value for name, value in (env or {}).items() if name not in shown}


def redactor_for(
    meta: Mapping[str, Any],
    base: Redactor | None,
    env: Mapping[str, str] | None = None,
    public: Iterable[str] = (),
) -> Redactor:
    """The redactor live answers to a cassette go through: ``base`` (the user's rules, or the
    defaults) plus the rules the cassette's header (``meta``) says ran when it was recorded: keys,
    patterns, and the values of the environment variables it names, looked up in ``env`` (the
    server's extra environment) first, then in ours. A value redacted on disk is so redacted live
    too, and never reads as a change. Every value of ``env`` but the ``public`` ones is redacted
    as well (``env_secrets``)."""
    found = meta.get("redaction")
    rules: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    keys = [k for k in rules.get("keys") or () if isinstance(k, str)]
    # A pattern the header had to redact itself (it was a literal secret) cannot be rebuilt.
    patterns = [p for p in rules.get("patterns") or () if isinstance(p, str) and PLACEHOLDER not in p]
    for name in rules.get("env") or ():
        value = ((env or {}).get(name) or os.environ.get(name)) if isinstance(name, str) else None
        if value and len(value) >= MIN_VALUE_LENGTH:
            patterns.append(re.escape(value))
    given = env_secrets(env, public)
    if not (keys or patterns or given):
        return base or Redactor(defaults=bool(rules.get("defaults", True)))
    defaults = base.defaults if base is not None else bool(rules.get("defaults", True))
    return Redactor(
        keys=[*(base.keys if base else ()), *keys],
        patterns=[*(base.patterns if base else ()), *patterns],
        defaults=defaults,
        env_values={**(base.env_values if base else {}), **given},
        limits=base.limits if base else None,
    )
