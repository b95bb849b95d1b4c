"""The verifier phase with the delta hand-over against the whole one, in one run.

Each task given (default: the bundled example tasks) is validated with reference and
no-op trials (no reruns, no probes) on the Docker runtime, alternately with the delta
hand-over (`runtime.handover`, the default) and the whole one, `--repeats` times each.
Both must reach the same verdicts. Printed per task: the median verifier phase (hand-over,
tests, reward) of each way and the ratio whole / delta. A large checkout shows the
difference (a Django SWE task: thousands of files in the image's layers); the examples'
few files hardly do. Images are built once before anything is timed.

    python benchmarks/handover_bench.py [TASK_DIR ...] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from repo2rlenv.bundle import write_bundle  # noqa: E402
from repo2rlenv.examples import example_bundles  # noqa: E402
from repo2rlenv.runtime.docker_runtime import DockerRuntime  # noqa: E402
from repo2rlenv.settings import load_settings  # noqa: E402
from repo2rlenv.validate import ValidateOptions, validate_tasks  # noqa: E402

OPTIONS = ValidateOptions(reruns=0, probes=False, jobs=1, use_cache=False, runtime="docker")


def verifier_phases(task: Path, delta: bool) -> tuple[list[float], tuple]:
    """Each trial's verifier phase (s) and the verdict, for one validation of `task`."""
    runtime = DockerRuntime(delta_hand_over=delta)
    runtime.check()
    report = validate_tasks([task], OPTIONS, runtime)
    (result,) = report.tasks
    verdict = (result.valid, sorted((t.label, t.reward) for t in result.trials))
    return [t.phase_s.get("verifier", 0.0) for t in result.trials], verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", type=Path, help="task folders (default: examples)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="handover-bench-") as scratch:
        tasks = args.tasks or [
            write_bundle(b, Path(scratch)).path for b in example_bundles(load_settings().base_image)
        ]
        print(f"{'task':<48} {'delta s':>8} {'whole s':>8} {'whole/delta':>12}")
        for task in tasks:
            verifier_phases(task, True)  # builds the image; not timed
            times: dict[bool, list[float]] = {True: [], False: []}
            verdicts = set()
            for _ in range(args.repeats):
                for delta in (True, False):
                    phases, verdict = verifier_phases(task, delta)
                    times[delta] += phases
                    verdicts.add(repr(verdict))
            assert len(verdicts) == 1, f"{task.name}: the two ways disagree: {verdicts}"
            delta_s, whole_s = (statistics.median(times[d]) for d in (True, False))
            ratio = whole_s / delta_s
            print(f"{task.name[:48]:<48} {delta_s:>8.2f} {whole_s:>8.2f} {ratio:>12.2f}")


if __name__ == "__main__":
    main()
