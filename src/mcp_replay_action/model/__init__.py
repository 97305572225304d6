"""Plain data between the stages: a replay's results and its report."""
