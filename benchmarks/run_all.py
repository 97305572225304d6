"""Run every benchmark and print the table: figure, ratio against its floor, goal, met or not.

    python benchmarks/run_all.py            # the full table (about 15 minutes on 2 cores)
    python benchmarks/run_all.py --quick    # smaller sizes, fewer rounds: a smoke run
    python benchmarks/run_all.py --install-peer   # first put mcp-recorder in .peer/ (a venv)

Each row is whole processes, measured as interleaved pairs against its floor in this one run.
Exit status 1 when a goal is not met.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys

import bench_big_answer
import bench_big_text
import bench_calls
import bench_everything
import bench_imports
import bench_jobs
import bench_minted
import bench_rss
from _common import ROOT, Row, print_rows


def install_peer() -> None:
    """mcp-recorder from PyPI in its own venv, so its dependencies never mix with ours."""
    venv = ROOT / ".peer"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin/pip"), "install", "-q", "mcp-recorder==0.5.0"], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer rounds")
    parser.add_argument("--install-peer", action="store_true", help="install mcp-recorder into .peer/ first")
    parser.add_argument(
        "--only", action="append", default=[], help="run only these (calls, everything, minted, big, text, rss, jobs, imports)"
    )
    parser.add_argument(
        "--big-timeout", type=float, default=600, help="seconds before a large-answer replay is given up"
    )
    args = parser.parse_args()
    if args.install_peer:
        install_peer()
    q = args.quick
    plan = {
        "calls": lambda: bench_calls.rows(2_000 if q else 10_000, 3 if q else 5),
        "everything": lambda: bench_everything.rows(2 if q else 5),
        "minted": lambda: bench_minted.rows(2 if q else 5),
        "big": lambda: (
            bench_big_answer.rows(5, 1 if q else 3, args.big_timeout)
            + bench_big_answer.key_rows(5, 1 if q else 3, args.big_timeout)
            + bench_big_answer.rows(50, 1, args.big_timeout)
        ),
        "text": lambda: bench_big_text.rows(4, 1 if q else 3, args.big_timeout),
        "rss": lambda: bench_rss.rows(10_000 if q else 100_000, 1_000),
        "jobs": lambda: bench_jobs.rows(8, 200 if q else 1000, 1 if q else 3),
        "imports": lambda: bench_imports.rows(5 if q else 11),
    }
    rows: list[Row] = []
    for name, build in plan.items():
        if args.only and name not in args.only:
            continue
        print(f"… {name}", file=sys.stderr, flush=True)
        rows.extend(build())
    cores = len(os.sched_getaffinity(0))
    print(
        f"machine: {platform.machine()}, {cores} cores, {platform.python_implementation()} {platform.python_version()}, load {os.getloadavg()[0]:.1f}"
    )
    print()
    print_rows(rows)
    sys.exit(0 if all(r.met is not False for r in rows) else 1)


if __name__ == "__main__":
    main()
