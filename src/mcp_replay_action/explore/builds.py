"""``mcp-replay compare-builds``: two builds of a server compared with no cassette to start from.

1. the base build is explored (``explorer.explore``) into a cassette;
2. the cassette is replayed against two fresh starts of the base (``replay.calibrate``): what
   varies between two starts of one build is noise, stored in the header as rules (Diffy's
   primary and secondary), so it never reads as a change of the head;
3. the cassette is replayed against the head through the one plan builder and the one run
   function (``options.plan_from``, ``replay.engine.run``): the same classes, grade, gate,
   reports and exit codes as ``replay``, confirmation pass included.

A base that cannot be explored is a ``ServerStartError`` of its own (exit 3) that names the base,
so a broken base is never mistaken for a broken pull request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from mcp_replay_action.cassette import save
from mcp_replay_action.errors import ServerError, ServerStartError
from mcp_replay_action.explore.explorer import Explored, ExploreOptions, explore
from mcp_replay_action.options import plan_from, target_from
from mcp_replay_action.redact import Redactor, env_secrets
from mcp_replay_action.replay.engine import Outcome, Progress, run

CALIBRATION_RUNS = 2  # two fresh starts of the base: what differs between them is noise


@dataclass(frozen=True)
class Compared:
    """What a comparison of two builds did: the base's exploration and the head's replay."""

    explored: Explored
    outcome: Outcome
    cassette: str


def compare_builds(
    values: Mapping[str, object],
    base: Mapping[str, object],
    head: Mapping[str, object],
    cassette: str,
    *,
    root: str,
    options: ExploreOptions | None = None,
    progress: Progress | None = None,
) -> Compared:
    """Explore the build ``base`` describes, learn its noise, replay against ``head``.

    ``values`` are the options table's values (``options.OPTIONS``) both builds share; ``base`` and
    ``head`` the values that differ (``server``, ``url``); ``cassette`` where the exploration is
    written (it is kept, so a user can commit it and replay it from then on).
    Raises ServerStartError naming the base when the base cannot be explored or calibrated.
    """
    from mcp_replay_action.replay.calibrate import calibrate

    base_values = {**values, **base}
    base_target = target_from(base_values, command="compare-builds")
    redactor = Redactor(keys=tuple(_seq(values, "redact_keys")), patterns=tuple(_seq(values, "redact_patterns")))
    redactor = redactor.with_env_values(env_secrets(dict(base_target.env), tuple(_seq(values, "env_public"))))
    try:
        explored = explore(base_target, options, redactor=redactor)
        save(explored.cassette, cassette)
        base_plan = plan_from(base_values, root=root, command="calibrate", target=base_target, paths=(cassette,))
        calibrate(base_plan, runs=CALIBRATION_RUNS)
    except ServerError as exc:
        raise ServerStartError(
            f"the base build ({base_target.describe()}) could not be explored: {exc}",
            stderr_tail=exc.stderr_tail,
            exit_status=exc.exit_status,
        ) from None
    head_values = {**values, **head}
    plan = plan_from(head_values, root=root, paths=(cassette,))
    return Compared(explored=explored, outcome=run(plan, None, progress), cassette=cassette)


def _seq(values: Mapping[str, object], key: str) -> tuple[str, ...]:
    value = values.get(key)
    return tuple(str(v) for v in value) if isinstance(value, (list, tuple)) else ()
