"""Row: 10,000 ``tools/call`` against a stdlib server (the bundled calc sample server).

Floor: ``_raw_loop.py`` (the same exchanges over a bare pipe); for reference, the same loop
waiting without sleeping (``--poll``), as the replay's transport first does. Peer:
``mcp-recorder verify`` on the same cassette converted to its format, when installed.

    python benchmarks/bench_calls.py [--interactions 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import (
    CALC_SERVER,
    HERE,
    PY,
    Row,
    calc_calls,
    check_ok,
    fmt_s,
    median_s,
    paired,
    peer_row,
    print_rows,
    record,
    replay_argv,
    run,
)


def rows(interactions: int = 10_000, rounds: int = 5) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calls.jsonl"
        record(path, CALC_SERVER, calc_calls(interactions))
        floor_argv = [PY, str(HERE / "_raw_loop.py"), str(path), *CALC_SERVER]
        tool_argv = replay_argv(path, CALC_SERVER)
        floors, tools, ratio = paired(lambda: run(floor_argv), lambda: run(tool_argv), rounds)
        check_ok(floors, "raw loop")
        check_ok(tools, "replay")
        out = [
            Row(
                f"{interactions:,} tools/call, stdlib server",
                f"replay {fmt_s(median_s(tools))}, raw loop {fmt_s(median_s(floors))}",
                ratio,
                "raw pipe loop",
                "<= 1.25x",
                ratio <= 1.25,
            )
        ]
        looking_argv = [PY, str(HERE / "_raw_loop.py"), "--poll", str(path), *CALC_SERVER]
        lookers, tools, looked = paired(lambda: run(looking_argv), lambda: run(tool_argv), rounds)
        check_ok(lookers, "raw loop --poll")
        check_ok(tools, "replay")
        out.append(
            Row(
                "… vs the raw loop polling the pipe, as the replay does",
                f"replay {fmt_s(median_s(tools))}, polling raw loop {fmt_s(median_s(lookers))}",
                looked,
                "raw pipe loop, --poll",
                "for reference",
                None,
            )
        )
        out.append(peer_row(path, CALC_SERVER, tool_argv, max(3, rounds // 2), 2.5))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interactions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print_rows(rows(args.interactions, args.rounds))


if __name__ == "__main__":
    main()
