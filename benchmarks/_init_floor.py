"""The floor for a short replay: start the server, initialize, exit.

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


def main() -> None:
    proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(INIT).encode() + b"\n")
    proc.stdin.flush()
    while "result" not in json.loads(proc.stdout.readline()):
        pass
    proc.stdin.close()
    proc.wait(timeout=30)


if __name__ == "__main__":
    main()
