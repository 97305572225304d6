"""Crashes: at once with ``--at-start``, else on the first request after the handshake."""

import sys

from _fakelib import serve

if "--at-start" in sys.argv:
    sys.stderr.write("fatal: cannot open config file settings.toml\n")
    sys.exit(2)


def handle(request):
    sys.stderr.write("Traceback (most recent call last):\n  ...\nRuntimeError: boom in " + request["method"] + "\n")
    sys.stderr.flush()
    sys.exit(3)


serve("crash", handle)
