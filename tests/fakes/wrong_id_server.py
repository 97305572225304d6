"""Answers every request after the handshake with the wrong id (request id + 1000)."""

from _fakelib import send, serve, text


def handle(request):
    send({"jsonrpc": "2.0", "id": request["id"] + 1000, "result": text("for someone else")})


serve("wrong-id", handle)
