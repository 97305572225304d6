"""Prints a line full of secrets on stderr and crashes: at once with ``--at-start``, else on the
first request after the handshake (what a misconfigured server does on a CI runner)."""

import sys

from _fakelib import serve

TOKEN = "ghp_" + "Zq8XvT2mLk4Rw9Yp3Hn6Bc1Df5Gj7Ks0Ue2Ia4"[:36]
LINE = f"fatal: auth failed using token {TOKEN} db=postgres://admin:pw@host/prod\n"

if "--at-start" in sys.argv:
    sys.stderr.write(LINE)
    sys.exit(2)


def handle(request):
    sys.stderr.write(LINE)
    sys.stderr.flush()
    sys.exit(3)


serve("secret-crash", handle)
