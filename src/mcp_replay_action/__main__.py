from mcp_replay_action.cli import entry

entry()
