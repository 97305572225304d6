"""A well-behaved fake: tools/call echoes its arguments back as text (and as structuredContent)."""

import json

from _fakelib import result, send, serve


def handle(request):
    args = (request.get("params") or {}).get("arguments") or {}
    send(result(request, {"content": [{"type": "text", "text": json.dumps(args)}], "structuredContent": args}))


serve("echo", handle)
