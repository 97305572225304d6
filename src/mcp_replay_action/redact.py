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

import collections
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.redact_rules import (
    BUILTIN_NAMES,
    BUILTIN_TEXT_RULES,
    CONTENT_KEYS,
    KEY_HINTS,
    MEDIA_TYPES,
    MIN_VALUE_LENGTH,
    NO_TWIN,
    NO_TWINS,
    PLACEHOLDER,
    REGEX_SYNTAX,
    RUN,
    SCHEMES,
    SHELL_REFERENCE,
    Atom,
    Found,
    Held,
    Hints,
    TextRule,
    always,
    basic_credentials,
    case_folded,
    has_long_run,
    is_digest,
    is_opaque_key,
    is_secret_key,
    is_wrapped_line,
    literal_test,
    looks_random,
    norm,
    words_of,
)
from mcp_replay_action.values.limits import Limits

if TYPE_CHECKING:
    from mcp_replay_action.values.prepared import Prepared

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
            {s for v in self.env_values.values() if len(v) >= MIN_VALUE_LENGTH for s in spellings(v)},
            key=len,
            reverse=True,
        )
        self.keys = tuple(dict.fromkeys(k for k in keys if k))
        self._user_keys = frozenset(norm(k) for k in self.keys)
        self.patterns = tuple(dict.fromkeys(patterns))
        self._patterns = tuple(self._compile(p) for p in self.patterns)
        # Every rule over strings, in the order ``_text`` runs them (see ``TextRule``).
        self.text_rules: tuple[TextRule, ...] = (
            *(BUILTIN_TEXT_RULES if defaults else ()),
            TextRule("secret-keys", words_of(KEY_HINTS), self._key_gate, Redactor._json_keys, 12),
            *(TextRule(f"pattern {n}", (), always, _pattern_run(p)) for n, p in enumerate(self._patterns, 1)),
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

    def is_secret_name(self, key: str) -> bool:
        """Whether the value under ``key`` (or after a flag of that name) is hidden: a built-in
        secret key (with the defaults on) or one of ``keys``. The command-line rules
        (``redact_argv``) ask it."""
        return self._secret_key(key)

    def rules(self) -> dict[str, Any]:
        """What this redactor does, for a cassette header: rule names, user keys and patterns, and
        how many values each rule replaced so far. Never a secret value."""
        # A pattern that can only match fixed text is most likely the secret itself: the header
        # names it instead of writing it.
        patterns = [
            p if REGEX_SYNTAX.search(p) else f"{PLACEHOLDER} literal pattern {n}"
            for n, p in enumerate(self.patterns, start=1)
        ]
        return {
            "placeholder": PLACEHOLDER,
            "defaults": list(BUILTIN_NAMES) if self.defaults else [],
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
        hints = Hints(text, self._long_from)
        has = literal_test(hints)
        held: dict[tuple[str, bool], bool] = {}
        for atom, folded in self._looked_for():
            if atom == RUN:
                held[atom, folded] = has_long_run(text, self._long_from)
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
        folded = case_folded(window)
        long_from = self._long_from
        whole = Hints(text, long_from)

        def occurs(atom: str, in_folded: bool) -> bool:
            if not held[atom, in_folded]:  # only where the two differ, if anywhere
                if atom == RUN:
                    return has_long_run(window, long_from)
                return atom in (folded if in_folded else window)
            if atom == RUN:
                return has_long_run(text, long_from)
            return whole.any((atom,)) if in_folded else atom in text

        found = {atom: occurs(*atom) for atom in atoms}
        # Every rule's gate, asked of this text as ``_text`` would ask it (none opened, the text
        # it asks the later ones of is this one), from the atoms the rules declared.
        answers = Held(found)
        return not any(rule.opens(text, answers) for rule in self.text_rules)

    # -- the walk ---------------------------------------------------------------------------

    def _secret_key(self, key: str) -> bool:
        cached = self._key_cache.get(key)
        if cached is None:
            cached = (self.defaults and is_secret_key(key)) or (bool(self._user_keys) and norm(key) in self._user_keys)
            self._key_cache[key] = cached
        return cached

    def _opaque_key(self, key: str | None) -> bool:
        if key is None:
            return False
        cached = self._opaque_cache.get(key)
        if cached is None:
            cached = self._opaque_cache[key] = is_opaque_key(key)
        return cached

    def _hit(self, rule: str) -> str:
        self.hits[rule] += 1
        return PLACEHOLDER

    def _walk(
        self, value: Any, key: str | None, secret: bool, clean: Any = NO_TWIN, prepared: Prepared | None = None
    ) -> Any:
        """``value`` redacted; ``clean``: its already redacted twin at the same place, if any;
        ``prepared``: what was learned of a long text ``clean`` holds (``learn``)."""
        kind = type(value)
        if clean is not NO_TWIN and kind is type(clean):
            try:
                if value == clean:
                    return value
            except RecursionError:  # hostile nesting: the plain walk decides
                clean = NO_TWIN
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
            twins = clean if type(clean) is dict else NO_TWINS
            media = value.get("type") in MEDIA_TYPES
            out: dict[str, Any] = {}
            for k, v in value.items():
                if k in CONTENT_KEYS or (media and k == "data"):
                    out[k] = _copy(v)
                else:
                    out[k] = self._walk(v, k, secret or self._secret_key(k), twins.get(k, NO_TWIN), prepared)
            return out
        if kind is list:
            if type(clean) is list and clean:
                twin_list = clean
                return [
                    self._walk(v, key, secret, twin_list[i] if i < len(twin_list) else NO_TWIN, prepared)
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
        hints = Hints(text, self._long_from)
        run: list[bool] = []
        found = Found(hints, text, run)
        for rule in self.text_rules:
            if len(text) >= rule.shortest and rule.gate(text, found):
                replaced = rule.run(self, hints, key)
                if replaced != text:
                    hints = Hints(replaced, self._long_from)
                    found = Found(hints, text, run)
                    text = replaced
        return text

    def _key_gate(self, text: str, found: Found) -> bool:
        """Whether the secret-key rules may find something in JSON text ``text`` (``_json_keys``)."""
        return text[:1] in ("{", "[") and bool(self._user_keys or found.words(KEY_HINTS))

    def _env_gate(self, text: str, found: Found) -> bool:
        """Whether an env value occurs in ``text``."""
        return any(map(found.has, self._values))

    def _env(self, hints: Hints, key: str | None) -> str:
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
        if not inner or PLACEHOLDER in inner or inner.lower() in SCHEMES or SHELL_REFERENCE.fullmatch(inner):
            return match.group(0)  # "password=$DB_PASS", "key=<your key>", "token=***": no secret here
        if self._secret_key(name):
            rule = "secret-keys"
        elif not opaque and not self._opaque_key(name) and looks_random(inner) and not is_digest(inner):
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
            if not basic_credentials(match.group("basic_token")):
                return match.group(0)
            return match.group("basic") + self._hit("basic-auth")
        if group == "pem":
            return self._hit("private-key-pem")
        if group == "prefix":
            return self._hit("known-prefixes")
        if group == "entropy" and not opaque and looks_random(match.group(0)):
            token = match.group(0)
            if is_digest(token) or is_wrapped_line(match.string, match.start(), match.end()):
                return token  # an integrity hash, a digest, a certificate line: content
            return self._hit("high-entropy")
        return match.group(0)

    def _user_match(self, match: re.Match[str]) -> str:
        self.hits["patterns"] += 1
        if match.re.groups and match.group(1) is not None:
            whole, start = match.group(0), match.start(1) - match.start(0)
            return whole[:start] + PLACEHOLDER + whole[match.end(1) - match.start(0) :]
        return PLACEHOLDER

    def _json_keys(self, hints: Hints, key: str | None) -> str:
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
                if k not in CONTENT_KEYS:
                    self._collect(v, secret or self._secret_key(k), found)
        elif isinstance(value, list):
            for v in value:
                self._collect(v, secret, found)
        elif secret and isinstance(value, str) and value and value != PLACEHOLDER:
            found.append(value)


def _pattern_run(pattern: re.Pattern[str]) -> Callable[[Redactor, Hints, str | None], str]:
    """What a user's pattern makes of a text."""
    return lambda redactor, hints, key: pattern.sub(redactor._user_match, hints.text)


def _copy(value: Any) -> Any:
    """A deep copy of a JSON value (faster than copy.deepcopy; strings are immutable)."""
    kind = type(value)
    if kind is dict:
        return {k: _copy(v) for k, v in value.items()}
    if kind is list:
        return [_copy(v) for v in value]
    return value


def spellings(value: str) -> set[str]:
    """``value`` as it may be echoed: itself and inside JSON text (``"`` and ``\\`` escaped, and
    non-ASCII as ``\\u`` escapes or not), so a server that echoes its environment inside a JSON
    document publishes none of them."""
    return {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


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
            patterns += (re.escape(spelling) for spelling in sorted(spellings(value), key=len, reverse=True))
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
