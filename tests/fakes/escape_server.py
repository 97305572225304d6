"""Tries to outlive whoever started it: at start it double-forks a grandchild that calls setsid()
(leaving the process group and the session) and sleeps holding stdout and stderr open. The pids
(``server <pid>``, ``grandchild <pid>``) are appended to the file named by ``--pids``. With
``--crash`` it dies (status 3) on the first request after the handshake, the grandchild still
holding its stdout. With ``--stay`` it ignores the end of stdin and only a signal stops it."""

import os
import sys
import time

from _fakelib import result, send, serve, text

pids = sys.argv[sys.argv.index("--pids") + 1]


def note(what: str) -> None:
    with open(pids, "a") as fh:
        fh.write(f"{what} {os.getpid()}\n")


note("server")
child = os.fork()
if child == 0:
    if os.fork() == 0:
        os.setsid()
        note("grandchild")
        time.sleep(600)
    os._exit(0)
os.waitpid(child, 0)


def handle(request):
    if "--crash" in sys.argv:
        sys.stderr.write("fatal: escape server crashed on " + request["method"] + "\n")
        sys.stderr.flush()
        os._exit(3)
    send(result(request, text("ok")))


serve("escape", handle)
if "--stay" in sys.argv:  # deaf to the end of stdin: only a signal stops it
    time.sleep(600)
