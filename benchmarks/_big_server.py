"""A stdlib stdio MCP server whose one tool answers a large JSON document as text.

``BIG_MIB`` (default 5) sets the size; ``BIG_CHANGE=1`` changes one leaf in the middle record.
"""

from __future__ import annotations

import json
import os
import sys


def document(mib: float, change: bool) -> str:
    """About ``mib`` MiB of JSON: ``{"records": [...]}``, each record keyed by ``id``."""
    count = int(mib * 1024 * 1024 / 120)
    records = [
        {"id": i, "name": f"item-{i}", "score": i % 97, "tags": ["a", "b"], "owner": {"team": f"t{i % 13}"}}
        for i in range(count)
    ]
    if change:
        records[count // 2]["score"] = -1
    return json.dumps({"records": records}, separators=(",", ":"))


def main() -> None:
    mib = float(os.environ.get("BIG_MIB", "5"))
    change = os.environ.get("BIG_CHANGE") == "1"
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method = msg.get("method")
        if method == "initialize":
            result: dict = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "big", "version": "1"},
            }
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": document(mib, change)}]}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
