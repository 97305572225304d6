"""The rules over strings declare what they look for (``redact.TextRule``), and redaction beside
a learned twin (``Redactor._quiet_beside``, the fast path of a long answer) reads those
declarations: a rule added through the public API is looked for there too, and a gate that asks
of an atom nobody declared fails instead of letting a text pass unread."""

from __future__ import annotations

import itertools
import json
import random
import re

import pytest

from mcp_replay_action.redact import Redactor
from mcp_replay_action.redact_rules import BUILTIN_TEXT_RULES, PLACEHOLDER, Found, Hints, TextRule
from mcp_replay_action.values.limits import Limits
from mcp_replay_action.values.prepared import Prepared

pytestmark = [pytest.mark.unit, pytest.mark.usefixtures("limits")]

# Longer than the length from which a text is learned beside its twin (``Limits.learn_min_chars``).
RECORDS = 2000


def _twin() -> str:
    return json.dumps([{"id": i, "name": f"item-{i}", "tags": ["a", "b"]} for i in range(RECORDS)])


def _acme(redactor: Redactor, hints: Hints, key: str | None) -> str:
    """A new rule's work: ``ACME-`` and the word after it."""
    return re.sub(r"ACME-\w+", lambda m: redactor._hit("acme"), hints.text)


def _learned(redactor: Redactor, twin: str) -> tuple[Redactor, Prepared]:
    """``redactor``, and what it learned of ``twin`` (as a replay learns it, in a ``Prepared``)."""
    prepared = Prepared(Limits(), {"text": twin})
    for _ in redactor.learn(twin, prepared):
        pass
    assert prepared.learned_of(twin) is not None
    return redactor, prepared


class _Asked(Found):
    """A ``Found`` that answers every question from ``answer`` and notes the atoms asked."""

    def __init__(self, answer: bool) -> None:  # noqa: D107  # nothing of a text
        self.asked: set[tuple[str, bool]] = set()
        self.answer = answer

        def has(literal: str) -> bool:
            self.asked.add((literal, False))
            return answer

        def words(hints: tuple[str, ...]) -> bool:
            self.asked.update((word, True) for word in hints)
            return answer

        self.has, self.words = has, words

    def run(self) -> bool:
        self.asked.add(("\0run", False))
        return self.answer


def test_every_rule_asks_only_of_the_atoms_it_declares_and_the_fast_path_looks_for_them() -> None:
    """Each rule of a redactor with every kind of rule (the built-ins, user keys, a pattern, env
    values, a rule of its own) asks its gate only of atoms it declares, whatever they answer,
    and every declared atom is among what redaction beside a twin looks for."""
    own = TextRule.literal("acme", "ACME-", _acme)
    redactor = Redactor(keys=("sessionid",), patterns=(r"item-99\d",), env_values={"DB": "s3cr3t-v"}, rules=(own,))
    looked_for = set(redactor._looked_for())
    assert set(BUILTIN_TEXT_RULES) <= set(redactor.text_rules)
    assert own in redactor.text_rules
    seen = 0
    for rule, answer, text in itertools.product(redactor.text_rules, (False, True), ("{" + "x" * 40, "y" * 40)):
        found = _Asked(answer)
        rule.gate(text, found)
        assert found.asked <= set(rule.atoms), (rule, found.asked - set(rule.atoms))
        seen += bool(found.asked)
    for rule in redactor.text_rules:
        assert set(rule.atoms) <= looked_for, rule
    assert ("ACME-", False) in looked_for and ("s3cr3t-v", False) in looked_for
    assert seen >= 2 * len(BUILTIN_TEXT_RULES)  # the gates did ask: the check is not vacuous


def test_a_closed_gate_means_the_rule_leaves_the_text_as_it_is() -> None:
    """On random texts made of the pieces every rule looks for, the secret shapes and the URL
    password rule change nothing when their gate is closed and they are run anyway: their gates
    are sound prechecks. (The assignment rule's is not quite: ``a.b:/c.d...``, a value of 32
    characters cut by dots, with no hint word around, looks random to its pattern, and its gate,
    which asks for a run of 20 token characters, stays closed. Both paths gate it alike, so
    what is redacted is the same with or without a twin.)"""
    rnd = random.Random(5)
    pieces = [
        "Bearer abcdefgh12345678",
        "Basic dXNlcjpwYXNz",
        "password=hunter2hunter2",
        "token: Zx9Qm2Lp7Rt4Vb8Nc3Kd6Hs1Jf5Gw0Ay",
        "postgres://u:pw1234@db",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----",
        "xoxb-0123456789",
        "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl",
        "the quick brown fox ",
        "a=b ",
        "@",
        "://",
        "k3y",
    ]
    redactor = Redactor()
    closed = 0
    for _ in range(3000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 4)))
        text = "".join(ch for ch in text if rnd.random() > 0.05)  # pieces cut here and there
        for rule in BUILTIN_TEXT_RULES:
            if rule.name == "assignments":
                continue
            hints = Hints(text, redactor.limits.long_text_chars)
            if not rule.opens(text, Found(hints, text, [])):
                closed += 1
                assert rule.run(redactor, hints, None) == text, (rule, text)
    assert closed > 500, closed


def test_a_rule_added_through_the_api_is_looked_for_beside_a_twin() -> None:
    """A redactor given a rule of its own (``TextRule.literal``) and a long recorded text:
    the live twin that differs elsewhere is settled by the fast path (left as it is without a
    look at the whole), and the live twin that changed exactly where the rule finds something
    is redacted there, as redacting it alone does."""
    twin = _twin()
    beside, prepared = _learned(Redactor(rules=(TextRule.literal("acme", "ACME-", _acme),)), twin)
    at = len(twin) // 2
    elsewhere = twin[:at] + "zz" + twin[at:]
    assert beside._quiet_beside(elsewhere, twin, prepared.learned_of(twin))  # the fast path was taken
    assert beside.apply_beside({"text": elsewhere}, {"text": twin}, prepared) == {"text": elsewhere}
    changed = twin[:at] + "ACME-4f2 " + twin[at:]
    assert not beside._quiet_beside(changed, twin, prepared.learned_of(twin))
    got = beside.apply_beside({"text": changed}, {"text": twin}, prepared)["text"]
    assert "ACME-" not in got and got == twin[:at] + PLACEHOLDER + " " + twin[at:]
    alone = Redactor(rules=(TextRule.literal("acme", "ACME-", _acme),))
    assert alone.apply({"text": changed}) == {"text": got}
    assert beside.hits == alone.hits == {"acme": 1}


def test_an_env_value_new_in_a_long_answer_is_redacted_beside_its_twin() -> None:
    """The env values are a rule like the others (their atoms are the values): one that appears
    only where the live answer changed is redacted there, as the fast path reads the values."""
    twin = _twin()
    beside, prepared = _learned(Redactor(env_values={"DB_PASSWORD": "s3cr3t-env-value"}), twin)
    at = len(twin) // 3
    assert beside._quiet_beside(twin[:at] + "1" + twin[at:], twin, prepared.learned_of(twin))
    changed = twin[:at] + "s3cr3t-env-value" + twin[at:]
    assert beside.apply_beside({"text": changed}, {"text": twin}, prepared) == {
        "text": twin[:at] + PLACEHOLDER + twin[at:]
    }


def test_a_gate_that_asks_of_an_undeclared_atom_fails_beside_a_twin() -> None:
    """A rule whose gate looks for something it did not declare cannot be skipped silently by
    the fast path: answering its gate from the learned atoms fails."""
    twin = _twin()
    sloppy = TextRule("sloppy", (), lambda text, found: found.has("ACME-"), _acme)
    beside, prepared = _learned(Redactor(rules=(sloppy,)), twin)
    with pytest.raises(KeyError):
        beside._quiet_beside(twin[:100] + "ACME-1 " + twin[100:], twin, prepared.learned_of(twin))
