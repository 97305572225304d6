"""A well-behaved echo server until its stdin closes; then it takes its time to exit and ignores
SIGTERM, as a Go server that finishes its work on EOF does: only SIGKILL ends it early.

``--pidfile PATH`` writes its pid there (tests check that nothing outlives the recorder)."""

import json
import signal
import sys
import time

from _fakelib import result, send, serve


def handle(request):
    args = (request.get("params") or {}).get("arguments") or {}
    send(result(request, {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}))


if "--pidfile" in sys.argv:
    import os

    with open(sys.argv[sys.argv.index("--pidfile") + 1], "w") as fh:
        fh.write(f"{os.getpid()}\n")
serve("slow-exit", handle)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # stdin closed: "shutting down", deaf to SIGTERM
time.sleep(120)
