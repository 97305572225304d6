"""Building a large JSON value without the cyclic garbage collector walking it as it grows.

Parsing a 5 MiB JSON text and building its normal form creates a few hundred thousand
containers. Every 700 allocations the collector walks the young ones, and as the survivors pile
up it walks every object the process holds, again and again: a third of comparing one 5 MiB
answer. JSON values hold no reference cycles, so pausing the collector while one is built and
compared leaves no garbage behind for longer than the pause; it runs again right after.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector off for the block (on again after, also on error). Nested or
    concurrent uses never leave it off: only the use that turned it off turns it back on."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextmanager
def frozen() -> Iterator[None]:
    """Build a large value that lives on after the block (a cassette read whole before its
    replay): the collector is paused while it is built, and everything alive at the end of the
    block is then moved out of its reach (``gc.freeze``), so no later collection walks it again.
    Reading a 10,000-call cassette otherwise set off ~50 ms of collections, each walking what had
    been read so far. Reference counting still frees what is frozen. Used inside ``thawing``."""
    with paused():
        yield
        gc.freeze()


@contextmanager
def thawing() -> Iterator[None]:
    """Everything ``frozen`` froze in the block handed back to the collector at its end (also on
    error), unless objects were already frozen when it began: those are not ours to thaw."""
    before = gc.get_freeze_count()
    try:
        yield
    finally:
        if before == 0:
            gc.unfreeze()
