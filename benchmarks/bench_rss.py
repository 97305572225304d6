"""Row: the replay's own peak RSS on a cassette of 100,000 interactions against one of 1,000
(a streamed replay holds one interaction at a time, so the two should be close).

    python benchmarks/bench_rss.py [--large 100000] [--small 1000]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import CALC_SERVER, Row, calc_calls, check_ok, print_rows, record, replay_argv, run


def rows(large: int = 100_000, small: int = 1_000) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        out = {}
        for n in (small, large):
            path = Path(tmp) / f"rss-{n}.jsonl"
            record(path, CALC_SERVER, calc_calls(n))
            done = run(replay_argv(path, CALC_SERVER), timeout=1800)
            check_ok([done], f"replay of {n} interactions")
            out[n] = done.self_rss_mib or 0.0
        ratio = out[large] / out[small]
        return [
            Row(
                f"peak RSS, {large:,} vs {small:,} interactions",
                f"{out[large]:.0f} vs {out[small]:.0f} MiB",
                ratio,
                f"{small:,} interactions",
                "<= 1.3x",
                ratio <= 1.3,
            )
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--small", type=int, default=1_000)
    args = parser.parse_args()
    print_rows(rows(args.large, args.small))


if __name__ == "__main__":
    main()
