"""Stage 1: the recording proxies (stdio, HTTP) and the tape both write on."""
