"""A well-behaved fake: tools/call echoes its arguments back as text (and as structuredContent)."""

import json
import sys
import time

from _fakelib import result, send, serve

# --delay SECONDS: answer each tools/call that much later (a server that got slower).
DELAY = float(sys.argv[sys.argv.index("--delay") + 1]) if "--delay" in sys.argv else 0.0


def handle(request):
    time.sleep(DELAY)
    args = (request.get("params") or {}).get("arguments") or {}
    send(result(request, {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}))


serve("echo", handle)
