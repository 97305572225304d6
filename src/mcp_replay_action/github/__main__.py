"""``python -m mcp_replay_action.github``: the action's entrypoint.

It first re-executes itself without the tokens and inputs in its environment (``handover.py``),
so that no process the code under test can inspect holds them."""

import os
import sys

from mcp_replay_action.github.handover import HANDOVER_VARIABLE, receive, reexec_clean
from mcp_replay_action.github.main import main

if HANDOVER_VARIABLE not in os.environ:
    reexec_clean(["-m", "mcp_replay_action.github"])
sys.exit(main(receive()))
