"""The guard as the bench starts it, with a trace of what can hold its loop.

    python benchmarks/guard_traced.py TRACE_DIR <the arguments of python -m train.guard>

On a shared 2-core machine a p99 cannot be compared run to run; what can be seen in one
run is what overlapped the slowest responses. This wrapper runs `train.guard`'s own
`main` and records, on the machine-wide monotonic clock (the clock the bench's upstream
and client stamp responses with):

- `gc`: each pass of the garbage collector (the loop is stopped meanwhile), with its
  generation;
- `lag_busy`, `lag_waiting`: each time the loop woke more than `LAG_S` late for a
  timer due every `PROBE_S`, split by the loop thread's CPU time meanwhile: busy with
  other work (at least `BUSY` of the time), or waiting for a core;
- `loop_audits`: each atif-scan audit run on the loop (worker's queue full, a close
  taking audits back, no worker);
- `overflow`: each audit the worker's queue refused;
- `worker`: each audit the worker ran (written by the worker itself, see
  `audit_worker.TRACE_ENV`): on two cores it competes with the loop for a core.

`attribute` then says, for the slowest 1% of the guard's responses and for all of
them, how many overlapped each kind.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import gc
import json
import os
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PROBE_S = 0.002
LAG_S = 0.001
"""uvloop's timers are kept in whole milliseconds, so up to 1 ms late is its rounding."""
BUSY = 0.5
"""A lag during which the loop's thread ran at least half the time was the loop at work
(`lag_busy`); below, the process was waiting for a core (`lag_waiting`): the machine."""
KINDS = ("gc", "lag_busy", "lag_waiting", "loop_audits", "overflow", "worker")


def _install(trace_dir: Path) -> dict[str, list[list[float]]]:
    from train.guard import audit_worker, checker, wire

    events: dict[str, list[list[float]]] = {kind: [] for kind in KINDS if kind != "worker"}
    os.environ[audit_worker.TRACE_ENV] = str(trace_dir / "worker.txt")
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.monotonic()
        else:
            events["gc"].append([started[0], time.monotonic(), info["generation"]])

    gc.callbacks.append(on_gc)

    audit = checker.Guard.audit

    def traced_audit(self: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.monotonic()
        try:
            return audit(self, *args, **kwargs)
        finally:
            events["loop_audits"].append([began, time.monotonic()])

    checker.Guard.audit = traced_audit  # type: ignore[method-assign]

    submit = audit_worker.AuditWorker.submit

    def traced_submit(self: Any, *args: Any, **kwargs: Any) -> bool:
        overflowed = self.overflowed
        accepted = submit(self, *args, **kwargs)
        if self.overflowed > overflowed:
            now = time.monotonic()
            events["overflow"].append([now, now])
        return accepted

    audit_worker.AuditWorker.submit = traced_submit  # type: ignore[method-assign]

    async def probe() -> None:
        while True:
            slept, cpu = time.monotonic(), time.thread_time()
            await asyncio.sleep(PROBE_S)
            woke = time.monotonic()
            if woke - slept - PROBE_S > LAG_S:
                busy = (time.thread_time() - cpu) / (woke - slept)
                events["lag_busy" if busy >= BUSY else "lag_waiting"].append(
                    [slept + PROBE_S, woke, busy]
                )

    async def with_probe(coroutine: Coroutine[Any, Any, Any]) -> Any:
        task = asyncio.get_running_loop().create_task(probe())
        try:
            return await coroutine
        finally:
            task.cancel()

    run = wire.run
    wire.run = lambda coroutine: run(with_probe(coroutine))  # type: ignore[assignment]
    return events


def load(trace_dir: Path) -> dict[str, list[list[float]]]:
    """The events of a traced run (the guard writes them when it stops)."""
    events = json.loads((trace_dir / "loop.json").read_text())
    worker = trace_dir / "worker.txt"
    lines = worker.read_text().split("\n") if worker.exists() else []
    events["worker"] = [[float(x) for x in line.split()] for line in lines if line.strip()]
    return events


def attribute(
    tails: list[tuple[float, float]], events: dict[str, list[list[float]]], share: float = 0.01
) -> list[list[str]]:
    """Rows (kind, events, slowest `share` overlapped, all overlapped, time in events
    that overlapped the slowest): a response overlaps an event when the event's span
    meets the response's way out [upstream's last byte, client's last byte]."""
    ordered = sorted(tails, key=lambda tail: tail[1], reverse=True)
    slowest = ordered[: max(1, int(len(ordered) * share))]

    def overlapping(window: tuple[float, float], kind: str) -> list[list[float]]:
        start, end = window[0], window[0] + window[1]
        return [e for e in events.get(kind, []) if e[0] <= end and e[1] >= start]

    rows = []
    for kind in KINDS:
        slow = [overlapping(t, kind) for t in slowest]
        every = sum(bool(overlapping(t, kind)) for t in tails)
        spent = sum(e[1] - e[0] for found in slow for e in found)
        rows.append(
            [
                kind,
                str(len(events.get(kind, []))),
                f"{sum(map(bool, slow))}/{len(slowest)}",
                f"{every}/{len(tails)}",
                f"{spent * 1e3:.2f}",
            ]
        )
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(
        description="run python -m train.guard with a trace of what can hold its loop"
    )
    parser.add_argument("trace_dir", type=Path, help="where the trace is written")
    parser.add_argument("guard_args", nargs=argparse.REMAINDER, help="python -m train.guard's")
    args = parser.parse_args()
    trace_dir = args.trace_dir
    trace_dir.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(REPO))
    events = _install(trace_dir)

    def dump() -> None:
        (trace_dir / "loop.json").write_text(json.dumps(events))

    atexit.register(dump)
    from train.guard.__main__ import main as guard_main

    return guard_main(args.guard_args)


if __name__ == "__main__":
    raise SystemExit(main())
