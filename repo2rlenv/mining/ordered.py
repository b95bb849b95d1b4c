"""Records through a thread pool, results in input order, a bounded number in flight.

`Executor.map` submits every item before returning, so a large or streamed dataset
would be read and parsed in full, and held in memory, before the first record is
mined. Here at most `window` records are read ahead of the one being waited for; the
order of results (and so the output bytes) is the input order either way.

With one job there is no pool: records are mined in the calling thread, one after the
other. A single worker thread bought no parallelism (reading, parsing and replay all
hold the GIL) and cost a GIL hand-over at every file read and write of the other
thread, which made a one-job run measurably slower than plain sequential work.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ordered_map(
    pool: Executor | None, work: Callable[[T], R], items: Iterable[T], window: int
) -> Iterator[R]:
    if pool is None:
        yield from map(work, items)
        return
    pending: deque[Future[R]] = deque()
    for item in items:
        pending.append(pool.submit(work, item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()
