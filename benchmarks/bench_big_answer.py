"""Rows: one changed leaf in a large JSON answer (5 MiB and 50 MiB), against the same replay of
the unchanged answer; the replay's own peak RSS; and compare's own time on that pair. For
reference, the same changed replay with ``--no-confirm``.

    python benchmarks/bench_big_answer.py [--mib 5] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _big_server import document
from _common import (
    HERE,
    PY,
    Row,
    check_ok,
    compare_seconds,
    fmt_s,
    median_s,
    paired,
    print_rows,
    record,
    replay_argv,
    run,
)

SERVER = [PY, str(HERE / "_big_server.py")]


def rows(mib: float = 5, rounds: int = 3, timeout: float = 600) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.jsonl"
        env = {"BIG_MIB": str(mib)}
        record(path, SERVER, [{"method": "tools/call", "params": {"name": "dump", "arguments": {}}}], env=env)
        argv = replay_argv(path, SERVER, "--timeout", str(timeout))
        same = lambda: run(argv, env=env, timeout=timeout)  # noqa: E731
        changed = lambda: run(argv, env={**env, "BIG_CHANGE": "1"}, timeout=timeout)  # noqa: E731
        floors, tools, ratio = paired(same, changed, rounds)
        check_ok(floors, "unchanged replay")
        if any(t.rc == -1 for t in tools):
            return [
                Row(
                    f"one changed leaf, {mib:g} MiB answer",
                    f"> {timeout:g} s (timed out)",
                    None,
                    "unchanged",
                    "",
                    False,
                )
            ]
        if any("1 failed" not in t.stdout for t in tools):
            raise SystemExit(f"the changed replay should report one failure: {tools[0].stdout[-2000:]}")
        answer_mib = os.path.getsize(path) / 2**20
        rss = max(t.self_rss_mib or 0 for t in tools)
        cmp_s = compare_seconds(path, document(mib, True))
        figure = (
            f"{fmt_s(median_s(tools))} vs unchanged {fmt_s(median_s(floors))}; compare {fmt_s(cmp_s)};"
            f" peak RSS {rss:.0f} MiB ({rss / answer_mib:.1f}x the answer)"
        )
        if mib <= 10:
            goal, met = "<= 2x unchanged, compare < 0.5 s", ratio <= 2 and cmp_s < 0.5
        else:
            goal, met = "< 5 s, peak < 3x the answer", median_s(tools) < 5 and rss < 3 * answer_mib
        out = [Row(f"one changed leaf, {mib:g} MiB answer", figure, ratio, "same replay, unchanged answer", goal, met)]
        # For reference: the same replay without the confirmation pass (which starts the server
        # again to tell a regression from noise), i.e. what the second server run costs.
        alone = lambda: run([*argv, "--no-confirm"], env={**env, "BIG_CHANGE": "1"}, timeout=timeout)  # noqa: E731
        floors, lone, lone_ratio = paired(same, alone, rounds)
        check_ok(floors, "unchanged replay")
        if any("1 failed" not in t.stdout for t in lone):
            raise SystemExit(f"the changed replay should report one failure: {lone[0].stdout[-2000:]}")
        lone_rss = max(t.self_rss_mib or 0 for t in lone)
        out.append(
            Row(
                "… the same with --no-confirm",
                f"{fmt_s(median_s(lone))} vs unchanged {fmt_s(median_s(floors))}; peak RSS {lone_rss:.0f} MiB",
                lone_ratio,
                "same replay, unchanged answer",
                "for reference",
                None,
            )
        )
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    print_rows(rows(args.mib, args.rounds, args.timeout))


if __name__ == "__main__":
    main()
