"""``mcp-replay calibrate``: learn a server's noise ahead of time and keep it in the cassette.

The cassette is replayed ``runs`` times, each against a fresh start of the same server; for every
request, what differs between those live answers becomes a ``noise.NoiseRule`` (a finding path,
for text a pattern that keeps the stable words, and the values seen as evidence). So does what the
server sent besides its answers, compared with the recording on each start (``noise.learn_heard``):
a log message or progress text that quotes a fresh id on each start is learned at the token, a
notice some starts send and others do not is learned as that one notice; a finding every start
gives alike is no noise. The rules are
stored in the cassette header under ``noise``: reviewable in the pull request that adds them,
shown by ``inspect``, removed by ``calibrate --clear``, and applied by every replay (a finding a
rule explains is reported as noise, never gating).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from mcp_replay_action.cassette import load
from mcp_replay_action.compare import noise
from mcp_replay_action.compare.correlate import ThreadRules
from mcp_replay_action.errors import ConfigError
from mcp_replay_action.model import JSON, JSONObject
from mcp_replay_action.model.cassette import Cassette
from mcp_replay_action.model.results import Finding
from mcp_replay_action.plan import Plan

MAX_RUNS = 20


@dataclass(frozen=True)
class Calibration:
    """What a calibration learned and wrote: the rules and the runs they came from."""

    path: str
    runs: int
    rules: tuple[noise.NoiseRule, ...]


def calibrate(plan: Plan, runs: int = 3) -> Calibration:
    """Replay the one cassette of ``plan`` ``runs`` times, each against a fresh start of its
    server and without the confirmation pass (``replay_cassette``, the function ``run`` replays
    each cassette with), learn what varies between the live answers, and store the rules in the
    cassette's header, replacing any rules a previous calibration stored. The plan's threading
    rules (``--thread``/``--no-thread``) thread the runs and are added to the header's."""
    from mcp_replay_action.replay.engine import keep_in, live_redactor, replay_cassette
    from mcp_replay_action.transport import open_transport

    if not 2 <= runs <= MAX_RUNS:
        raise ConfigError(f"--runs must be between 2 and {MAX_RUNS}, not {runs}")
    (path,) = plan.paths
    cassette = load(path)
    compare = plan.compare.at(cassette.meta.get("recorded_at"))
    # Live answers are redacted exactly as replay redacts them before comparing, so the evidence
    # stored in the header never holds a secret the server printed.
    redactor = live_redactor(cassette.meta, plan)
    declared = ThreadRules.from_meta(cassette.meta).merged(ThreadRules(plan.thread, plan.no_thread))
    once = replace(plan, confirm=False)
    lives: dict[int, list[JSON]] = {}
    heard: list[dict[tuple[int, str], Finding]] = []  # each run's findings about what else the server sent
    rows: list[set[int]] = []  # the seqs each run has a result for
    for _ in range(runs):
        seen: dict[int, JSONObject] = {}
        run = replay_cassette(without_noise(cassette), open_transport(plan.target), once, on_live=keep_in(seen))
        for seq, live in seen.items():
            lives.setdefault(seq, []).append(redactor.apply(live))
        heard.append(
            {(r.seq, f.path): f for r in run.results for f in r.findings if f.path.startswith(noise.HEARD_PATHS)}
        )
        rows.append({r.seq for r in run.results})
    rules: list[noise.NoiseRule] = []
    for seq, answers in sorted(lives.items()):
        if len(answers) == runs:
            rules.extend(noise.learn(answers, compare, seq))
    every = set.intersection(*rows)
    for seq, path in sorted({place for found in heard for place in found}):
        if seq in every:  # a row some run never reached (its server died) tells nothing
            rules.extend(noise.learn_heard([found.get((seq, path)) for found in heard], compare, seq))
    store(cassette, rules, declared)
    return Calibration(path=cassette.path, runs=runs, rules=tuple(rules))


def without_noise(cassette: Cassette) -> Cassette:
    """``cassette`` with no stored rules (a calibration learns afresh)."""
    if "noise" not in cassette.meta:
        return cassette
    return replace(cassette, meta={k: v for k, v in cassette.meta.items() if k != "noise"})


def store(cassette: Cassette, rules: list[noise.NoiseRule], threading: ThreadRules | None = None) -> None:
    """Write ``rules`` into the cassette's header (none: remove the ``noise`` key), and the
    declared ``threading`` rules when there are any, atomically."""
    from mcp_replay_action.replay.update import write_cassette

    meta = {k: v for k, v in cassette.meta.items() if k != "noise"}
    if rules:
        meta["noise"] = [r.to_json() for r in rules]
    if threading:
        meta["threading"] = threading.to_json()
    write_cassette(replace(cassette, meta=meta), cassette)
