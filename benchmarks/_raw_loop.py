"""The floor for a replay: start the server, write each recorded message of a cassette to its
stdin, read one line back per request and parse it. No comparison, no bookkeeping.

    python benchmarks/_raw_loop.py CASSETTE.jsonl SERVER ARGV...
"""

from __future__ import annotations

import json
import subprocess
import sys


def main() -> None:
    path, server = sys.argv[1], sys.argv[2:]
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    with open(path, encoding="utf-8") as fh:
        next(fh)  # the header
        for line in fh:
            inter = json.loads(line)
            proc.stdin.write(json.dumps(inter["message"]).encode() + b"\n")
            proc.stdin.flush()
            if inter["kind"] == "request":
                json.loads(proc.stdout.readline())
    proc.stdin.close()
    proc.wait(timeout=30)


if __name__ == "__main__":
    main()
