"""The static checks `mine` and `validate` run on every task, against reading the same
task's files from disk (`read_task_dir`): how many reads of the task the checks cost.

An instance-backed repair task carries its repository's whole checkout (SymPy's 2,000
files, 42 MB), so a check that reads every file line by line in Python, or walks every
module's import graph, costs far more than the task's own bytes: before the checks
stopped at what decides them, one SymPy task's checks took about 34 s of CPU here, most
of a run's mining. Per check, the time of each is printed too, so the next slow one is
named.

    python benchmarks/static_checks_bench.py TASK_DIR [TASK_DIR ...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from benchmarks.bench_common import median_time  # noqa: E402
from repo2rlenv.bundle import read_task_dir  # noqa: E402
from repo2rlenv.validate.checks import STATIC_CHECKS, run_static  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+", type=Path)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for folder in args.tasks:
        tree = read_task_dir(folder)
        size = sum(len(content) for content, _ in tree.files.values())
        read = median_time(lambda folder=folder: read_task_dir(folder), args.repeats)
        checks = median_time(lambda tree=tree: run_static(tree), args.repeats)
        print(f"{folder.name}: {len(tree.files)} files, {size / 1e6:.1f} MB")
        print(f"  read {read:.2f} s, static checks {checks:.2f} s: {checks / read:.1f}x the read")
        for name, check in STATIC_CHECKS.items():
            started = time.process_time()
            list(check(tree))
            spent = time.process_time() - started
            if spent >= 0.05:
                print(f"    {name}: {spent:.2f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
