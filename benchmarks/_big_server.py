"""A stdlib stdio MCP server whose one tool answers a large JSON document as text.

``BIG_MIB`` (default 5) sets the size; ``BIG_CHANGE=1`` changes one leaf in the middle record.
``BIG_KEY`` is what names a record: ``name`` (the default: an ``id`` and a ``name``), ``id`` (an
``id`` alone, which is no identity key) or ``none`` (no key at all). ``BIG_FILE`` names a file
that holds the answer's text instead, read at start: the answer is written the moment it is asked
for, and a replay has no wait in which to read the recording ahead.
``BIG_KIND=text`` answers minified JavaScript instead (``bundle``): long runs of word characters,
one line, no JSON, what an app's bundle is made of, with ``BIG_CHANGE=1`` changing one word.
"""

from __future__ import annotations

import json
import os
import sys


def document(mib: float, change: bool, key: str = "name") -> str:
    """About ``mib`` MiB of JSON: ``{"records": [...]}``, each record named as ``key`` says
    (``BIG_KEY``), about 120 bytes each."""
    count = int(mib * 1024 * 1024 / 120)
    records = [_record(i, key) for i in range(count)]
    if change:
        records[count // 2]["score"] = -1
    return json.dumps({"records": records}, separators=(",", ":"))


def _record(i: int, key: str) -> dict:
    rest = {"score": i % 97, "tags": ["a", "b"], "owner": {"team": f"t{i % 13}"}}
    if key == "name":
        return {"id": i, "name": f"item-{i}", **rest}
    if key == "id":
        return {"id": i, "label": f"item-{i}", **rest}
    if key == "none":
        return {"seq": i, "label": f"item-{i}", **rest}
    raise SystemExit(f"BIG_KEY={key!r}: name, id or none")


def bundle(mib: float, change: bool) -> str:
    """About ``mib`` MiB of one-line minified JavaScript with a change in the middle."""
    unit = "function a0b1c2(e,t){return e_f_g_h.t0k3n||t.x9y8z7w6v5u4}var q_r_s=0x1f;"
    half = unit * int(mib * 1024 * 1024 / len(unit) / 2)
    return half + ("version=2;" if change else "version=1;") + half


def main() -> None:
    mib = float(os.environ.get("BIG_MIB", "5"))
    change = os.environ.get("BIG_CHANGE") == "1"
    key = os.environ.get("BIG_KEY", "name")
    if os.environ.get("BIG_FILE"):
        with open(os.environ["BIG_FILE"], encoding="utf-8") as f:
            made = f.read()
        make = lambda: made  # noqa: E731
    elif os.environ.get("BIG_KIND") == "text":
        make = lambda: bundle(mib, change)  # noqa: E731
    else:
        make = lambda: document(mib, change, key)  # noqa: E731
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
            result = {"content": [{"type": "text", "text": make()}]}
        else:
            result = {}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
