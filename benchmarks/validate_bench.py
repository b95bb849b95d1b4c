"""How fast is `repo2rlenv validate`, measured against baselines timed in the same run.

Every comparison times the same work on both sides: the same trials per task (the
trial plan of `repo2rlenv.validate.dynamic.plan`, reference and no-op runs), on the
same tasks, at the same parallelism. `validate` itself does more than any baseline (the
forgery probes and, for tasks with hidden tests, the in-image leak scan), so its full
figure is printed apart, with the trials it ran counted from its report, and compared
only with itself (`-j 2` against `-j 1`).

Prints, for the bundled example tasks with a warm image cache:
  1. our Docker runtime against bare `docker` CLI calls doing the same trial steps
     (agent container, solve.sh, copy /workspace out, fresh verifier container, copy it
     in, upload tests, test.sh, read the reward), reference + no-op with 2 reruns:
     6 trials per task on both sides                          target overhead <= 1.3x
  2. our Docker runtime against `harbor run -a oracle` plus `harbor run -a nop`:
     reference + no-op, 2 trials per task on both sides, 2 at a time   target >= 3x
  3. the whole `validate` (reruns 2, probes, leak scan) at `-j 1` and `-j 2`, its
     trials counted, and the speed-up of `-j 2` over `-j 1`.
Machines here are shared and noisy: every figure is the median of --repeats runs, and
only ratios between measurements of the same run are meaningful.

    python benchmarks/validate_bench.py [--repeats 3] [--skip-harbor]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_common import median_time  # noqa: E402
from repo2rlenv.bundle import TaskTree, read_task_dir, write_bundle  # noqa: E402
from repo2rlenv.examples import example_bundles  # noqa: E402
from repo2rlenv.runtime import DockerRuntime  # noqa: E402
from repo2rlenv.settings import load_settings  # noqa: E402
from repo2rlenv.validate import ValidateOptions, validate_tasks  # noqa: E402
from repo2rlenv.validate.dynamic import plan  # noqa: E402

RERUNS = 2
"""Reruns in comparison 1 and in the full validate figure."""


def docker(*args: str, stdin: bytes | None = None) -> bytes:
    done = subprocess.run(["docker", *args], input=stdin, capture_output=True, check=True)
    return done.stdout


def bare_trial(task: Path, image: str, reference: bool) -> float:
    """One trial with the docker CLI only: the steps our runtime performs."""
    limits = ["--network", "none", "--cpus", "1", "--memory", "1024m", "-w", "/workspace"]
    agent = docker("run", "-d", *limits, image, "sleep", "infinity").decode().strip()
    try:
        if reference:
            docker("cp", f"{task}/solution/.", f"{agent}:/solution")
            docker("exec", "-w", "/workspace", agent, "bash", "/solution/solve.sh")
        workspace = docker("cp", f"{agent}:/workspace", "-")
    finally:
        docker("rm", "-f", agent)
    verifier = docker("run", "-d", *limits, image, "sleep", "infinity").decode().strip()
    try:
        docker("exec", verifier, "bash", "-c", "find /workspace -mindepth 1 -delete")
        docker("cp", "-", f"{verifier}:/", stdin=workspace)
        docker("cp", f"{task}/tests/.", f"{verifier}:/tests")
        docker(
            "exec",
            "-w",
            "/workspace",
            verifier,
            "bash",
            "-c",
            "mkdir -p /logs/verifier && bash /tests/test.sh > /dev/null 2>&1",
        )
        return float(docker("exec", verifier, "cat", "/logs/verifier/reward.txt"))
    finally:
        docker("rm", "-f", verifier)


def each_task(tasks: list[Path], jobs: int, work: Callable[[Path], object]) -> None:
    """`work` on every task, `jobs` tasks at a time (as `validate -j` and `harbor -n`)."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(work, tasks))


def bare_validate(tasks: list[Path], images: dict[Path, str], reruns: int, jobs: int = 1) -> int:
    """The plan's trials with the docker CLI only; returns how many ran."""
    requests = plan(reruns)

    def one(task: Path) -> None:
        for request in requests:
            reward = bare_trial(task, images[task], reference=request.apply_solution)
            assert reward == (1.0 if request.apply_solution else 0.0), (task, request.label)

    each_task(tasks, jobs, one)
    return len(tasks) * len(requests)


def runtime_trials(
    tasks: list[Path], trees: dict[Path, TaskTree], images: dict[Path, str], runtime: Any,
    reruns: int, jobs: int,
) -> int:  # fmt: skip
    """The same trials as `bare_validate` (and, at reruns 0, as Harbor's oracle + nop),
    through our runtime; returns how many ran."""
    requests = plan(reruns)

    def one(task: Path) -> None:
        for request in requests:
            result = runtime.run_trial(trees[task], images[task], request)
            expected = 1.0 if request.apply_solution else 0.0
            assert result.status == "ok" and result.reward == expected, (task, result)

    each_task(tasks, jobs, one)
    return len(tasks) * len(requests)


def ours(tasks: list[Path], runtime: DockerRuntime, reruns: int, jobs: int) -> int:
    """The whole `validate` (probes and leak scan included); returns the trials it ran."""
    options = ValidateOptions(reruns=reruns, jobs=jobs, use_cache=False)
    report = validate_tasks(tasks, options, runtime)
    assert report.exit_code == 0, report.summary()
    return sum(len(task.trials) for task in report.tasks)


def harbor_pair(harbor: str, tasks_root: Path, jobs_root: Path, concurrency: int) -> None:
    for agent in ("oracle", "nop"):
        out = jobs_root / f"{agent}-{time.monotonic_ns()}"
        subprocess.run(
            [
                harbor,
                "run",
                "-p",
                str(tasks_root),
                "-a",
                agent,
                "-y",
                "-n",
                str(concurrency),
                "-o",
                str(out),
            ],
            capture_output=True,
            check=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-harbor", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="validate-bench-"))
    base_image = load_settings().base_image
    tasks = [write_bundle(b, work / "tasks").path for b in example_bundles(base_image)]
    runtime = DockerRuntime()
    trees = {t: read_task_dir(t) for t in tasks}
    images = {t: runtime.prepare(trees[t]) for t in tasks}  # warm image cache
    same = len(plan(RERUNS))  # trials per task on both sides of comparison 1

    figures: dict[str, float] = {}
    counted: dict[str, int] = {}
    figures["bare_docker_s"] = median_time(
        lambda: bare_validate(tasks, images, RERUNS), args.repeats
    )
    figures["runtime_j1_s"] = median_time(
        lambda: runtime_trials(tasks, trees, images, runtime, RERUNS, 1), args.repeats
    )
    figures["overhead_vs_bare"] = figures["runtime_j1_s"] / figures["bare_docker_s"]
    for jobs in (1, 2):
        figures[f"validate_j{jobs}_s"] = median_time(
            lambda jobs=jobs: counted.__setitem__(jobs, ours(tasks, runtime, RERUNS, jobs)),
            args.repeats,
        )
    figures["validate_trials"] = counted[1]
    figures["speedup_j2_over_j1"] = figures["validate_j1_s"] / figures["validate_j2_s"]

    harbor = os.environ.get("HARBOR_BIN") or str(REPO / ".venv-harbor" / "bin" / "harbor")
    if not args.skip_harbor and Path(harbor).exists():
        runnable = work / "harbor-tasks"
        shutil.copytree(work / "tasks", runnable)
        for toml in runnable.glob("*/task.toml"):  # see tests/test_harbor_conformance.py
            toml.write_text(toml.read_text().replace('"no-network"', '"public"'))
        figures["harbor_oracle_nop_j2_s"] = median_time(
            lambda: harbor_pair(harbor, runnable, work / "jobs", 2), args.repeats
        )
        figures["runtime_reference_noop_j2_s"] = median_time(
            lambda: runtime_trials(tasks, trees, images, runtime, 0, 2), args.repeats
        )
        figures["speedup_vs_harbor"] = (
            figures["harbor_oracle_nop_j2_s"] / figures["runtime_reference_noop_j2_s"]
        )

    n = len(tasks)
    print(f"{n} tasks, median of {args.repeats} runs, warm image cache")
    print(f"  1. reference + no-op, {RERUNS} reruns: {same} trials/task, {n * same} in all, -j 1")
    print(f"     bare docker CLI, same steps           : {figures['bare_docker_s']:7.2f} s")
    print(f"     our Docker runtime                    : {figures['runtime_j1_s']:7.2f} s")
    print(f"     overhead vs bare docker (target <= 1.3x): {figures['overhead_vs_bare']:5.2f} x")
    if "speedup_vs_harbor" in figures:
        print(f"  2. reference + no-op: 2 trials/task, {n * 2} in all, 2 at a time")
        print(f"     harbor run -a oracle + -a nop, -n 2   : "
              f"{figures['harbor_oracle_nop_j2_s']:7.2f} s")  # fmt: skip
        print(f"     our Docker runtime                    : "
              f"{figures['runtime_reference_noop_j2_s']:7.2f} s")  # fmt: skip
        print(f"     speed-up vs harbor (target >= 3x)     : {figures['speedup_vs_harbor']:7.2f} x")
    elif args.skip_harbor:
        print("  2. harbor: skipped (--skip-harbor)")
    else:
        print("  2. harbor: skipped (no Harbor CLI; `make harbor` installs it)")
    print(f"  3. whole validate, {RERUNS} reruns + probes + leak scan: {counted[1]} trials")
    print(f"     validate -j 1                         : {figures['validate_j1_s']:7.2f} s")
    print(f"     validate -j 2                         : {figures['validate_j2_s']:7.2f} s")
    print(f"     speed-up of -j 2 over -j 1            : {figures['speedup_j2_over_j1']:7.2f} x")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
