"""Sends notifications before every answer: a log message and a progress notification."""

from _fakelib import result, send, serve, text


def handle(request):
    send({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "working"}})
    token = ((request.get("params") or {}).get("_meta") or {}).get("progressToken", "none")
    send({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}})
    send(result(request, text("done")))


serve("notify", handle)
