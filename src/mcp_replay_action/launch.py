"""The console script ``mcp-replay`` and ``python -m mcp_replay_action``.

A replay's server is spawned from the raw command line first (``early.prespawn``), before click
and the CLI are imported: a server takes a while to start (node: a few hundred milliseconds), and
those imports (~25 ms) happen while it does. Then the CLI runs exactly as it would have; a server
it did not take (another command, a bad option, ``--help``) is stopped before this returns.
"""

from __future__ import annotations

import sys


def entry() -> None:
    """Prespawn a plain stdio replay's server, then run the CLI (``cli.entry``)."""
    from mcp_replay_action import early

    early.prespawn(sys.argv[1:])
    try:
        from mcp_replay_action.cli import entry as cli_entry

        cli_entry()
    finally:
        # Reached unless cli_entry ended the process itself, which it does only after a replay
        # ran to the end: that replay took the server or stopped it.
        early.discard_prespawned()
