"""What a secret looks like, for redaction (``redact.py`` applies these rules; this module only
says what they find).

* **Secret keys**: a key names a credential by its words (``is_secret_key``): ``apiKey``,
  ``API_KEY`` and ``x-api-key`` are one key; ``max_tokens`` and MCP's ``progressToken`` are not.
* **Secret shapes** in text (``BUILTIN_TEXT_RULES``, each a ``TextRule``: the atoms it looks for
  and a gate asking only of them): ``Bearer``/``Basic`` credentials, well-known key prefixes,
  JWTs, PEM keys, ``password=...`` assignments, URL passwords, and high-entropy runs
  (``looks_random``) outside keys that hold identifiers a replay must send back unchanged.
* **Secret flags** on a command line (``is_secret_flag``).
* **Hints** (``Hints``): the cheap searches that decide which rules can match a text at all, so a
  long text is scanned by the few patterns that may find something in it.
"""

from __future__ import annotations

import base64
import binascii
import collections
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from mcp_replay_action.values.minted import MINTED_KEYS

if TYPE_CHECKING:
    from mcp_replay_action.redact import Redactor

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
CONTENT_KEYS = frozenset({"inputSchema", "outputSchema", "blob"})
MEDIA_TYPES = frozenset({"image", "audio"})
# No redacted twin to skip against (``Redactor.apply_beside``).
NO_TWIN: Any = object()
NO_TWINS: dict[str, Any] = {}

_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")

_TOKEN_CHARS = r"A-Za-z0-9_\-+/"
# The built-in secret shapes, as alternatives of one pattern (tried in this order at each place).
BUILTIN_ALTERNATIVES = (
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
PREFIX_MARKS = (
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
BUILTIN_WITHOUT: dict[tuple[bool, ...], re.Pattern[str]] = {}
# A cheap test that lets most strings skip the built-in shapes: every secret they find has a run of 20 token
# characters, or the word bearer/basic, or a PEM armour line.
_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/]{20,}")
# The literals of the known-prefix shapes that match without such a run (``xoxb-0123456789`` is
# 15 characters; a JWT's runs are cut by its dots): a text holding one is scanned too.
_SHORT_PREFIX_MARKS = ("xox", "eyJ")
BUILTIN_NAMES = (
    "secret-keys",
    "bearer",
    "basic-auth",
    "private-key-pem",
    "known-prefixes",
    "high-entropy",
    "url-password",
)
# JSON text is searched for secret keys only when one of these occurs in it at all.
KEY_HINTS = ("pass", "secret", "token", "key", "auth", "cookie", "credential")
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
# Integrity and digest spellings that are content a replay must send back unchanged.
_SRI = re.compile(r"sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}")
_DIGEST_BYTES = frozenset({16, 20, 32, 48, 64})
_WRAPPED_LINE_LENGTHS = (64, 76)  # PEM and MIME line lengths
_BASE64_LINE = re.compile(r"[A-Za-z0-9+/]+={0,2}")
REGEX_SYNTAX = re.compile(r"[*+?{\[]|\\[dDwWsSb]")
SCHEMES = frozenset({"token", "basic", "bearer", "digest", "apikey"})
_ASSIGNMENT_HINTS = (*KEY_HINTS, "pw")
_SCHEME_HINTS = ("bearer", "basic")
_ODD_I = ("\u0130", "\u0131")  # İ folds to i plus a combining dot; ı does not fold at all
SHELL_REFERENCE = re.compile(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]*>|\*+|x+|\.{3}")


def case_folded(text: str) -> str:
    """``text`` case-folded for hint searches: a lower-case ASCII word occurs in it exactly when
    a ``re.IGNORECASE`` search finds the word in ``text`` (plain substring searches on it are
    several times faster than the regex, short strings included, and 20x on a 5 MiB answer).
    Case folding maps every letter ``re.IGNORECASE`` matches to an ASCII one (the long s, the
    Kelvin sign) but the two Turkish i's, which are mapped first."""
    for odd in _ODD_I:
        if odd in text:
            text = text.replace(odd, "i")
    return text.casefold()


RUN = "\0run"  # the atom of Redactor._looked_for that stands for a long token run (_LONG_RUN)


class Hints:
    """The hint searches on one text, which is folded once, on the first search. From
    ``long_from`` characters on (``Limits.long_text_chars``) a text's hint searches are
    remembered and its long-run test is made on bytes: each search of a 37 MiB answer costs
    ~25 ms, and one text is asked for the same words up to three times (``KEY_HINTS`` after
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
            self._folded = case_folded(self.text)
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


def literal_test(hints: Hints) -> Callable[[str], bool]:
    """Whether a literal occurs in ``hints.text``: ``Hints.has`` on a long text, ``in`` else."""
    return hints.has if len(hints.text) >= hints.long_from else hints.text.__contains__


def has_long_run(text: str, long_from: int) -> bool:
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
RUN_ATOM: Atom = (RUN, False)


class Found:
    """What a gate asks of the text it gates: whether a literal occurs as written (``has``),
    any of some lower-case words in any case (``words``), a run of 20 token characters (``run``).
    This one answers from the text itself."""

    __slots__ = ("has", "words", "_original", "_run", "_long_from")

    def __init__(self, hints: Hints, original: str, run: list[bool]) -> None:
        self.has: Callable[[str], bool] = literal_test(hints)
        self.words: Callable[[tuple[str, ...]], bool] = hints.any
        self._long_from = hints.long_from
        # The long run is looked for once, in the text as it came (shared by the answers for
        # the texts the rules make of it), as the rules have always been gated.
        self._original = original
        self._run = run

    def run(self) -> bool:
        if not self._run:
            self._run.append(len(self._original) >= 12 and has_long_run(self._original, self._long_from))
        return self._run[0]


class Held(Found):
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
        run: Callable[[Redactor, Hints, str | None], str],
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
    def literal(cls, name: str, literal: str, run: Callable[[Redactor, Hints, str | None], str]) -> TextRule:
        """A rule that may change only a text holding ``literal`` (as written)."""
        return cls(name, ((literal, False),), lambda text, found: found.has(literal), run, len(literal))

    def __repr__(self) -> str:
        return f"TextRule({self.name!r})"


def words_of(hints: tuple[str, ...]) -> tuple[Atom, ...]:
    return tuple((word, True) for word in hints)


def _tokens_gate(text: str, found: Found) -> bool:
    """Whether the token shapes (``_builtin_for``) may find something."""
    has = found.has
    return found.run() or has("PRIVATE KEY") or any(map(has, _SHORT_PREFIX_MARKS)) or found.words(_SCHEME_HINTS)


def _tokens_run(redactor: Redactor, hints: Hints, key: str | None) -> str:
    opaque = redactor._opaque_key(key)
    return _builtin_for(hints).sub(lambda m: redactor._builtin(m, opaque), hints.text)


def _assignment_gate(text: str, found: Found) -> bool:
    """Whether the assignment rule (``_ASSIGNMENT``) may find something."""
    return (found.has("=") or found.has(":")) and (found.run() or found.words(_ASSIGNMENT_HINTS))


def _assignment_run(redactor: Redactor, hints: Hints, key: str | None) -> str:
    opaque = redactor._opaque_key(key)
    return _ASSIGNMENT.sub(lambda m: redactor._assignment(m, opaque), hints.text)


def _url_gate(text: str, found: Found) -> bool:
    """Whether the URL password rule (``_URL_PASSWORD``) may find something."""
    return found.has("@") and found.has("://")


def _url_run(redactor: Redactor, hints: Hints, key: str | None) -> str:
    return _URL_PASSWORD.sub(redactor._url_password, hints.text)


def always(text: str, found: Found) -> bool:
    """The gate of a rule with no cheap test (a user's pattern): it runs on every text."""
    return True


# The built-in rules over strings, in the order they run (``defaults``): the secret shapes, then
# ``NAME=value`` assignments, then URL passwords. A rule added here is looked for beside a twin too.
BUILTIN_TEXT_RULES = (
    TextRule(
        "secret-shapes",
        (RUN_ATOM, ("PRIVATE KEY", False), *((m, False) for m in _SHORT_PREFIX_MARKS), *words_of(_SCHEME_HINTS)),
        _tokens_gate,
        _tokens_run,
        12,
    ),
    TextRule(
        "assignments",
        (("=", False), (":", False), RUN_ATOM, *words_of(_ASSIGNMENT_HINTS)),
        _assignment_gate,
        _assignment_run,
        MIN_VALUE_LENGTH,
    ),
    TextRule("url-password", (("@", False), ("://", False)), _url_gate, _url_run, MIN_VALUE_LENGTH),
)


def _words(key: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(key)]


def norm(key: str) -> str:
    """``X-Api-Key``, ``api_key``, ``apiKey`` -> ``xapikey`` / ``apikey``: case and separators ignored."""
    return "".join(ch for ch in key.lower() if ch.isalnum())


def is_secret_key(key: str) -> bool:
    """Whether the default rules treat the value under ``key`` as a credential."""
    words = _words(key)
    if not words:
        return False
    if norm(key).endswith(_SECRET_ENDINGS):
        return True
    for n in (1, 2, 3):
        if len(words) >= n and "".join(words[-n:]) in _SECRET_KEYS:
            return True
    if words[-1] == "token":
        return len(words) == 1 or words[-2] not in _NOT_SECRET_TOKENS
    return False


def is_opaque_key(key: str) -> bool:
    if norm(key) in _OPAQUE_KEYS:
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


def basic_credentials(token: str) -> bool:
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


def is_digest(token: str) -> bool:
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


def is_wrapped_line(text: str, start: int, end: int) -> bool:
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


def _builtin_for(hints: Hints) -> re.Pattern[str]:
    """The built-in shapes as one pattern for ``hints.text``, less every alternative that cannot match anywhere in it (a
    word or literal each of its matches holds is missing): what is left finds exactly what the
    whole would, since an alternative that never matches never decides a place, and scans several
    times faster (the bearer, basic and prefix alternatives are tried at every character)."""
    has = literal_test(hints)
    keep = (
        hints.any(("bearer",)),
        hints.any(("basic",)),
        has("PRIVATE KEY"),
        any(map(has, PREFIX_MARKS)),
        True,
    )
    pattern = BUILTIN_WITHOUT.get(keep)
    if pattern is None:
        kept = (alternative for alternative, wanted in zip(BUILTIN_ALTERNATIVES, keep, strict=True) if wanted)
        pattern = BUILTIN_WITHOUT[keep] = re.compile("|".join(kept))
    return pattern
