from mcp_replay_action.cli import main

main()
