"""Sharding a run across CI jobs: ``replay --shard i/n`` takes a deterministic share of the
cassettes, balanced by interaction count, and ``merge`` combines the shards' JSON reports into
the report (grade and gate included) one run over every cassette would have produced."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_replay_action.errors import ConfigError
from mcp_replay_action.grade.assemble import build_report
from mcp_replay_action.model.gate import GatePolicy
from mcp_replay_action.model.results import Report

MAX_SHARDS = 256


def parse_shard(text: str) -> tuple[int, int]:
    """``i/n`` (1 <= i <= n <= 256) as ``(i, n)``. Raises ConfigError otherwise."""
    index, slash, count = text.strip().partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i = n = 0
    if not slash or not 1 <= i <= n <= MAX_SHARDS:
        raise ConfigError(f"expected a shard as i/n with 1 <= i <= n <= {MAX_SHARDS}, such as 2/3; got {text!r}")
    return i, n


def assign(weights: Sequence[int], count: int) -> list[int]:
    """The shard (0-based) of each item: heaviest first onto the lightest shard so far, ties to
    the lower index and the earlier item, so every job computes the same split."""
    loads = [0] * count
    shards = [0] * len(weights)
    for item in sorted(range(len(weights)), key=lambda k: (-weights[k], k)):
        target = min(range(count), key=lambda s: (loads[s], s))
        shards[item] = target
        loads[target] += weights[item]
    return shards


def share(paths: Sequence[str], index: int, count: int) -> tuple[str, ...]:
    """The cassettes of shard ``index`` of ``count`` (1-based), in the order of ``paths``."""
    from mcp_replay_action.cassette import load

    weights = [len(load(p).interactions) for p in paths]  # one cassette in memory at a time
    shards = assign(weights, count)
    return tuple(p for p, s in zip(paths, shards, strict=True) if s == index - 1)


def merge(reports: Sequence[Report], names: Sequence[str], policy: GatePolicy | None = None) -> Report:
    """One report from the shards' reports (``names`` say where each came from, for errors):
    cassettes in path order, scored and gated over all of them with ``policy``, else with the
    shards' own gate policy (which must then be the same in every shard)."""
    if not reports:
        raise ConfigError("merge: no report given")
    common = reports[0].gate.policy
    seen: dict[str, str] = {}
    for report, name in zip(reports, names, strict=True):
        if policy is None and report.gate.policy != common:
            raise ConfigError(
                f"{name}: gated with {report.gate.policy.describe()}, but {names[0]} with {common.describe()}"
            )
        for cassette in report.cassettes:
            if cassette.path in seen:
                raise ConfigError(f"{name}: {cassette.path} is also in {seen[cassette.path]} (one shard each)")
            seen[cassette.path] = name
    results = sorted((c for r in reports for c in r.cassettes), key=lambda c: c.path)
    return build_report(results, target=reports[0].target, policy=policy or common)
