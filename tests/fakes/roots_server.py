"""On tools/call, asks the client ``roots/list`` with the SAME id as the pending tools/call, waits
for the client's answer, then answers the tool call with what it learnt. Ids are per direction in
JSON-RPC, so this is legal, and a recorder that pairs by id alone gets it wrong."""

import json

from _fakelib import messages, result, send, standard

pending = None
for message in messages():
    if "method" not in message:  # the client's answer to our roots/list
        roots = (message.get("result") or {}).get("roots", [])
        uris = [r.get("uri") for r in roots]
        send(result(pending, {"content": [{"type": "text", "text": json.dumps(uris)}], "isError": False}))
        pending = None
        continue
    if "id" not in message:
        continue
    answer = standard(message, "roots")
    if answer is not None:
        send(answer)
    elif message["method"] == "tools/call":
        pending = message
        send({"jsonrpc": "2.0", "id": message["id"], "method": "roots/list", "params": {}})
