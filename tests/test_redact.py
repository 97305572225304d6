"""Redaction: what is a secret, what is content, and that the result is stable for replay."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import random
import secrets
import string
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_argv import redact_argv
from mcp_replay_action.redact_rules import PLACEHOLDER, is_secret_key, looks_random
from mcp_replay_action.values.limits import Limits

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]

R = PLACEHOLDER
LONG = Limits().long_text_chars  # from this length on a text is searched as a long one
GHP = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)


@pytest.mark.parametrize(
    "key",
    [
        "authorization",
        "Authorization",
        "Proxy-Authorization",
        "api_key",
        "apiKey",
        "API_KEY",
        "apikey",
        "x-api-key",
        "X-Api-Key",
        "OPENAI_API_KEY",
        "token",
        "access_token",
        "accessToken",
        "refresh_token",
        "id_token",
        "session_token",
        "github_token",
        "csrf_token",
        "password",
        "dbPassword",
        "dbpassword",
        "passwd",
        "secret",
        "client_secret",
        "clientSecret",
        "webhook_secret",
        "cookie",
        "Set-Cookie",
        "private_key",
        "privateKey",
        "aws_secret_access_key",
        "credentials",
    ],
)
def test_secret_keys(key):
    assert is_secret_key(key)
    assert Redactor().apply({key: "hunter2"}) == {key: R}


@pytest.mark.parametrize(
    "key",
    [
        "max_tokens",
        "maxTokens",
        "tokens_used",
        "token_count",
        "input_tokens",
        "completion_tokens",
        "progressToken",
        "nextPageToken",
        "next_token",
        "cursor",
        "nextCursor",
        "key",
        "keyboard",
        "monkey",
        "author",
        "authorName",
        "secretary",
        "password_policy",
        "tokenizer",
        "description",
    ],
)
def test_not_secret_keys(key):
    assert not is_secret_key(key)
    assert Redactor().apply({key: "hunter2"}) == {key: "hunter2"}


def test_values_under_secret_keys_of_every_type():
    out = Redactor().apply(
        {
            "password": 1234,
            "has_password": True,
            "token": None,
            "secret": "",
            "cookies": ["a=1", "b=2"],
            "credentials": {"user": "bob", "pass": "x"},
        }
    )
    assert out == {
        "password": R,
        "has_password": True,  # a flag is not a secret
        "token": None,
        "secret": "",  # nothing to hide
        "cookies": [R, R],
        "credentials": {"user": R, "pass": R},
    }


def test_bearer_and_basic_inside_strings():
    r = Redactor()
    assert r.apply("curl -H 'Authorization: Bearer abc123DEF456ghi' x") == "curl -H 'Authorization: Bearer " + R + "' x"
    assert r.apply("bearer " + JWT) == "bearer " + R
    assert r.apply("We use Bearer authentication here") == "We use Bearer authentication here"
    creds = base64.b64encode(b"alice:wonderland").decode()
    assert r.apply(f"Authorization: Basic {creds}") == f"Authorization: Basic {R}"
    assert r.apply("Basic usage: call the tool twice") == "Basic usage: call the tool twice"


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ",
        "sk-ant-api03-Zx8yW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6",
        GHP,
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
        "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "AKIAIOSFODNN7EXAMPLE",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "sk_live_51Habcdefghijklmnop",
        JWT,
    ],
)
def test_known_prefixes_anywhere_in_text(secret):
    assert Redactor().apply(f"your key is {secret}, keep it safe") == f"your key is {R}, keep it safe"
    assert Redactor().apply({"note": secret}) == {"note": R}


def test_pem_private_key():
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----"
    assert Redactor().apply(f"key:\n{pem}\nend") == f"key:\n{R}\nend"


def test_high_entropy_tokens_are_redacted_and_look_alikes_are_not():
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits
    r = Redactor()
    for _ in range(300):
        token = secrets.token_urlsafe(rng.choice((24, 32, 48)))
        base62 = "".join(rng.choice(alphabet) for _ in range(rng.randint(32, 64)))
        for value in (token, base62):
            if looks_random(value):
                assert r.apply(f"token: {value} ok") == f"token: {R} ok"
    # What is not a secret, however long:
    for value in (
        str(uuid.uuid4()),
        uuid.uuid4().hex,
        hashlib.sha256(b"x").hexdigest(),
        hashlib.sha1(b"x").hexdigest().upper(),
        "getUserProfileByIdentifierAsyncWrapper",
        "/Users/Bob/Projects/App2/src/Main2Test",
        "a" * 40,
        base64.b64encode(b"\x00" * 300).decode(),
        "The quick brown fox jumps over the lazy dog 1234567890 times",
    ):
        assert r.apply(value) == value, value
    rng_hits = sum(
        looks_random("".join(rng.choice(alphabet) for _ in range(40))) for _ in range(1000)
    )  # calibrated: nearly every random key qualifies
    assert rng_hits > 980


def test_identifiers_cursors_and_state_are_not_guessed_at():
    minted = "Zx8yW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6"
    assert looks_random(minted)
    doc = {
        "id": minted,
        "taskId": minted,
        "nextCursor": minted,
        "requestState": minted,
        "_meta": {"progressToken": minted},
        "uri": f"memo://{minted}",
        "text": minted,
    }
    out = Redactor().apply(doc)
    assert out == {**doc, "text": R}


def test_content_payloads_are_never_redacted():
    secretish = "Zx8yW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6"
    image = {"type": "image", "data": secretish, "mimeType": "image/png"}
    audio = {"type": "audio", "data": "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ", "mimeType": "audio/wav"}
    blob = {"uri": "file:///a.bin", "mimeType": "application/octet-stream", "blob": secretish}
    tool = {
        "name": "login",
        "inputSchema": {
            "type": "object",
            "properties": {"api_key": {"type": "string", "default": "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ"}},
        },
        "outputSchema": {"type": "object", "properties": {"token": {"type": "string"}}},
    }
    text = {"type": "text", "text": "Plain prose, with numbers 12 and a URL https://example.com/docs?page=2."}
    doc = {"content": [image, audio, {"type": "resource", "resource": blob}, text], "tools": [tool]}
    assert Redactor().apply(doc) == doc


def test_json_inside_text_keeps_its_formatting():
    text = json.dumps({"user": "bob", "api_key": "abc123xyz", "nested": {"password": "pw"}, "n": 3}, indent=2)
    out = Redactor().apply({"type": "text", "text": text})["text"]
    assert out == text.replace('"abc123xyz"', f'"{R}"').replace('"pw"', f'"{R}"')
    assert json.loads(out)["user"] == "bob"


def test_apply_returns_a_deep_copy_and_never_changes_its_input():
    doc = {"a": [{"password": "x"}, {"blob": "b", "inputSchema": {"p": [1]}}], "image": {"type": "image", "data": "d"}}
    before = copy.deepcopy(doc)
    out = Redactor().apply(doc)
    assert doc == before
    out["a"][1]["inputSchema"]["p"].append(2)
    out["image"]["type"] = "x"
    assert doc == before


def test_placeholder_is_stable_across_rotating_secrets():
    r = Redactor()
    recorded = r.apply({"result": {"session_token": "first-secret", "text": "Bearer abcdef123456"}})
    live = r.apply({"result": {"session_token": "rotated-secret", "text": "Bearer zyxwvu987654"}})
    assert recorded == live


def test_user_keys_and_patterns():
    r = Redactor(keys=["session_id"], patterns=[r"pin=(\d+)", r"internal-\w+"])
    out = r.apply({"sessionId": "s1", "Session-Id": "s2", "note": "pin=1234 on internal-host please"})
    assert out == {"sessionId": R, "Session-Id": R, "note": f"pin={R} on {R} please"}
    assert Redactor(keys=["session_id"]).apply({"text": '{"session_id": "abc", "n": 1}'}) == {
        "text": f'{{"session_id": "{R}", "n": 1}}'
    }


def test_invalid_pattern_is_a_config_error_naming_it():
    with pytest.raises(ConfigError, match=r"invalid --redact-pattern '\(unclosed'"):
        Redactor(patterns=["(unclosed"])


def test_defaults_off_keeps_only_user_rules():
    r = Redactor(keys=["mine"], defaults=False)
    assert r.apply({"password": "x", "mine": "y", "t": GHP}) == {"password": "x", "mine": R, "t": GHP}
    assert r.rules()["defaults"] == []


def test_rules_describe_without_revealing():
    r = Redactor(keys=["session_id"], patterns=[r"pin=(\d+)", GHP])
    r.apply({"password": "hunter2", "text": "Bearer abcdef123456", "note": "pin=42"})
    rules = r.rules()
    assert rules["placeholder"] == R
    assert "secret-keys" in rules["defaults"] and "high-entropy" in rules["defaults"]
    assert rules["keys"] == ["session_id"]
    assert rules["patterns"] == [r"pin=(\d+)", f"{R} literal pattern 2"]  # a literal stays off disk
    assert rules["hits"] == {"bearer": 1, "patterns": 1, "secret-keys": 1}
    assert "hunter2" not in json.dumps(rules) and GHP not in json.dumps(rules)


def test_redact_argv():
    argv = [
        "node",
        "dist/index.js",
        "--api-key",
        "abc",
        "--token=def",
        "--max-tokens=5",
        "API_KEY=ghi",
        "-H",
        "Authorization: Bearer abcdef123456",
        "--url=http://localhost:8080/mcp",
        GHP,
    ]
    assert redact_argv(Redactor(), argv) == [
        "node",
        "dist/index.js",
        "--api-key",
        R,
        f"--token={R}",
        "--max-tokens=5",
        f"API_KEY={R}",
        "-H",
        f"Authorization: {R}",
        "--url=http://localhost:8080/mcp",
        R,
    ]


def test_a_whole_mcp_exchange():
    request = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "fetch",
            "arguments": {"url": "https://api.example.com", "headers": {"Authorization": "Bearer abc.def.ghi123"}},
            "_meta": {"progressToken": 7},
        },
    }
    response = {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {"content": [{"type": "text", "text": f"fetched with {GHP}"}], "isError": False},
    }
    r = Redactor()
    assert r.apply(request)["params"] == {
        "name": "fetch",
        "arguments": {"url": "https://api.example.com", "headers": {"Authorization": R}},
        "_meta": {"progressToken": 7},
    }
    assert r.apply(response)["result"]["content"][0]["text"] == f"fetched with {R}"
    assert r.apply(response)["id"] == 3


def test_env_values_are_replaced_anywhere_and_only_named_in_the_rules():
    r = Redactor().with_env_values({"DB_TOKEN": "s3cr3t-value", "SHORT": "abc"})
    out = r.apply({"text": "dsn=s3cr3t-value@h", "n": ["s3cr3t-value"], "abc": "abc"})
    assert out == {"text": f"dsn={R}@h", "n": [R], "abc": "abc"}  # 3 chars: too short to hunt
    rules = r.rules()
    assert rules["env"] == ["DB_TOKEN", "SHORT"] and rules["hits"]["env"] == 2
    assert "s3cr3t-value" not in json.dumps(rules)
    assert Redactor(keys=["k"]).with_env_values({"A": "xyzw"}).keys == ("k",)


def _leaves(value, path=()):
    """(path, leaf) for every string and number in a JSON value."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))
    elif isinstance(value, (str, int, float)) and not isinstance(value, bool):
        yield path, value


def _set(doc, path, new):
    for step in path[:-1]:
        doc = doc[step]
    doc[path[-1]] = new


def test_apply_beside_a_clean_twin_redacts_exactly_what_apply_does():
    """A live answer redacted beside its (redacted) recording: only the changed parts are walked,
    and the result is the plain redaction's, whatever the server changed: a secret under a secret
    key, a token in text or in JSON text, an added key or list item, a media payload."""
    from mcp_replay_action.cassette import load

    rng = random.Random(11)
    secrets_ = [
        GHP,
        JWT,
        "Bearer abcdef1234567890",
        "sk-proj-Ab3dEf5gHi7jKl9mNo1pQr3sTu5vWx7yZ",
        "token=hunter2hunter2",
    ]
    r = Redactor(keys=["session"]).with_env_values({"DB_TOKEN": "s3cr3t-value"})
    answers = [
        {"jsonrpc": "2.0", "id": 1, "result": {"session": "abc", "content": [{"type": "text", "text": "hi"}]}},
        {"result": {"items": [{"password": "x", "n": 3}, {"uri": "u", "text": '{"api_key": "k1", "x": 1}'}]}},
        {"result": {"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "blob": "b"}},
    ]
    for path in sorted((Path(__file__).parent.parent / "cassettes/calc").glob("*.jsonl")):
        answers += [i.response for i in load(path).interactions if isinstance(i.response, dict)]
    for answer in answers:
        clean = r.apply(answer)
        assert r.apply_beside(answer, clean) == clean  # nothing changed: nothing to do
        for _ in range(20):
            live = copy.deepcopy(answer)
            leaves = list(_leaves(live))
            where, _old = rng.choice(leaves)
            _set(live, where, rng.choice([*secrets_, "plain text", "dsn=s3cr3t-value@h", 42]))
            if rng.random() < 0.3 and isinstance(live, dict):
                live["token"] = rng.choice(secrets_)  # a key the recording never had
            if rng.random() < 0.3:
                live.setdefault("extra", []).append({"api_key": rng.choice(secrets_)})
            assert r.apply_beside(live, clean) == r.apply(live), (where, live)


def test_hint_words_are_found_in_any_case_exactly_as_an_ignorecase_regex_finds_them():
    """The hints that decide whether a text is searched for ``Bearer``/``token=`` secrets are
    plain substring searches on the case-folded text: every spelling ``re.IGNORECASE`` matches
    (the long s, the Kelvin sign, the dotless i) is found, and nothing the regex misses is."""
    import re as re_

    from mcp_replay_action.redact_rules import _ASSIGNMENT_HINTS, _SCHEME_HINTS, Hints

    for words in (_ASSIGNMENT_HINTS, _SCHEME_HINTS):
        regex = re_.compile("|".join(words), re_.IGNORECASE)
        letters = {ch for word in words for ch in word}
        every_char = "".join(map(chr, range(0x110000)))
        twins = {ch: re_.compile(ch, re_.IGNORECASE).findall(every_char) for ch in letters}
        for word in words:
            for at, ch in enumerate(word):
                for twin in twins[ch]:
                    text = "x=" + word[:at] + twin + word[at + 1 :].upper() + "=1"
                    assert Hints(text, LONG).any(words), text
        rng = random.Random(5)
        alphabet = "aAbBsSkKiIeEtToOnNpPwWrRcCdDlLuUhHſKı=:- "
        for _ in range(3000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 24)))
            assert Hints(text, LONG).any(words) == (regex.search(text) is not None), text


def test_a_bearer_token_deep_in_a_large_text_is_still_redacted():
    """The hint searches that keep a long answer fast still find a secret anywhere in it."""
    filler = '{"id":1,"name":"item-1","score":3},' * 40_000
    text = "[" + filler + '{"note":"Authorization: Bearer abcdef1234567890","n":"pAssword=hunter2hunter2"}]'
    out = Redactor().apply(text)
    assert "abcdef1234567890" not in out and "hunter2hunter2" not in out
    assert out.startswith("[" + filler[:1000])


def _secret_shapes(rnd: random.Random) -> list[str]:
    """One text fragment of every shape the built-in rules know, and near misses of each."""
    base62 = string.ascii_letters + string.digits

    def run(n: int, alphabet: str = base62) -> str:
        return "".join(rnd.choice(alphabet) for _ in range(n))

    return [
        "Bearer " + run(rnd.randint(6, 40)),
        "bEaReR\t" + run(12, base62 + "-._~+/") + "==",
        "Authorization: Basic " + base64.b64encode(b"user:" + run(8).encode()).decode(),
        "BASIC " + run(10),
        "BAS\u0130C " + run(10),  # a dotted capital I: not ASCII, never matched
        "-----BEGIN RSA PRIVATE KEY-----\n" + run(64) + "\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----" + run(20),
        "sk-" + run(rnd.randint(18, 30), base62 + "_-"),
        rnd.choice("pousr").join(("gh", "_")) + run(rnd.randint(28, 40)),
        "github_pat_" + run(rnd.randint(20, 30), base62 + "_"),
        "glpat-" + run(22),
        "xox" + rnd.choice("abposr") + "-" + run(rnd.randint(8, 14), base62 + "-"),
        rnd.choice(("AKIA", "ASIA")) + run(16, string.ascii_uppercase + string.digits),
        "AIza" + run(35, base62 + "_-"),
        rnd.choice(("sk", "rk", "pk")) + rnd.choice(("_live_", "_test_")) + run(rnd.randint(14, 24)),
        "npm_" + run(36),
        "hf_" + run(rnd.randint(28, 34)),
        JWT,
        "eyJ" + run(rnd.randint(7, 12)) + ".eyJ" + run(rnd.randint(7, 12)) + "." + run(rnd.randint(7, 12)),
        run(rnd.randint(30, 60), base62 + "_-+/") + "=" * rnd.randint(0, 2),
        str(uuid.uuid4()),
        hashlib.sha256(run(8).encode()).hexdigest(),
        "x" + run(40),
        "." + run(40),
    ]


def test_the_built_in_shapes_less_what_cannot_match_find_what_all_of_them_find() -> None:
    # _builtin_for leaves out the alternatives a text cannot match: the matches (and so every
    # redaction) must be those of the whole pattern, on texts holding every shape and near miss.
    import re

    from mcp_replay_action.redact_rules import BUILTIN_ALTERNATIVES, Hints, _builtin_for

    whole = re.compile("|".join(BUILTIN_ALTERNATIVES))
    rnd = random.Random(20261201)
    words = ["the", "token", "key", "ghost", "basically", "bearers", "sk", "xo", "eyJ", "AKI", " ", "\n", ":", "="]
    left_out = 0
    for _ in range(3000):
        shapes = _secret_shapes(rnd)
        parts = rnd.sample(shapes, rnd.randint(0, 3)) + rnd.choices(words, k=rnd.randint(0, 12))
        rnd.shuffle(parts)
        text = rnd.choice(("", " ", '{"v": "')).join(parts)
        reduced = _builtin_for(Hints(text, LONG))
        spans = [(m.lastgroup, m.span()) for m in reduced.finditer(text)]
        assert spans == [(m.lastgroup, m.span()) for m in whole.finditer(text)], text
        left_out += reduced.pattern != whole.pattern
    assert left_out > 1000  # most texts do leave some out


@pytest.mark.parametrize(
    "token",
    ["xoxb-0123456789", "xoxp-abcdefghij", "eyJhbGciOiJ.eyJzdWIiOiJ.abcdefgh", "eyJabcdefgh.eyJabcdefgh.abcdefgh"],
)
def test_a_known_prefix_token_without_a_long_run_is_redacted(token: str) -> None:
    # The 20-character gate in front of the built-in shapes once skipped these, though the
    # known-prefix rule matches them.
    redactor = Redactor()
    assert redactor.apply({"text": token, "note": f"use {token} here"}) == {"text": R, "note": f"use {R} here"}
    assert redactor.hits["known-prefixes"] == 2


def test_every_known_prefix_match_is_redacted_whatever_the_gate_lets_through() -> None:
    # The gate is a fast path: every text the known-prefix rule matches anywhere must reach it,
    # so the redacted text holds none of those matches and each counts once.
    import re

    from mcp_replay_action.redact_rules import BUILTIN_ALTERNATIVES

    whole = re.compile("|".join(BUILTIN_ALTERNATIVES))
    rnd = random.Random(15)
    words = ["the", "token", "xox", "xoxb", "eyJ", "sk", "-", ".", " ", "\n", "ok"]
    found = 0
    for _ in range(3000):
        parts = rnd.sample(_secret_shapes(rnd), rnd.randint(0, 2)) + rnd.choices(words, k=rnd.randint(0, 6))
        rnd.shuffle(parts)
        text = rnd.choice(("", " ", ", ")).join(parts)
        prefixes = [m.group() for m in whole.finditer(text) if m.lastgroup == "prefix"]
        redactor = Redactor()
        out = redactor.apply([text])[0]
        assert redactor.hits["known-prefixes"] == len(prefixes), text
        assert not any(token in out for token in prefixes), (text, out)
        found += bool(prefixes)
    assert found > 800  # most texts hold one


def test_a_text_with_a_long_run_and_no_secret_is_left_as_it_is_and_one_with_secrets_is_not() -> None:
    now = json.dumps({"time": "2026-12-01T05:39:49+00:00", "requestId": str(uuid.uuid4())})
    assert Redactor().apply(now) == now
    leaky = f"{now} Bearer {GHP} {JWT}"
    assert Redactor().apply(leaky) == f"{now} Bearer {R} {R}"


def test_a_long_text_has_a_long_run_exactly_where_the_regex_finds_one() -> None:
    """Long texts are tested for a 20-character token run as bytes, a window at a time: a run on
    a window's edge, across it, 19 long, cut by a non-ASCII letter or a lone surrogate, is found
    or not exactly as ``_LONG_RUN`` finds it."""
    from mcp_replay_action.redact_rules import _LONG_RUN, _RUN_WINDOW, has_long_run

    rnd = random.Random(11)
    filler = ('{"id":1,"name":"item-1","tags":["a","b"]},' * (_RUN_WINDOW // 20))[: 2 * _RUN_WINDOW + 100]
    cuts = ["\u00e9", "\ud800", "\U0001f600", " ", ".", "=", "\x00"]
    for _ in range(200):
        length = rnd.choice([19, 20, 21, 40])
        run = "".join(rnd.choice(string.ascii_letters + string.digits + "_-+/") for _ in range(length))
        if rnd.random() < 0.3:
            at = rnd.randrange(1, length)
            run = run[:at] + rnd.choice(cuts) + run[at:]
        edge = rnd.choice([_RUN_WINDOW, 2 * _RUN_WINDOW, LONG, 0, len(filler)])
        where = max(0, min(len(filler), edge + rnd.randint(-length - 2, 2)))
        text = filler[:where] + run + filler[where:]
        if rnd.random() < 0.2:
            text = text[: rnd.choice([LONG - 1, LONG, _RUN_WINDOW + 19, len(text)])]
        assert has_long_run(text, LONG) == (_LONG_RUN.search(text) is not None), (where, run)
    dots = "." * (2 * _RUN_WINDOW + 100)
    for edge in (_RUN_WINDOW, 2 * _RUN_WINDOW):
        for where in range(edge - 25, edge + 5):
            for length in (19, 20):
                text = dots[:where] + "k" * length + dots[where:]
                assert has_long_run(text, LONG) == (length == 20), (where, length)


def test_a_long_text_answers_each_hint_search_as_a_fresh_search_would() -> None:
    """A long text remembers the words and letters it was found not to hold: asked again, in any
    grouping and order, every answer is the plain substring search's (filler holding some of the
    words' letters, near misses, the words themselves in upper case)."""
    from mcp_replay_action.redact_rules import _ASSIGNMENT_HINTS, _SCHEME_HINTS, KEY_HINTS, Hints

    rnd = random.Random(12)
    groups = [_ASSIGNMENT_HINTS, KEY_HINTS, _SCHEME_HINTS, ("bearer",), ("basic",), ("pw", "token"), ()]
    words = sorted({w for g in groups for w in g})
    letters = sorted({ch for word in words for ch in word})
    for _ in range(120):
        # Filler of a few of the words' letters (so some letters are there and some are not),
        # near misses (a word with one letter changed), and now and then words themselves.
        alphabet = "x{}:," + "".join(rnd.sample(letters, rnd.randint(0, len(letters))))
        text = "".join(rnd.choice(alphabet) for _ in range(LONG))
        for word in rnd.sample(words, rnd.randint(0, 4)):
            at = rnd.randrange(len(text))
            miss = rnd.randrange(len(word))
            text = text[:at] + word[:miss] + "x" + word[miss + 1 :] + text[at:]
        for word in rnd.sample(words, rnd.choice([0, 0, 1, 2])):
            at = rnd.randrange(len(text))
            text = text[:at] + word.upper() + text[at:]
        hints = Hints(text, LONG)
        for group in rnd.choices(groups, k=8):
            assert hints.any(group) == any(word in text.lower() for word in group), group


def test_a_long_text_is_redacted_as_the_short_text_path_redacts_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shortcut a long text takes (its long-run test on bytes, remembered words, letters
    and literals) leaves exactly what the plain path leaves: long texts of JSON records holding
    every secret shape and near miss, redacted both ways, with the same hits."""
    from mcp_replay_action import redact_rules

    short = Limits(long_text_chars=1 << 62)  # no text is long: every text takes the short path
    looks = {"fast": 0, "plain": 0}  # the long path's remembered searches, by redactor
    real_occurs = redact_rules._occurs
    side = "fast"

    def occurs(literal: str, text: str, absent: set[str]) -> bool:
        looks[side] += 1
        return real_occurs(literal, text, absent)

    monkeypatch.setattr(redact_rules, "_occurs", occurs)
    rnd = random.Random(13)
    record = '{"id":%d,"name":"item-%d","tags":["a","b"],"owner":{"team":"t%d"}},'
    filler = "".join(record % (i, i, i % 13) for i in range(1200))
    for _ in range(40):
        parts = [filler, filler[: rnd.randrange(len(filler))]]
        for shape in rnd.sample(_secret_shapes(rnd), rnd.randint(0, 3)):
            parts.append('{"note":"' + shape.replace('"', "'") + '"},')
        for literal in rnd.sample(["PRIVATE KEY", "xox", "eyJ", "Bearer", "token=", "key", "@x://", "ghp_"], 3):
            if rnd.random() < 0.5:
                parts.append('{"v":"' + literal + '"},')
        rnd.shuffle(parts)
        text = "[" + "".join(parts).rstrip(",") + "]"
        assert len(text) >= LONG
        side = "fast"
        fast = Redactor(limits=Limits())  # the fast paths on, whatever MCP_REPLAY_FAST says
        got = fast.apply({"text": text})
        side = "plain"
        plain = Redactor(limits=short)
        assert got == plain.apply({"text": text})
        assert fast.hits == plain.hits
        off = Redactor(limits=Limits(fast=False))  # MCP_REPLAY_FAST=0: the plain searches too
        assert off.apply({"text": text}) == got and off.hits == fast.hits
    assert looks["fast"] > 40 and looks["plain"] == 0, looks  # each took its own path


# Pieces of text a live answer may hold: secrets of every shape the rules know, near misses, and
# the characters and words the rules look for before they run.
_PIECES = [
    "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3jK5",
    "xoxb-1234-5678-abcdefghij",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc",
    "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----",
    "password=hunter2hunter2",
    "password: hunter2hunter2",
    "token: abc",
    '"api_key": "Zx81kQ0pLm3Vb7Tn"',
    "Authorization: Bearer Zx81kQ0pLm3Vb7TnQw",
    "https://bob:pa55word@db.example.com/x",
    "A1b2C3d4E5f6G7h8I9j0K1l2",  # a long token run
    "s3cr3t-env-value",
    "PASS",
    "Tok en",
    "bear er",
    "Basic",
    "KEY",
    "=",
    ":",
    "@",
    "//",
    "é",
    "İ",
    "ß",
    '"',
    "\n",
]


def _filler(rnd: random.Random, size: int) -> str:
    """JSON-ish data and prose, with the pieces above here and there."""
    out: list[str] = []
    while sum(map(len, out)) < size:
        roll = rnd.random()
        if roll < 0.5:
            i = rnd.randrange(1000)
            out.append(f'{{"id":{i},"name":"item-{i}","tags":["a","b"]}},')
        elif roll < 0.8:
            out.append(rnd.choice(["the quick brown fox ", "jumps over ", "a lazy dog. ", "0123 ", "x" * 19 + " "]))
        else:
            out.append(rnd.choice(_PIECES))
    return "".join(out)


def test_a_long_text_beside_its_learned_twin_is_redacted_as_it_is_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A live text that differs from its learned twin (``Redactor.learn``) in one place is left
    as it is only when redacting it alone leaves it so: on random texts (data, prose, near
    misses), edited with every secret shape, a piece of one, or a secret cut so that it forms
    across the edit's edges, twins that hold some of the looked-for words themselves, and
    redactors with user keys, patterns, env values or no built-in rules, the redacted text and
    the hits are those of ``apply`` on the text alone."""
    from mcp_replay_action.values.prepared import Prepared

    # Long texts of a few hundred characters, learned from 200 characters on.
    limits = Limits(long_text_chars=200, learn_min_chars=200)
    quiet = 0
    looked = Redactor._quiet_beside

    def counted(self: Redactor, text: str, twin: str, held: Any) -> bool:
        nonlocal quiet
        settled = looked(self, text, twin, held)
        quiet += settled
        return settled

    monkeypatch.setattr(Redactor, "_quiet_beside", counted)
    rnd = random.Random(29)
    configs = [
        {},
        {"keys": ("sessionid",)},
        {"patterns": (r"item-99\d",)},
        {"env_values": {"DB_PASSWORD": "s3cr3t-env-value"}},
        {"defaults": False},
        {"defaults": False, "env_values": {"X_TOKEN": "item-4"}},
        {"defaults": False, "keys": ("name",)},
    ]
    for trial in range(600):
        twin = "[" + _filler(rnd, rnd.randint(200, 2500)) + "]" if rnd.random() < 0.7 else _filler(rnd, 400)
        if rnd.random() < 0.5:  # a twin of plain data only: the fast look settles most of them
            twin = json.dumps([{"id": i, "name": f"item-{i}"} for i in range(rnd.randint(10, 80))])
        at = rnd.randrange(len(twin))
        end = min(len(twin), at + rnd.choice([0, 1, 5, 40]))
        piece = rnd.choice([*_PIECES, "", "item-7", "zz"])
        if rnd.random() < 0.3 and len(piece) > 2:
            # A secret cut in two: its second half written just after the edit, so that it is
            # whole only in the live text, across the edit's edge.
            cut = rnd.randrange(1, len(piece))
            live = twin[:at] + piece[:cut] + piece[cut:] + twin[at:]
            twin = twin[:at] + piece[cut:] + twin[at:]
        else:
            live = twin[:at] + piece + twin[end:]
        if live == twin:
            continue
        config = rnd.choice(configs)
        alone = Redactor(**config, limits=limits)
        expected = alone.apply({"text": live})
        beside = Redactor(**config, limits=limits)
        prepared = Prepared(limits, {"text": twin})
        for _ in beside.learn(twin, prepared):
            pass
        got = beside.apply_beside({"text": live}, {"text": twin}, prepared)
        assert got == expected, (trial, config, live, twin)
        assert beside.hits == alone.hits, (trial, config)
    assert quiet > 50, quiet  # the look around the edit alone settled a good share of them


def test_a_token_with_letters_of_one_case_only_is_settled_as_counting_them_settles_it():
    """``looks_random`` answers a token whose cased letters are all lower (or all upper) case
    without counting: the count of the other case is 0, below 2. Checked against the counts on
    tokens mixing every kind of cased character (titlecase, non-ASCII, none at all)."""
    import collections
    import math

    def counted(text: str) -> bool:
        core = text.rstrip("=")
        n = len(core)
        if n < 32 or n > 100 or core.count("/") > 3:
            return False
        if sum(map(str.isdigit, core)) < 2 or sum(map(str.isupper, core)) < 2 or sum(map(str.islower, core)) < 2:
            return False
        counts = collections.Counter(core).values()
        return -sum(c / n * math.log2(c / n) for c in counts) >= 4.0 + 0.016 * (n - 32)

    rng = random.Random(3)
    pools = [
        "abcdef0123456789-",
        "ABCDEF0123456789",
        "aZ09",
        "ǅǆǄ",
        "ßΣσ09",
        "0123456789_-",
        string.ascii_letters + string.digits,
    ]
    for _ in range(4000):
        pool = "".join(rng.sample(pools, rng.randint(1, 3)))
        token = "".join(rng.choice(pool) for _ in range(rng.randint(30, 60))) + "=" * rng.randint(0, 2)
        assert looks_random(token) == counted(token), token
    assert looks_random(str(uuid.uuid4())) is False


def test_a_redactor_made_without_limits_obeys_the_one_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recording paths and the CLI make ``Redactor()`` with no limits: ``MCP_REPLAY_FAST=0``
    must turn their long-text searches off too (issue #29)."""
    monkeypatch.setenv("MCP_REPLAY_FAST", "0")
    assert Redactor().limits.fast is False and Redactor()._long_from == sys.maxsize
    monkeypatch.setenv("MCP_REPLAY_FAST", "1")
    assert Redactor().limits.fast is True and Redactor()._long_from == LONG
