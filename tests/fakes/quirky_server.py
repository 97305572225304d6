"""Answers with valid JSON-RPC written the way no encoder in this project would write it (spaces,
ASCII escapes, CRLF, trailing blanks) plus a stray log line: a transparent proxy must pass every
byte through unchanged."""

import json
import sys

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if "id" not in message or "method" not in message:
        continue
    out.write(
        b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "caf\\u00e9 \\ud83c\\udf89"}}\n'
    )
    out.write(b"log: handled " + message["method"].encode() + b"\n")
    out.write(
        b'{ "id" : ' + json.dumps(message["id"]).encode() + b', "jsonrpc":"2.0",   "result": {"t": "\xc3\xa9"} }  \r\n'
    )
    out.flush()
