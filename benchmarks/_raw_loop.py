"""The floor for a replay: start the server, write each recorded message of a cassette to its
stdin, read one line back per request and parse it. No comparison, no bookkeeping.

    python benchmarks/_raw_loop.py [--poll] CASSETTE.jsonl SERVER ARGV...

``--poll`` waits for each answer by looking at the pipe without sleeping (``select.poll``), as the
replay's stdio transport does first with a second CPU: a reference that pays no kernel wake-up.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys


def main() -> None:
    args = sys.argv[1:]
    looking = args[0] == "--poll"
    path, server = args[looking], args[looking + 1 :]
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    poller = select.poll()
    poller.register(proc.stdout.fileno(), select.POLLIN)
    with open(path, encoding="utf-8") as fh:
        next(fh)  # the header
        for line in fh:
            inter = json.loads(line)
            proc.stdin.write(json.dumps(inter["message"]).encode() + b"\n")
            proc.stdin.flush()
            if inter["kind"] == "request":
                while looking and not poller.poll(0):
                    pass
                json.loads(proc.stdout.readline())
    proc.stdin.close()
    proc.wait(timeout=30)


if __name__ == "__main__":
    main()
