"""Row: the unchanged replay of a server that mints ids (``tests/servers/ids_server.py``, the
official Python SDK's ``MCPServer``: note ids, refs, draft ids in prose, ticket numbers, each read
from an answer and quoted back), against the same session run directly by the official SDK client
(``_minting_client.py``). Every id differs from the recording and is threaded: the replay starts
the server once and compares each answer with the live ids in place.

    python benchmarks/bench_minted.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from _common import PY, ROOT, TOOL, Row, check_ok, fmt_s, median_s, paired, print_rows, replay_argv, run

SERVER = [PY, str(ROOT / "tests/servers/ids_server.py")]
CLIENT = [PY, str(Path(__file__).resolve().parent / "_minting_client.py")]
GOAL = 1.15


def rows(rounds: int = 5) -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "minted.jsonl"
        # Recorded as a user records: the SDK client launches `mcp-replay record` in the server's place.
        recorded = run([*CLIENT, *TOOL, "record", "--server", " ".join(SERVER), "--cassette", str(path)])
        check_ok([recorded], "recording the SDK client's session")
        tool_argv = replay_argv(path, SERVER, "--fail-on", "any")
        floors, tools, ratio = paired(lambda: run([*CLIENT, *SERVER]), lambda: run(tool_argv), rounds)
        check_ok(floors, "the SDK client's session")
        check_ok(tools, "the unchanged replay")
        return [
            Row(
                "unchanged replay, a server that mints ids",
                f"replay {fmt_s(median_s(tools))}, SDK client {fmt_s(median_s(floors))}",
                ratio,
                "the same session run by the SDK client",
                f"<= {GOAL}x",
                ratio <= GOAL,
            )
        ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    print_rows(rows(parser.parse_args().rounds))


if __name__ == "__main__":
    main()
