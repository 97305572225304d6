"""Answers the handshake, then never answers again; ignores stdin EOF and SIGTERM.

``--child PIDFILE`` starts a grandchild (like the ``node`` that ``npx`` starts) that also ignores
SIGTERM, and writes both pids to PIDFILE, so tests can check nothing survives a shutdown.
"""

import signal
import subprocess
import sys
import time

from _fakelib import messages, send, standard

signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "--child" in sys.argv:
    pidfile = sys.argv[sys.argv.index("--child") + 1]
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL)
    with open(pidfile, "w") as fh:
        fh.write(f"{child.pid}\n")

for message in messages():
    if message.get("method") == "initialize":
        send(standard(message, "hang"))
while True:  # stdin closed: keep running anyway
    time.sleep(1)
