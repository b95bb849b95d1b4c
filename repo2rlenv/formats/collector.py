"""Python's cycle collector paused while a record is decoded, read and replayed.

Those steps allocate many small containers and free almost none until the record is
done, so the collector would rescan them over and over, and the objects that survive
(the decoded document, the session) soon trigger full collections of the whole heap: a
100,000-step session took 5x longer with it on (superlinear), the same time per step as
a 1,000-step one with it off; over a 500-run folder it was a tenth of mining time, half
of it in full collections. Reference counting still frees everything at once; cycles
made meanwhile wait for the collector, which resumes when the outermost pause ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector for the block; nested pauses leave it to the outermost
    one to turn it back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
