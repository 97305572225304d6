"""The floor for a short replay: start the server, initialize, exit.

Initialize as every client must: the ``initialize`` request, then the ``notifications/initialized``
notification. A server may start work on the second (server-everything arms a 350 ms timer to ask
for roots, and its process does not exit before that timer fires), and a floor that skips it
measures a session no client could have.

python benchmarks/_init_floor.py SERVER ARGV...
"""

from __future__ import annotations

import json
import subprocess
import sys

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def main() -> None:
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INIT).encode() + b"\n")
    proc.stdin.flush()
    while "result" not in json.loads(proc.stdout.readline()):
        pass
    proc.stdin.write(json.dumps(INITIALIZED).encode() + b"\n")
    proc.stdin.flush()
    proc.stdin.close()
    proc.wait(timeout=30)


if __name__ == "__main__":
    main()
