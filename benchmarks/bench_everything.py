"""Row: 50 calls on the npm reference server (server-everything), against "start node,
initialize, exit" (``_init_floor.py``); peer: mcp-recorder verify, when installed.

    python benchmarks/bench_everything.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import (
    EVERYTHING,
    HERE,
    PY,
    Row,
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

SERVER = ["node", str(EVERYTHING), "stdio"]


def requests() -> list[dict]:
    out: list[dict] = [{"method": "tools/list", "params": {}}]
    for i in range(49):
        if i % 2:
            out.append({"method": "tools/call", "params": {"name": "echo", "arguments": {"message": f"hello {i}"}}})
        else:
            out.append({"method": "tools/call", "params": {"name": "get-sum", "arguments": {"a": i, "b": 2}}})
    return out


def rows(rounds: int = 5) -> list[Row]:
    if not EVERYTHING.exists():
        return [
            Row("50 calls, server-everything", "not installed (npm ci in tests/servers)", None, "", "<= 1.05x", None)
        ]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "everything.jsonl"
        record(path, SERVER, requests())
        floor_argv = [PY, str(HERE / "_init_floor.py"), *SERVER]
        tool_argv = replay_argv(path, SERVER)
        floors, tools, ratio = paired(lambda: run(floor_argv), lambda: run(tool_argv), rounds)
        check_ok(floors, "start, initialize, exit")
        check_ok(tools, "replay")
        out = [
            Row(
                "50 calls, server-everything",
                f"replay {fmt_s(median_s(tools))}, floor {fmt_s(median_s(floors))}",
                ratio,
                "start node, initialize, exit",
                "<= 1.05x",
                ratio <= 1.05,
            )
        ]
        out.append(peer_row(path, SERVER, tool_argv, rounds, 1.0))
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    print_rows(rows(parser.parse_args().rounds))


if __name__ == "__main__":
    main()
