"""``python -m mcp_replay_action.github``: the action's entrypoint."""

import sys

from mcp_replay_action.github.main import main

sys.exit(main())
