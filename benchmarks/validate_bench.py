"""How fast is `repo2rlenv validate`, measured against baselines timed in the same run.

Prints, for the bundled example tasks with a warm image cache:
  1. validate's wall time against bare `docker` CLI calls doing the same trial steps
     (agent container, solve.sh, copy /workspace out, fresh verifier container, copy it
     in, upload tests, test.sh, read the reward)          target overhead <= 1.3x
  2. validate (reference + no-op, no reruns) against `harbor run -a oracle` plus
     `harbor run -a nop` on the same tasks (same parallelism)   target >= 3x faster
  3. the speed-up of `-j 2` over `-j 1`.
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_common import median_time  # noqa: E402
from repo2rlenv.bundle import read_task_dir, write_bundle  # noqa: E402
from repo2rlenv.examples import example_bundles  # noqa: E402
from repo2rlenv.runtime import DockerRuntime  # noqa: E402
from repo2rlenv.settings import load_settings  # noqa: E402
from repo2rlenv.validate import ValidateOptions, validate_tasks  # noqa: E402


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


def bare_validate(tasks: list[Path], images: dict[Path, str], reruns: int) -> None:
    for task in tasks:
        for _ in range(reruns + 1):
            assert bare_trial(task, images[task], reference=True) == 1.0
            assert bare_trial(task, images[task], reference=False) == 0.0


def ours(tasks: list[Path], runtime: DockerRuntime, reruns: int, jobs: int) -> None:
    options = ValidateOptions(reruns=reruns, jobs=jobs, use_cache=False)
    report = validate_tasks(tasks, options, runtime)
    assert report.exit_code == 0, report.summary()


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
    images = {t: runtime.prepare(read_task_dir(t)) for t in tasks}  # warm image cache

    figures: dict[str, float] = {}
    figures["bare_docker_s"] = median_time(lambda: bare_validate(tasks, images, 2), args.repeats)
    figures["validate_j1_s"] = median_time(lambda: ours(tasks, runtime, 2, 1), args.repeats)
    figures["validate_j2_s"] = median_time(lambda: ours(tasks, runtime, 2, 2), args.repeats)
    figures["overhead_vs_bare"] = figures["validate_j1_s"] / figures["bare_docker_s"]
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
        figures["validate_no_reruns_j2_s"] = median_time(
            lambda: ours(tasks, runtime, 0, 2), args.repeats
        )
        figures["speedup_vs_harbor"] = (
            figures["harbor_oracle_nop_j2_s"] / figures["validate_no_reruns_j2_s"]
        )

    print(f"{len(tasks)} tasks, median of {args.repeats} runs, warm image cache")
    print(f"  bare docker CLI, same steps, 6 trials/task : {figures['bare_docker_s']:7.2f} s")
    print(f"  validate -j 1 (reruns 2)                   : {figures['validate_j1_s']:7.2f} s")
    print(f"  validate -j 2 (reruns 2)                   : {figures['validate_j2_s']:7.2f} s")
    print(f"  overhead vs bare docker  (target <= 1.3x)  : {figures['overhead_vs_bare']:7.2f} x")
    print(f"  speed-up of -j 2 over -j 1                 : {figures['speedup_j2_over_j1']:7.2f} x")
    if "speedup_vs_harbor" in figures:
        print(
            f"  harbor oracle + nop, -n 2                  : "
            f"{figures['harbor_oracle_nop_j2_s']:7.2f} s"
        )
        print(
            f"  validate, reference + no-op only, -j 2     : "
            f"{figures['validate_no_reruns_j2_s']:7.2f} s"
        )
        print(
            f"  speed-up vs harbor       (target >= 3x)    : {figures['speedup_vs_harbor']:7.2f} x"
        )
    else:
        print("  harbor: skipped (no Harbor CLI; `make harbor` installs it)")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
