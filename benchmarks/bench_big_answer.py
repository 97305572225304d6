"""Rows: one changed leaf in a large JSON answer (5 MiB and 50 MiB), against the same replay of
the unchanged answer; the replay's own peak RSS; and compare's own time on that pair. For
reference, the same changed replay with ``--no-confirm``. ``--keys``: the same 5 MiB pair from a
server that answers at once (no wait to read the recording ahead in), its records named by
``name``, by ``id`` (no identity key) and by nothing.

    python benchmarks/bench_big_answer.py [--mib 5] [--rounds 3] [--keys]
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from _big_server import document
from _common import (
    HERE,
    PY,
    Row,
    Run,
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


def _changed_row(
    path: Path, case: str, mib: float, rounds: int, timeout: float, key: str = "name", at_once: bool = False
) -> tuple[Row, list[str], Callable[[], Run]]:
    """The row of one changed leaf against the unchanged replay (the cassette recorded at
    ``path``), with the replay's argv and the unchanged replay, for a further row. ``at_once``:
    the server reads both answers from files at start, and answers the moment it is asked."""
    env = {"BIG_MIB": str(mib), "BIG_KEY": key}
    changed_env = {**env, "BIG_CHANGE": "1"}
    if at_once:
        for name, change, into in (("same.json", False, env), ("changed.json", True, changed_env)):
            (path.parent / name).write_text(document(mib, change, key))
            into["BIG_FILE"] = str(path.parent / name)
    record(path, SERVER, [{"method": "tools/call", "params": {"name": "dump", "arguments": {}}}], env=env)
    argv = replay_argv(path, SERVER, "--timeout", str(timeout))
    same = lambda: run(argv, env=env, timeout=timeout)  # noqa: E731
    changed = lambda: run(argv, env=changed_env, timeout=timeout)  # noqa: E731
    floors, tools, ratio = paired(same, changed, rounds)
    check_ok(floors, "unchanged replay")
    if any(t.rc == -1 for t in tools):
        return Row(case, f"> {timeout:g} s (timed out)", None, "unchanged", "", False), argv, same
    if any("1 failed" not in t.stdout for t in tools):
        raise SystemExit(f"the changed replay should report one failure: {tools[0].stdout[-2000:]}")
    answer_mib = os.path.getsize(path) / 2**20
    rss = max(t.self_rss_mib or 0 for t in tools)
    cmp_s = compare_seconds(path, document(mib, True, key))
    figure = (
        f"{fmt_s(median_s(tools))} vs unchanged {fmt_s(median_s(floors))}; compare {fmt_s(cmp_s)};"
        f" peak RSS {rss:.0f} MiB ({rss / answer_mib:.1f}x the answer)"
    )
    if mib <= 10:
        goal, met = "<= 2x unchanged, compare < 0.5 s", ratio <= 2 and cmp_s < 0.5
    else:
        goal, met = "< 5 s, peak < 3x the answer", median_s(tools) < 5 and rss < 3 * answer_mib
    return Row(case, figure, ratio, "same replay, unchanged answer", goal, met), argv, same


def key_rows(mib: float = 5, rounds: int = 3, timeout: float = 600) -> list[Row]:
    """One changed leaf from a server that answers at once, records named by ``name``, by ``id``
    (no identity key), by nothing."""
    out = []
    for key, words in (("name", "named by name"), ("id", "keyed by id"), ("none", "with no key")):
        case = f"… answered at once, records {words}"
        with tempfile.TemporaryDirectory() as tmp:
            out.append(_changed_row(Path(tmp) / "big.jsonl", case, mib, rounds, timeout, key, at_once=True)[0])
    return out


def rows(mib: float = 5, rounds: int = 3, timeout: float = 600) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        case = f"one changed leaf, {mib:g} MiB answer"
        row, argv, same = _changed_row(Path(tmp) / "big.jsonl", case, mib, rounds, timeout)
        env = {"BIG_MIB": str(mib)}
        out = [row]
        if row.ratio is None:
            return out
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
    parser.add_argument("--keys", action="store_true", help="only the rows of a server that answers at once")
    args = parser.parse_args()
    if args.keys:
        print_rows(key_rows(args.mib, args.rounds, args.timeout))
    else:
        print_rows(rows(args.mib, args.rounds, args.timeout))


if __name__ == "__main__":
    main()
