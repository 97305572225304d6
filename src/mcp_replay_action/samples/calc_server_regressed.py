"""The regressed twin of ``calc_server``: identical ``tools/list``, drifted behaviour
(``add`` is off by one; ``echo`` grew an extra ``echoed`` key)."""

from mcp_replay_action.samples.calc_server import main

if __name__ == "__main__":
    main(regressed=True)
