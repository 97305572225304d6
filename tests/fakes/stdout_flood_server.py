"""Answers ``tools/call`` with a text of ``LENGTH`` letters; with ``FLOOD_MIB`` set, it starts that
answer and then writes ``FLOOD_MIB`` MiB more of it without ever ending the line: a client that
holds a line until its newline holds all of it."""

import os
import sys

from _fakelib import result, send, serve, text

LENGTH = int(os.environ.get("LENGTH", "10"))
FLOOD_MIB = int(os.environ.get("FLOOD_MIB", "0"))
FLOOD_END = os.environ.get("FLOOD_END") == "1"  # end the flood's line after all


def handle(request):
    if not FLOOD_MIB:
        send(result(request, text("a" * LENGTH)))
        return
    out = sys.stdout.buffer
    out.write(b'{"jsonrpc": "2.0", "id": %d, "result": {"content": [{"type": "text", "text": "' % request["id"])
    chunk = b"a" * (1 << 20)
    try:
        for _ in range(FLOOD_MIB):
            out.write(chunk)
        if FLOOD_END:
            out.write(b'"}]}}\n')
        out.flush()
    except BrokenPipeError:
        return


serve("flood", handle)
