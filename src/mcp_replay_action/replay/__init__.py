"""Stage 2: the engine that replays cassettes against a server, and the runs built on it (update, shard, calibrate, diff)."""
