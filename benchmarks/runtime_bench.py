"""Trials per minute of `validate` on each runtime, measured in one run.

The bundled example tasks (4) are validated with reference and no-op trials (no
reruns, no probes: 8 trials) at `-j 1, 2, 4` on `docker` (the local engine) and on
`harbor:docker` (Harbor's own Docker environment through the driver process). Every
run must reach the same verdict (all tasks verified); printed are trials per minute,
the ratio harbor:docker / docker at each `-j`, and each runtime's speed-up over
`-j 1`. Machines here are shared and noisy: each figure is the median of --repeats
runs, and only ratios between measurements of one run are meaningful.

    python benchmarks/runtime_bench.py [--repeats 1] [--jobs 1 2 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from repo2rlenv.bundle import write_bundle  # noqa: E402
from repo2rlenv.examples import example_bundles  # noqa: E402
from repo2rlenv.runtime.registry import make_runtime  # noqa: E402
from repo2rlenv.settings import load_settings  # noqa: E402
from repo2rlenv.validate import ValidateOptions, validate_tasks  # noqa: E402

RUNTIMES = ("docker", "harbor:docker")


def trials_per_minute(tasks: list[Path], runtime_name: str, jobs: int, repeats: int) -> float:
    runtime = make_runtime(runtime_name, load_settings().harbor_python)
    runtime.check()
    rates = []
    for _ in range(repeats):
        options = ValidateOptions(
            reruns=0, probes=False, jobs=jobs, use_cache=False, runtime=runtime.name
        )
        started = time.perf_counter()
        report = validate_tasks(tasks, options, runtime)
        wall = time.perf_counter() - started
        assert report.exit_code == 0, (runtime_name, report.summary())
        trials = sum(len(t.trials) for t in report.tasks)
        rates.append(trials / wall * 60)
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2, 4])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="runtime-bench-") as scratch:
        root = Path(scratch)
        tasks = [write_bundle(b, root).path for b in example_bundles(load_settings().base_image)]
        # Warm both runtimes' image caches, so builds are not measured.
        for name in RUNTIMES:
            trials_per_minute(tasks, name, len(tasks), 1)
        rates = {
            (name, jobs): trials_per_minute(tasks, name, jobs, args.repeats)
            for jobs in args.jobs
            for name in RUNTIMES
        }
    print(
        f"{len(tasks)} tasks, reference + no-op each; trials per minute (median of {args.repeats})"
    )
    print(f"{'-j':>3} {'docker':>10} {'harbor:docker':>14} {'harbor/docker':>14}")
    for jobs in args.jobs:
        docker, harbor = rates[("docker", jobs)], rates[("harbor:docker", jobs)]
        print(f"{jobs:>3} {docker:>10.1f} {harbor:>14.1f} {harbor / docker:>14.2f}")
    first = args.jobs[0]
    for name in RUNTIMES:
        speedups = ", ".join(
            f"-j {j}: {rates[(name, j)] / rates[(name, first)]:.2f}x" for j in args.jobs[1:]
        )
        print(f"{name} speed-up over -j {first}: {speedups}")


if __name__ == "__main__":
    main()
