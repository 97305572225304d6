"""Stage 4: findings judged per request, scored, gated and assembled into one report."""
