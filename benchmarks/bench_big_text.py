"""Rows: one changed word in a multi-megabyte text answer (one line of minified JavaScript, long
runs of word characters: what an MCP App's bundle is made of, and what once made the epoch mask
quadratic), against the same replay of the unchanged answer; and compare's own time on the pair.

    python benchmarks/bench_big_text.py [--mib 4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _big_server import bundle
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


def rows(mib: float = 4, rounds: int = 3, timeout: float = 600) -> list[Row]:
    case = f"one changed word, {mib:g} MiB text answer"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "text.jsonl"
        env = {"BIG_MIB": str(mib), "BIG_KIND": "text"}
        record(path, SERVER, [{"method": "tools/call", "params": {"name": "dump", "arguments": {}}}], env=env)
        argv = replay_argv(path, SERVER, "--timeout", str(timeout))
        same = lambda: run(argv, env=env, timeout=timeout)  # noqa: E731
        changed = lambda: run(argv, env={**env, "BIG_CHANGE": "1"}, timeout=timeout)  # noqa: E731
        floors, tools, ratio = paired(same, changed, rounds)
        check_ok(floors, "unchanged replay")
        if any(t.rc == -1 for t in tools):
            return [Row(case, f"> {timeout:g} s (timed out)", None, "unchanged", "", False)]
        if any("1 failed" not in t.stdout for t in tools):
            raise SystemExit(f"the changed replay should report one failure: {tools[0].stdout[-2000:]}")
        cmp_s = compare_seconds(path, bundle(mib, True))
        figure = f"{fmt_s(median_s(tools))} vs unchanged {fmt_s(median_s(floors))}; compare {fmt_s(cmp_s)}"
        # The changed replay also starts the server again (the confirmation pass) and masks the
        # text on both sides; the goal is that it finishes in compare time linear in the text.
        goal, met = "compare < 2 s (linear masks)", cmp_s < 2
        return [Row(case, figure, ratio, "same replay, unchanged answer", goal, met)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=float, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    print_rows(rows(args.mib, args.rounds, args.timeout))


if __name__ == "__main__":
    main()
