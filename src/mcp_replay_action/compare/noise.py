"""Noise learned, not guessed: what differs between two live runs of the same build is not a
regression.

When an interaction differs, the confirmation pass (``replay``) sends the same request sequence to a
fresh start of the same server and hands both live answers here. ``learn`` compares them and
returns one ``NoiseRule`` per place that differs: its finding path and, for text, a pattern that
holds the text's stable tokens literally and only the tokens that varied as wildcards, each as
narrow as what varied (a PID, a duration, a minted id: one word; ``tokens.py``), with the values
seen as evidence. ``split`` then moves every finding a rule
explains (the recorded value at that path fits the pattern) out of the gating findings and into
``noise``: visible in every report, never failing. A real change elsewhere in the same text (a
clause dropped next to a minted id, a word changed, an item added) does not fit the pattern and
still fails.

A text built from a set ("Available commands: head, sort, wc", in a new order in every process)
differs between two live runs by the order of its items alone: the rule then holds the separator
of those items (``order``), and a value fits it when, with every run of items so separated put in
sorted order, it fits the pattern. A third order of the same items fits; an item added or removed,
or a word changed, does not. A text longer than ``LEARN_MAX_CHARS`` (a document) is learned only
in the short window where its live copies differ (``longtext.py``); what differs across a longer
stretch still gates, and a long text that still gates is shown at its first difference outside
every such window (``text_change.py``), not at the PID that varied above the word that changed.

``calibrate`` learns the same rules from N runs ahead of time and stores them in the cassette
header (``noise``), where ``inspect`` shows them and every replay applies them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.compare.longtext import learn_window, window_fits
from mcp_replay_action.compare.masks import OPAQUE
from mcp_replay_action.compare.normalize import BOX_TYPES, Keyed, normalize, parse_path
from mcp_replay_action.compare.text_change import past_noise
from mcp_replay_action.compare.tokens import EVIDENCE_CAP, text_pattern
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.results import Finding
from mcp_replay_action.values.paths import Token

# Only leaf values and their order can be noise: a key, an item or an error class that comes and
# goes between two runs is a server whose state was not reset (``--setup``), and still gates.
NOISE_KINDS = frozenset({"value-change", "ordering-change"})
_MISSING = object()
LEARN_MAX_CHARS = 1 << 14
# The separators a set's items are joined by in prose, most specific first; a list is a run of two
# or more items joined by one, an item a run of characters that are neither space nor separator
# (``\n``: a line; `` ``: a word). Each list pattern starts only where a run of item characters
# starts and never gives back what it read: linear in the text's length.
ORDER_SEPARATORS = (", ", ",", "; ", " | ", "\n", " ")


def _list_pattern(sep: str) -> re.Pattern[str]:
    if sep == "\n":
        item = r"[^\n]"
    elif sep == " ":
        item = r"\S"
    else:
        item = "[^\\s" + re.escape("".join(dict.fromkeys(sep.strip()))) + "]"
    return re.compile(rf"(?<!{item}){item}++(?:{re.escape(sep)}{item}++)++")


_LISTS = {sep: _list_pattern(sep) for sep in ORDER_SEPARATORS}


def in_order(text: str, sep: str) -> str:
    """``text`` with the items of every list joined by ``sep`` in sorted order."""
    return _LISTS[sep].sub(lambda m: sep.join(sorted(m.group().split(sep))), text)


@dataclass(frozen=True)
class NoiseRule:
    """A place where live answers of one build differ: ``path`` (finding notation), and for text a
    ``pattern`` (a regular expression the whole value matches) with the varying values seen."""

    path: str
    pattern: str | None = None
    evidence: tuple[str, ...] = ()
    seq: int | None = None  # the interaction it was learned on (None: any)
    order: str | None = None  # the separator of items whose order varies (``in_order``)
    # A long text's rule: the pattern is its window's, ``head`` and ``tail`` characters in
    # (``longtext.py``); it explains a finding only beside the live text.
    head: int | None = None
    tail: int | None = None

    def to_json(self) -> JSONObject:
        out: JSONObject = {"path": self.path}
        if self.seq is not None:
            out["seq"] = self.seq
        if self.pattern is not None:
            out["pattern"] = self.pattern
        if self.order is not None:
            out["order"] = self.order
        if self.head is not None and self.tail is not None:
            out["head"], out["tail"] = self.head, self.tail
        out["evidence"] = list(self.evidence)
        return out

    @classmethod
    def from_json(cls, data: JSON) -> NoiseRule | None:
        """A rule from a cassette header entry, or None when the entry is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            return None
        pattern = data.get("pattern")
        seq = data.get("seq")
        order = data.get("order")
        head, tail = data.get("head"), data.get("tail")
        if not (_count(head) and _count(tail)):
            head = tail = None
        evidence = data.get("evidence") or ()
        return cls(
            path=data["path"],
            pattern=pattern if isinstance(pattern, str) else None,
            evidence=tuple(str(e) for e in evidence)[:EVIDENCE_CAP] if isinstance(evidence, list) else (),
            seq=seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
            order=order if order in _LISTS else None,
            head=head,
            tail=tail,
        )


def _count(value: JSON) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def rules_by_seq(meta: JSON) -> dict[int, list[NoiseRule]]:
    """The calibrated rules a cassette header holds (``noise``), by the interaction they apply to."""
    entries = meta.get("noise") if isinstance(meta, dict) else None
    out: dict[int, list[NoiseRule]] = {}
    for entry in entries if isinstance(entries, list) else ():
        rule = NoiseRule.from_json(entry)
        if rule is not None and rule.seq is not None:
            out.setdefault(rule.seq, []).append(rule)
    return out


def learn(lives: Sequence[JSON], options: CompareOptions | None = None, seq: int | None = None) -> list[NoiseRule]:
    """The rules that explain every difference between live answers of one request (2 or more)."""
    options = options or CompareOptions()
    if len(lives) < 2:
        return []
    paths: dict[str, None] = {}
    for other in lives[1:]:
        for finding in compare(lives[0], other, options):
            paths.setdefault(finding.path, None)
    if not paths:
        return []
    normalized = [normalize(live, options) for live in lives]
    rules = []
    for path in paths:
        values = [resolve(n, path) for n in normalized]
        if all(isinstance(v, str) for v in values):
            texts = [str(v) for v in values]
            if max(map(len, texts)) > LEARN_MAX_CHARS:
                window = learn_window(texts)  # a long text: only where it varies, if that is short
                if window is not None:
                    learned = window.learned
                    rules.append(
                        NoiseRule(path, learned.pattern, learned.evidence, seq, None, window.head, window.tail)
                    )
                continue
            rules.append(_text_rule(path, texts, seq))
        else:
            seen = tuple(dict.fromkeys(_show(v) for v in values))[:EVIDENCE_CAP]
            rules.append(NoiseRule(path, None, seen, seq))
    return rules


def split(
    findings: Sequence[Finding],
    rules: Iterable[NoiseRule],
    recorded: JSON,
    options: CompareOptions | None = None,
    live: JSON = None,
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """``findings`` parted into (still gating, explained by a rule as noise). A text rule explains
    a finding when the recorded value, and the ``live`` one when given, both fit its pattern."""
    rules = list(rules)
    if not rules or not findings:
        return tuple(findings), ()
    sides = [normalize(recorded, options)]
    if live is not None:
        sides.append(normalize(live, options))
    kept: list[Finding] = []
    noise: list[Finding] = []
    for finding in findings:
        if finding.kind in NOISE_KINDS and any(_explained(r, finding, sides) for r in rules):
            noise.append(finding)
        else:
            kept.append(_past_noise(finding, rules, sides))
    return tuple(kept), tuple(noise)


# Where what the server sent besides its answers is found (``notifications.py``): a finding there
# holds both values it is about, and is explained by rules learned from those values.
HEARD_PATHS = ("$.notifications", "$.server_requests")
_BOXED = "$.v"  # the key a heard finding's values are put under to be compared and learned


def learn_heard(
    found: Sequence[Finding | None], options: CompareOptions | None = None, seq: int | None = None
) -> list[NoiseRule]:
    """The rules that explain a finding about what the server sent besides its answers (a log
    message, a notice, progress, a request to the client), as ``calibrate`` saw it on each of its
    fresh starts (None: that start sent what the recording holds there). None when every start
    gave the very same finding (a real difference, or a state the runs share). A value that varied
    is learned at the token (``learn``): a log message quoting a job id each start mints gets a
    wildcard for the id, and a clause dropped beside it still fails. Anything else that varied (a
    notice on some starts only, a progress count) is one rule for the whole finding: one
    notification, the smallest unit that differed."""
    present = [f for f in found if f is not None]
    if not present or (len(present) == len(found) and all(_same(f, present[0]) for f in present)):
        return []
    path = present[0].path
    if all(f.kind == "value-change" for f in present):
        values = [f.after for f in present] + ([present[0].before] if len(present) < len(found) else [])
        learned = learn([{"v": v} for v in values], options, seq)
        if learned and all(r.path.startswith(_BOXED) for r in learned):
            return [replace(r, path=path + r.path[len(_BOXED) :]) for r in learned]
    seen = tuple(dict.fromkeys(_show(f.after) for f in present))[:EVIDENCE_CAP]
    return [NoiseRule(path, None, seen, seq)]


def split_heard(
    findings: Sequence[Finding], rules: Iterable[NoiseRule], options: CompareOptions | None = None
) -> tuple[tuple[Finding, ...], tuple[Finding, ...]]:
    """``findings`` about what the server sent besides its answers, parted into (still gating,
    explained by a calibrated rule as noise): a rule for the whole finding explains it, token
    rules when they explain every difference between its two values."""
    rules = [r for r in rules if r.path.startswith(HEARD_PATHS)]
    if not rules or not findings:
        return tuple(findings), ()
    kept: list[Finding] = []
    noise: list[Finding] = []
    for finding in findings:
        (noise if _heard_explained(finding, rules, options) else kept).append(finding)
    return tuple(kept), tuple(noise)


def _heard_explained(finding: Finding, rules: list[NoiseRule], options: CompareOptions | None) -> bool:
    here = [r for r in rules if r.path == finding.path or _under(r.path, finding.path)]
    if any(r.path == finding.path and r.pattern is None for r in here):
        return True
    if not here or finding.kind != "value-change":
        return False
    boxed = [replace(r, path=_BOXED + r.path[len(finding.path) :]) for r in here]
    before, after = {"v": finding.before}, {"v": finding.after}
    differ = compare(before, after, options)
    return bool(differ) and not split(differ, boxed, before, options, after)[0]


def _same(a: Finding, b: Finding) -> bool:
    return (a.kind, a.rule, a.before, a.after) == (b.kind, b.rule, b.before, b.after)


def _past_noise(finding: Finding, rules: list[NoiseRule], sides: list[JSON]) -> Finding:
    """A text's finding that still gates, told at the first difference its learned rules do not
    explain (``text_change.past_noise``): not at a PID that varies above a changed word."""
    here = [r for r in rules if r.path == finding.path and r.pattern is not None and r.order is None]
    if not here or len(sides) < 2:
        return finding
    recorded, live = (resolve(side, finding.path) for side in sides)
    if not (isinstance(recorded, str) and isinstance(live, str)):
        return finding
    windows = [(r.head, str(r.pattern)) for r in here if r.head is not None]
    patterns = [str(r.pattern) for r in here if r.head is None and max(len(recorded), len(live)) <= LEARN_MAX_CHARS]
    return past_noise(finding, recorded, live, windows, patterns)


def _explained(rule: NoiseRule, finding: Finding, sides: list[JSON]) -> bool:
    """Whether ``rule`` explains ``finding`` on every side (recorded, and live when known)."""
    if rule.head is None or rule.tail is None or rule.pattern is None:
        return all(_explains(rule, finding, side) for side in sides)
    if rule.path != finding.path or len(sides) < 2:
        return False  # a long text's window is placed beside the live text
    recorded, live = (resolve(side, finding.path) for side in sides)
    if not (isinstance(recorded, str) and isinstance(live, str)):
        return False
    return window_fits(recorded, live, rule.head, rule.tail, rule.pattern)


def _explains(rule: NoiseRule, finding: Finding, answer: JSON) -> bool:
    if rule.path == finding.path:
        if rule.pattern is None:
            return True
        value = resolve(answer, finding.path)
        if value == OPAQUE:
            # A whole value the mask took for a minted token (``j_5bc04ace``) where the live runs
            # gave values it did not (``j_2ffdfad2``, two digits): token-shaped, at a place seen to
            # vary, it holds no clause or word to drop.
            return True
        if not isinstance(value, str) or len(value) > LEARN_MAX_CHARS:
            return False
        if rule.order is not None:
            value = in_order(value, rule.order)
        return re.fullmatch(rule.pattern, value, re.DOTALL) is not None
    # A whole subtree that varies explains every difference inside it.
    return rule.pattern is None and _under(finding.path, rule.path)


def _under(path: str, parent: str) -> bool:
    return path.startswith(parent) and path[len(parent) : len(parent) + 1] in (".", "[", "{")


def _text_rule(path: str, texts: list[str], seq: int | None) -> NoiseRule:
    """The rule for live texts that differ: their common tokens literally, the rest as wildcards;
    where putting the items of some separator's lists in order leaves fewer wildcards (the texts
    differ in the order of a set's items), that pattern over the ordered texts."""
    learned = text_pattern(texts)
    pattern, best, evidence = learned.pattern, learned.wildcards, learned.evidence
    order = None
    for sep in ORDER_SEPARATORS:
        if best == 0:
            break
        ordered = [in_order(t, sep) for t in texts]
        if ordered == texts:
            continue
        candidate = text_pattern(ordered)
        if candidate.wildcards < best:
            pattern, best, order = candidate.pattern, candidate.wildcards, sep
            evidence = candidate.evidence or tuple(dict.fromkeys(_show(t) for t in texts))[:EVIDENCE_CAP]
    return NoiseRule(path, pattern, evidence, seq, order)


def resolve(value: JSON, path: str) -> JSON:
    """The value a finding path names inside a normalised answer, or a sentinel when it names none."""
    try:
        tokens = parse_path(path)
    except Exception:  # a path we rendered ourselves; never expected to fail, never fatal
        return _MISSING
    node = value
    for token in tokens:
        node = _step(node, token)
        if node is _MISSING:
            return _MISSING
    return node


def _step(node: JSON, token: Token) -> JSON:
    kind = token[0]
    if kind == "box":
        for box in BOX_TYPES:
            if isinstance(node, box):
                return node.get("{" + box.tag + "}", _MISSING)
        return _MISSING
    if isinstance(node, BOX_TYPES) and kind != "box":
        node = next(iter(node.values()))  # boxes are transparent
    if kind == "key" and isinstance(node, dict) and not isinstance(node, Keyed):
        return node.get(token[1], _MISSING)
    if kind == "ident" and isinstance(node, Keyed):
        return node.get(token[2], _MISSING)
    if kind == "index":
        items = list(node.values()) if isinstance(node, Keyed) else node
        if isinstance(items, list) and -len(items) <= token[1] < len(items):
            return items[token[1]]
    return _MISSING


def _show(value: JSON) -> str:
    if value is _MISSING:
        return "(absent)"
    text = value if isinstance(value, str) else repr(value)
    return text[:80]
