"""What each fast path earns: the changed replays the fast paths were made for, each run with
every path on and with one path alone off (``MCP_REPLAY_FAST=-name``, ``values/limits.PATHS``),
as interleaved pairs in one run. A ratio is the replay's time with the path off over its time with
every path on: 1.30x means the path saves 23% of that replay; "peak" is the same ratio of the
replay's own peak RSS. A path that moves no row by 20% is
weight (issue #29); docs/ARCHITECTURE.md lists the ones that stay with their row.

    python benchmarks/bench_paths.py [--rounds 3] [--mib 5] [--only narrow ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from _big_server import document
from _common import HERE, PY, Run, paired, record, replay_argv, run

sys.path.insert(0, str(HERE.parent / "src"))
from mcp_replay_action.values.limits import PATHS  # noqa: E402

SERVER = [PY, str(HERE / "_big_server.py")]
DUMP = [{"method": "tools/call", "params": {"name": "dump", "arguments": {}}}]


def _scenarios(tmp: Path, mib: float) -> list[tuple[str, Path, dict[str, str]]]:
    """Each changed replay a fast path was made for: the cassette, and the server's environment
    that makes one leaf (one word) differ from it."""
    out = []
    cases = [
        (f"{mib:g} MiB answer, server takes its time (named records)", {"BIG_KEY": "name"}, False),
        (f"{mib:g} MiB answer at once, records named", {"BIG_KEY": "name"}, True),
        (f"{mib:g} MiB answer at once, records keyed by id", {"BIG_KEY": "id"}, True),
        (f"{mib:g} MiB answer at once, records with no key", {"BIG_KEY": "none"}, True),
        ("4 MiB text answer, one word changed", {"BIG_KIND": "text"}, False),
    ]
    for i, (name, extra, at_once) in enumerate(cases):
        text = extra.get("BIG_KIND") == "text"
        env = {"BIG_MIB": str(4 if text else mib), **extra}
        changed = {**env, "BIG_CHANGE": "1"}
        if at_once:
            for file, change, into in ((f"same{i}.json", False, env), (f"changed{i}.json", True, changed)):
                (tmp / file).write_text(document(mib, change, extra["BIG_KEY"]))
                into["BIG_FILE"] = str(tmp / file)
        cassette = tmp / f"case{i}.jsonl"
        record(cassette, SERVER, DUMP, env=env)
        out.append((name, cassette, changed))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mib", type=float, default=5)
    parser.add_argument("--only", action="append", default=[], help="these paths only")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    paths = args.only or list(PATHS)
    with tempfile.TemporaryDirectory() as tmp:
        scenarios = _scenarios(Path(tmp), args.mib)
        table: dict[str, list[str]] = {}
        for name, cassette, changed in scenarios:
            argv = replay_argv(cassette, SERVER, "--timeout", str(args.timeout))

            def with_paths(fast: str, argv: list[str] = argv, env: dict[str, str] = changed) -> Callable[[], Run]:
                return lambda: run(argv, env={**env, "MCP_REPLAY_FAST": fast}, timeout=args.timeout)

            for path in paths:
                on, off, ratio = paired(with_paths(""), with_paths(f"-{path}"), args.rounds)
                wrong = [r for r in on + off if r.rc != 1]  # the one change fails the gate, nothing else
                if wrong:
                    sys.exit(f"{name}, {path} off: the changed replay exited {wrong[0].rc}:\n{wrong[0].stdout[-2000:]}")
                # Time, and the replay's own peak RSS (a path made to hold less moves that instead).
                rss = max(r.self_rss_mib or 0 for r in off) / max(max(r.self_rss_mib or 0 for r in on), 1e-9)
                cell = f"{ratio:.2f}x, peak {rss:.2f}x"
                table.setdefault(path, []).append(cell)
                print(f"{path:>10} | {name}: {cell}", file=sys.stderr, flush=True)
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, rounds {args.rounds}\n")
    print("| path off | " + " | ".join(name for name, _, _ in scenarios) + " |")
    print("|---|" + "---|" * len(scenarios))
    for path, ratios in table.items():
        print(f"| `{path}` | " + " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
