"""Stage 3: a live answer against its recording: normalise, compare, classify, thread, learn noise."""
