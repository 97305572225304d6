"""Rows: ``mcp-replay --help`` as a whole process, and the imports of an all-pass stdio replay
(the modules it really loaded, timed in a fresh interpreter against ``python -c pass``).

    python benchmarks/bench_imports.py [--rounds 11]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from _common import CALC_SERVER, PY, Row, calc_calls, check_ok, print_rows, record, replay_argv, run

HEAVY = ("deepdiff", "jsonschema", "httpx")


def rows(rounds: int = 11) -> list[Row]:
    empty = [PY, "-c", "pass"]
    cli = str(Path(sys.executable).with_name("mcp-replay"))
    floors, helps, _ = paired_ms(empty, [cli, "--help"], rounds)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pass.jsonl"
        record(path, CALC_SERVER, calc_calls(30))
        done = run(replay_argv(path, CALC_SERVER))
        check_ok([done], "replay")
    own = sorted(m for m in done.modules if m not in sys.stdlib_module_names and not m.startswith("_"))
    heavy = [m for m in HEAVY if m in done.modules]
    stmt = "; ".join(f"import {m}" for m in own if m != "__main__")
    floors2, imports, _ = paired_ms(empty, [PY, "-c", stmt], rounds)
    help_ms = statistics.median(helps)
    import_ms = statistics.median(i - f for i, f in zip(imports, floors2, strict=True))
    return [
        Row(
            "CLI --help",
            f"{help_ms:.0f} ms (python -c pass: {statistics.median(floors):.0f} ms)",
            None,
            "",
            "< 60 ms",
            help_ms < 60,
        ),
        Row(
            "a replay's own imports",
            f"{import_ms:.0f} ms over bare python; loads {', '.join(heavy) or 'none of ' + '/'.join(HEAVY)}",
            None,
            "python -c pass",
            f"< 60 ms, none of {'/'.join(HEAVY)}",
            import_ms < 60 and not heavy,
        ),
    ]


def paired_ms(floor: list[str], tool: list[str], rounds: int) -> tuple[list[float], list[float], None]:
    fs: list[float] = []
    ts: list[float] = []
    for _ in range(rounds):
        fs.append(run(floor).seconds * 1000)
        ts.append(run(tool).seconds * 1000)
    return fs, ts, None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    print_rows(rows(parser.parse_args().rounds))


if __name__ == "__main__":
    main()
