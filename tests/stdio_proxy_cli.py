"""The stdio recording proxy (``record/stdio_proxy.record_stdio``) as a command of its own, for
tests that run it as a subprocess with options the real command line (``mcp-replay record``) does
not take (``--shutdown-grace``):

    python tests/stdio_proxy_cli.py --server CMD --cassette PATH [--redact KEY]...
        [--redact-pattern RE]... [--cwd DIR] [--isolate] [--shutdown-grace S]
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from mcp_replay_action.errors import ReplayError
from mcp_replay_action.record.stdio_proxy import record_stdio
from mcp_replay_action.redact import Redactor
from mcp_replay_action.transport.process import SHUTDOWN_GRACE


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    opts: dict[str, Any] = {"keys": [], "patterns": [], "isolate": False, "cwd": None, "grace": SHUTDOWN_GRACE}
    command = cassette = None
    while args:
        flag = args.pop(0)
        if flag == "--isolate":
            opts["isolate"] = True
            continue
        value = args.pop(0)
        if flag == "--server":
            command = value
        elif flag == "--cassette":
            cassette = value
        elif flag == "--redact":
            opts["keys"].append(value)
        elif flag == "--redact-pattern":
            opts["patterns"].append(value)
        elif flag == "--cwd":
            opts["cwd"] = value
        elif flag == "--shutdown-grace":
            opts["grace"] = float(value)
        else:
            raise SystemExit(f"unknown option {flag}")
    if not command or not cassette:
        raise SystemExit("--server and --cassette are required")
    try:
        summary = record_stdio(
            command,
            cassette,
            redactor=Redactor(keys=opts["keys"], patterns=opts["patterns"]),
            cwd=opts["cwd"],
            isolate=opts["isolate"],
            shutdown_grace=opts["grace"],
            announce=lambda line: print(f"mcp-replay: {line}", file=sys.stderr, flush=True),
        )
    except ReplayError as exc:
        sys.stderr.write(f"mcp-replay: error: {exc.one_line()}\n")
        return exc.exit_code
    if not summary.saved and summary.server_failure:
        sys.stderr.write(f"mcp-replay: error: {summary.server_failure}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
