"""A hostile MCP server over stdio (plain Python): its answers carry text meant to inject GitHub
workflow commands, break Markdown tables and @-mention people. Run with ``--benign`` for its
well-behaved twin, which a cassette is recorded against; replaying that cassette against the
hostile build turns every hostile string into findings that reach annotations, the job summary
and the PR comment.

Tools: ``fetch`` (its text changes), ``lookup`` (starts failing with a hostile error message),
``meta`` (grows a key whose name is hostile).
"""

from __future__ import annotations

import sys

from _fakelib import result, send, serve, text

HOSTILE = (
    "::error::injected error\n"
    "%0A::set-output name=grade::A\n"
    "::warning file=README.md,line=1::injected warning\r\n"
    "##[error]legacy command\n"
    "| broken | table |\n"
    "``` fence ``` and `tick`\n"
    "<script>alert(1)</script> <img src=x onerror=alert(1)> </details>\n"
    "cc @octocat and @org/team please"
)
BENIGN = sys.argv[1:] == ["--benign"]


def handle(request: dict) -> None:  # type: ignore[type-arg]
    params = request.get("params") or {}
    name = params.get("name")
    if request.get("method") != "tools/call":
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "Method not found"}})
    elif name == "fetch":
        send(result(request, text("a calm page" if BENIGN else HOSTILE)))
    elif name == "lookup":
        if BENIGN:
            send(result(request, text("found")))
        else:
            send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32000, "message": HOSTILE}})
    elif name == "meta":
        value = {"ok": True}
        if not BENIGN:
            value["@octocat|`x`<b>"] = HOSTILE
        send(result(request, {"content": [{"type": "text", "text": "meta"}], "structuredContent": value}))
    else:
        send({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32602, "message": f"unknown tool {name}"}})


if not BENIGN:
    # Stderr lands in the job log and, after a crash, in the summary.
    sys.stderr.write(HOSTILE + "\n")
    sys.stderr.flush()
serve("hostile" if not BENIGN else "benign", handle)
