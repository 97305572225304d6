"""Benchmark: mcp-replay's overhead over a raw newline-JSON pipe loop.

Builds a cassette of N interactions (default 10,000 ``tools/call`` requests after the handshake)
against the bundled fast sample server, then times, in one run:

* raw  - a minimal loop: write each recorded request to the server's stdin, read one line back,
         ``json.loads`` it. No comparison, no bookkeeping: the floor for doing the same exchanges.
* tool - ``replay_cassette`` with the stdio transport: routing, normalisation, comparison, grading.

and prints the best of ``--repeat`` runs of each and their ratio (tool / raw). Also reports peak RSS of this process.

    python benchmarks/replay_overhead.py [--interactions 10000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp_replay_action.cassette import Cassette, Interaction, load, save, with_lines
from mcp_replay_action.replay import ReplayOptions, replay_cassette
from mcp_replay_action.transport.stdio import StdioTransport

SERVER = [sys.executable, "-m", "mcp_replay_action.samples.calc_server"]


def exchange(proc: subprocess.Popen[bytes], message: dict) -> dict:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def build_cassette(path: Path, n: int) -> None:
    """Record N interactions by talking to the real sample server (a faithful cassette)."""
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    interactions = []
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        },
    }
    interactions.append(Interaction(seq=0, kind="request", message=init, response=exchange(proc, init)))
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    interactions.append(Interaction(seq=1, kind="notification", message=note))
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(note).encode() + b"\n")
    for i in range(n - 2):
        if i % 3 == 0:
            params = {"name": "add", "arguments": {"a": i, "b": 7}}
        elif i % 3 == 1:
            params = {"name": "echo", "arguments": {"message": f"message number {i}"}}
        else:
            params = {"name": "now", "arguments": {}}
        msg = {"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}
        interactions.append(Interaction(seq=i + 2, kind="request", message=msg, response=exchange(proc, msg)))
    proc.stdin.close()
    proc.wait(timeout=10)
    save(with_lines(Cassette(meta={"server": SERVER}, interactions=tuple(interactions))), path)


def raw_loop(cassette: Cassette) -> float:
    started = time.perf_counter()
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    for inter in cassette.interactions:
        proc.stdin.write(json.dumps(inter.message).encode() + b"\n")
        proc.stdin.flush()
        if inter.kind == "request":
            json.loads(proc.stdout.readline())
    proc.stdin.close()
    proc.wait(timeout=10)
    return time.perf_counter() - started


def tool_run(cassette: Cassette) -> tuple[float, str, int]:
    started = time.perf_counter()
    result = replay_cassette(cassette, StdioTransport(SERVER), ReplayOptions())
    elapsed = time.perf_counter() - started
    return elapsed, result.score.grade, result.failed + result.missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--interactions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each side; the best is reported")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.jsonl"
        build_cassette(path, args.interactions)
        load_started = time.perf_counter()
        cassette = load(path)
        load_s = time.perf_counter() - load_started
        # Best of a few runs each, interleaved, so a noisy neighbour skews both sides alike.
        raw_times, tool_times = [], []
        for _ in range(args.repeat):
            raw_times.append(raw_loop(cassette))
            tool_s, grade, bad = tool_run(cassette)
            tool_times.append(tool_s)
        raw_s, tool_s = min(raw_times), min(tool_times)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    n = len(cassette.interactions)
    print(f"interactions: {n}")
    print(f"load cassette:     {load_s:.3f} s")
    print(f"raw pipe loop:     {raw_s:.3f} s  ({n / raw_s:,.0f} interactions/s)")
    print(f"mcp-replay replay: {tool_s:.3f} s  ({n / tool_s:,.0f} interactions/s), grade {grade}, {bad} not passing")
    print(f"overhead ratio (replay / raw): {tool_s / raw_s:.2f}x")
    print(f"peak RSS: {peak_mb:.0f} MiB")
    if grade != "A" or bad:
        sys.exit("benchmark replay did not pass cleanly")


if __name__ == "__main__":
    main()
