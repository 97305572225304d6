"""Row: 8 cassettes replayed with ``--jobs auto`` against the same 8 serially (``--jobs 1``).

python benchmarks/bench_jobs.py [--cassettes 8] [--interactions 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from _common import (
    CALC_SERVER,
    TOOL,
    Row,
    calc_calls,
    check_ok,
    fmt_s,
    median_s,
    paired,
    print_rows,
    record,
    replay_argv,
    run,
)


def rows(cassettes: int = 8, interactions: int = 1000, rounds: int = 3) -> list[Row]:
    case = f"{cassettes} cassettes, --jobs auto"
    helptext = subprocess.run([*TOOL, "replay", "--help"], capture_output=True, text=True, check=False).stdout
    if "--jobs" not in helptext:
        return [Row(case, "serial only (no --jobs)", None, "--jobs 1", "faster than serial", False)]
    with tempfile.TemporaryDirectory() as tmp:
        first = Path(tmp) / "c0.jsonl"
        record(first, CALC_SERVER, calc_calls(interactions))
        for i in range(1, cassettes):
            (Path(tmp) / f"c{i}.jsonl").write_bytes(first.read_bytes())
        glob = str(Path(tmp) / "c*.jsonl")
        serial, parallel, ratio = paired(
            lambda: run(replay_argv(glob, CALC_SERVER, "--jobs", "1")),
            lambda: run(replay_argv(glob, CALC_SERVER, "--jobs", "auto")),
            rounds,
        )
        check_ok(serial, "serial replay")
        check_ok(parallel, "parallel replay")
        cores = len(os.sched_getaffinity(0))
        return [
            Row(
                case,
                f"{fmt_s(median_s(parallel))} vs serial {fmt_s(median_s(serial))} on {cores} cores",
                ratio,
                "--jobs 1",
                "faster than serial (< 0.8x on >= 2 cores)",
                ratio < 0.8 if cores >= 2 else None,
            )
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cassettes", type=int, default=8)
    parser.add_argument("--interactions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print_rows(rows(args.cassettes, args.interactions, args.rounds))


if __name__ == "__main__":
    main()
