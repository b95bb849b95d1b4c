"""What every benchmark script does the same way: time a repeated action, write its
figures as JSON. Scripts put the repository on `sys.path` and import it as
`benchmarks.bench_common`."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path


def median_time(action: Callable[[], object], repeats: int) -> float:
    """Median wall time of `repeats` runs of `action`, in seconds (the median resists one
    run slowed by another process on a shared machine)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def write_json(text: str, target: str) -> None:
    """`text` to stdout when `target` is "-", else to the file `target`."""
    if target == "-":
        print(text)
    else:
        Path(target).write_text(text)
