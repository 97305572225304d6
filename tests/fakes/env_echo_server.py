"""Answers tools/call with values from its environment: ``BUILD`` (a change a replay should see)
next to ``SERVICE_TOKEN`` and ``FAKE_GH_TOKEN`` (secrets that must never reach a cassette)."""

import os

from _fakelib import result, send, serve, text


def handle(request):
    env = os.environ
    line = f"build {env.get('BUILD', '1')} token {env.get('SERVICE_TOKEN', '-')} gh {env.get('FAKE_GH_TOKEN', '-')}"
    send(result(request, text(line)))


serve("envecho", handle)
