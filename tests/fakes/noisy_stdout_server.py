"""Prints things on stdout that are not JSON-RPC: a banner, a structured log line, a blank line,
a half line; then answers correctly."""

import sys

from _fakelib import result, send, serve, text

print("Server starting on stdio... ready!", flush=True)
print('{"level": "info", "msg": "structured log on the wrong stream"}', flush=True)
print("", flush=True)


def handle(request):
    sys.stdout.write("DEBUG handling " + request["method"] + "\n")
    sys.stdout.write("[1, 2, 3]\n")
    sys.stdout.flush()
    send(result(request, text("ok")))


serve("noisy", handle)
