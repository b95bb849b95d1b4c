"""What the scheduler costs per rollout, against calling the same runner directly.

1. Instant runner (returns a scored rollout at once): the time per rollout through the
   scheduler (worker threads, locking, request records, group hand-out to a draining
   trainer thread) against building the same request and calling the same runner in a
   plain loop. The difference is the scheduler's own cost per rollout.
2. Sleeping runner (`--sleep-ms`, a stand-in for a harness session): the wall time
   through the scheduler against the ideal `rollouts x sleep / sessions`, so the
   overhead shows as lost parallelism.

Both are medians of --repeats runs in the same process; only the ratios are meant to
be compared across machines.

    python benchmarks/scheduler_bench.py [--sessions 48] [--groups 60] [--json FILE|-]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_common import write_json  # noqa: E402
from train.rollout.contract import Rollout, RolloutRequest, adapter_name  # noqa: E402
from train.rollout.scheduler import Scheduler, SchedulerOptions, TaskRef  # noqa: E402

TASKS = [TaskRef(task_id=f"task-{n}", task_dir=Path(f"/tasks/task-{n}")) for n in range(16)]


class Runner:
    def __init__(self, sleep_s: float) -> None:
        self.sleep_s = sleep_s

    def __call__(self, request: RolloutRequest) -> Rollout:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        score = float(request.attempt % 2)
        return Rollout(request=request, status="scored", verifier_score=score, reward=score)


def direct(runner: Runner, count: int, group_size: int) -> float:
    started = time.perf_counter()
    for n in range(count):
        request = RolloutRequest(
            task_id="task-0", task_dir=Path("/tasks/task-0"), harness="pi",
            adapter=adapter_name("pi", 0), model_version=0, group_id=n // group_size,
            attempt=n % group_size, session_id=f"run-pi-g{n // group_size}-a{n % group_size}-t0",
        )  # fmt: skip
        runner(request)
    return time.perf_counter() - started


def scheduled(runner: Runner, groups: int, args: argparse.Namespace) -> float:
    options = SchedulerOptions(harness="pi", sessions=args.sessions,
                               rollouts_per_task=args.group_size)  # fmt: skip
    scheduler = Scheduler(runner, TASKS, options)
    started = time.perf_counter()
    scheduler.start()
    for _ in range(groups):
        if scheduler.next_group(timeout=600) is None:
            raise SystemExit(f"scheduler stalled: {scheduler.stats()}")
    elapsed = time.perf_counter() - started
    scheduler.stop()
    return elapsed


def median(action, repeats: int) -> float:
    return statistics.median(action() for _ in range(repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=48)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--groups", type=int, default=60)
    parser.add_argument("--sleep-ms", type=float, default=50.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None, help="write results as JSON ('-' = stdout)")
    args = parser.parse_args()
    rollouts = args.groups * args.group_size

    instant = Runner(0.0)
    base_s = median(lambda: direct(instant, rollouts, args.group_size), args.repeats)
    sched_s = median(lambda: scheduled(instant, args.groups, args), args.repeats)
    base_us, sched_us = 1e6 * base_s / rollouts, 1e6 * sched_s / rollouts
    print(f"{rollouts} rollouts ({args.groups} groups of {args.group_size}), {args.sessions} "
          f"sessions; median of {args.repeats}")  # fmt: skip
    print(f"  instant runner, direct loop : {base_us:9.1f} us/rollout")
    print(f"  instant runner, scheduler   : {sched_us:9.1f} us/rollout")
    print(f"  scheduler overhead          : {sched_us - base_us:9.1f} us/rollout "
          f"({sched_us / base_us:.2f}x the direct loop)")  # fmt: skip

    sleeper = Runner(args.sleep_ms / 1000)
    ideal_s = rollouts * sleeper.sleep_s / args.sessions
    slept_s = median(lambda: scheduled(sleeper, args.groups, args), args.repeats)
    lost_us = 1e6 * (slept_s - ideal_s) / rollouts
    print(f"  sleeping runner ({args.sleep_ms:g} ms) : {slept_s:9.3f} s wall, ideal "
          f"{ideal_s:.3f} s -> {slept_s / ideal_s:.3f}x, "
          f"{lost_us:.1f} us/rollout lost")  # fmt: skip
    if args.json:
        text = json.dumps({
            "rollouts": rollouts, "sessions": args.sessions, "direct_us": base_us,
            "scheduler_us": sched_us, "overhead_us": sched_us - base_us,
            "overhead_ratio": sched_us / base_us, "sleep_ms": args.sleep_ms,
            "sleep_wall_s": slept_s, "sleep_ideal_s": ideal_s, "sleep_ratio": slept_s / ideal_s,
        }, indent=2)  # fmt: skip
        write_json(text, args.json)


if __name__ == "__main__":
    main()
