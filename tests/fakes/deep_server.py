"""Answers ``tools/call`` with ``structuredContent: {"v": ...}`` nested ``--depth N`` levels deep
around ``--leaf X`` (default 2 and 1): written as text, so the server itself never recurses. Every
other tool call (``echo``) is answered flat. A server that answers 900 or 3000 levels deep is what
Python's recursion limit meets: the parser at about 1000 levels, the redactor and the comparison
sooner."""

import json
import sys

from _fakelib import result, send, serve

DEPTH = int(sys.argv[sys.argv.index("--depth") + 1]) if "--depth" in sys.argv else 2
LEAF = sys.argv[sys.argv.index("--leaf") + 1] if "--leaf" in sys.argv else "1"


def handle(request):
    name = (request.get("params") or {}).get("name")
    if name != "deep":
        send(result(request, {"content": [{"type": "text", "text": "flat"}]}))
        return
    nested = "[" * DEPTH + json.dumps(LEAF) + "]" * DEPTH
    text = '{"content":[{"type":"text","text":"deep"}],"structuredContent":{"v":' + nested + "}}"
    sys.stdout.write('{"jsonrpc":"2.0","id":' + json.dumps(request["id"]) + ',"result":' + text + "}\n")
    sys.stdout.flush()


serve("deep", handle)
