"""Answers tools/call with values from its environment: ``BUILD`` (a change a replay should see)
next to ``SERVICE_TOKEN`` and ``FAKE_GH_TOKEN`` (secrets that must never reach a cassette). The
tool ``json`` answers with ``BUILD`` inside JSON text instead (a ``"`` or ``\\`` in it escaped).
Its arguments are ignored: a test may give it any command line."""

import json
import os

from _fakelib import result, send, serve, text


def handle(request):
    env = os.environ
    if (request.get("params") or {}).get("name") == "json":
        send(result(request, text(json.dumps({"build": env.get("BUILD", "1")}))))
        return
    line = f"build {env.get('BUILD', '1')} token {env.get('SERVICE_TOKEN', '-')} gh {env.get('FAKE_GH_TOKEN', '-')}"
    send(result(request, text(line)))


serve("envecho", handle)
