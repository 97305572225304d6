"""Writes megabytes to stderr before every answer: a reader that does not drain stderr deadlocks."""

import sys

from _fakelib import result, send, serve, text

MEGABYTES = int(sys.argv[1]) if len(sys.argv) > 1 else 8
LINE = ("x" * 99 + "\n").encode()


def flood():
    out = sys.stderr.buffer
    for _ in range(MEGABYTES * 10_000):
        out.write(LINE)
    out.write(b"last words of the flood\n")
    out.flush()


def handle(request):
    flood()
    send(result(request, text("still here")))


flood()
serve("flood", handle)
