"""This machine: the files we write, cassette discovery, who children run as, the garbage collector."""
