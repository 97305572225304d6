from mcp_replay_action.launch import entry

entry()
