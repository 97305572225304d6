"""``mcp-replay diff``: compare two cassettes' responses request by request, with no server.

Requests pair up by method and params (``_meta`` aside), in recorded order for repeats, so two
recordings of the same session made against two builds can be compared offline.

The two sessions may come from two different clients: what a client says about itself is not
compared or matched on (``clientInfo``, the capabilities it asked for, ``params: {}`` against no
params at all), and a request only one of the two sessions made is skipped, not reported as a
missing response (the server was never asked).
"""

from __future__ import annotations

from dataclasses import replace

from mcp_replay_action.compare.engine import CompareOptions, compare
from mcp_replay_action.compare.matchers import request_key
from mcp_replay_action.grade.assemble import build_report
from mcp_replay_action.grade.score import score
from mcp_replay_action.grade.verdict import judge
from mcp_replay_action.model.cassette import Cassette, Interaction
from mcp_replay_action.model.gate import GatePolicy
from mcp_replay_action.model.results import CassetteResult, InteractionResult, Report
from mcp_replay_action.wire.protocol import detect_era

# What a client says about itself in a request: never what the server is judged on.
_CLIENT_KEYS = ("clientInfo", "capabilities")


def _key(inter: Interaction) -> tuple[str, str]:
    message = inter.message
    params = message.get("params")
    if isinstance(params, dict):
        params = {k: v for k, v in params.items() if k not in _CLIENT_KEYS}
        message = {**message, "params": params or None}
    return request_key(message)


def _same_place(
    requests: tuple[Interaction, ...], index: int, inter: Interaction, taken: set[int]
) -> Interaction | None:
    if index < len(requests) and requests[index].label == inter.label and requests[index].seq not in taken:
        return requests[index]
    return None


def diff_cassettes(
    before: Cassette, after: Cassette, options: CompareOptions, *, policy: GatePolicy | None = None
) -> Report:
    """A report whose findings are the differences from ``before`` (the baseline) to ``after``."""
    pool: dict[tuple[str, str], list[Interaction]] = {}
    for inter in after.requests:
        pool.setdefault(_key(inter), []).append(inter)
    results: list[InteractionResult] = []
    taken: set[int] = set()
    for index, inter in enumerate(before.requests):
        candidates = [c for c in pool.get(_key(inter), ()) if c.seq not in taken]
        # A request that quotes a value the server minted (a requestState, a job id) differs
        # between two recordings: it is paired with the request at the same place, same label.
        twin = candidates[0] if candidates else _same_place(after.requests, index, inter, taken)
        if twin is not None:
            taken.add(twin.seq)
        if twin is None:
            # The other session never asked: nothing the server did can be judged here.
            results.append(replace(judge(inter, (), None), status="skipped"))
            continue
        findings = compare(inter.response, twin.response, options)
        results.append(judge(inter, findings, twin.response))
    era = detect_era(before.interactions, before.meta)
    result = CassetteResult(
        path=before.path,
        results=tuple(results),
        score=score(results),
        era=era.name,
        protocol_version=era.protocol_version,
    )
    return build_report([result], target=after.path, policy=policy)
