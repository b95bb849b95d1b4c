"""Mining a 500-run mini-swe-agent experiment folder without Docker, against `json.loads`
of the same files (the issue's bound: within 5x).

No public repository here holds a 500-run folder (SWE-bench experiment submissions hold
one run per instance; the mini-swe-agent history here has 122 real runs), so the folder
is built from the real runs given with --runs: they are copied round-robin, each copy
under its own instance folder and file name (`<id>-copyN`), up to --count files, as an
experiment folder lays them out. Copies are byte-identical to their source, so the
ratio measures reading and replaying real runs, not a synthetic shape. Mining reads,
detects, normalises, replays and drafts every kind (no instance table, no anchors, one
job); parse and mine runs alternate, and the median of --repeats is reported with each
pair's ratio and the load average after it (the machine is shared).

    python benchmarks/swe_mine_bench.py --runs RUNS_DIR [--count 500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from repo2rlenv.emit import emit_all  # noqa: E402
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline  # noqa: E402


def build_folder(runs: list[Path], count: int, dest: Path) -> list[Path]:
    files = []
    for index in range(count):
        source = runs[index % len(runs)]
        stem = source.name.removesuffix(".traj.json")
        name = f"{stem}-copy{index // len(runs)}"
        target = dest / name / f"{name}.traj.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        files.append(target)
    return files


def parse_only(files: list[Path]) -> None:
    for path in files:
        json.loads(path.read_text(errors="replace"))


def mine_once(root: Path, out: Path) -> dict:
    options = MineOptions(dataset=str(root), jobs=1, validate_tasks=False, base_image="img:1")
    return emit_all(SessionPipeline(options, runtime=None), out).to_dict()


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="folder of *.traj.json runs")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    runs = sorted(args.runs.rglob("*.traj.json"))
    if not runs:
        raise SystemExit(f"{args.runs}: no *.traj.json runs")
    work = Path(tempfile.mkdtemp(prefix="swe-mine-bench-"))
    files = build_folder(runs, args.count, work / "runs")
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    parse_times, mine_times, loads, reports = [], [], [], []
    for repeat in range(args.repeats):
        os.sync()
        parse_times.append(timed(lambda: parse_only(files)))
        out = work / f"out-{repeat}"
        mine_times.append(timed(lambda: reports.append(mine_once(work / "runs", out))))  # noqa: B023
        loads.append(os.getloadavg()[0])
    parse_s, mine_s = statistics.median(parse_times), statistics.median(mine_times)
    print(
        f"folder: {len(files)} mini-swe-agent runs ({len(runs)} distinct real runs), "
        f"{megabytes:.1f} MB, {reports[-1]['records_read']} records read; "
        f"median of {args.repeats}"
    )
    print(f"  json.loads only  : {parse_s:8.3f} s")
    print(f"  mine (no Docker) : {mine_s:8.3f} s")
    print(f"  mine / parse     : {mine_s / parse_s:8.2f} x   (bound: 5x)")
    for index, (parse, mine, load) in enumerate(
        zip(parse_times, mine_times, loads, strict=True), start=1
    ):
        print(
            f"  pair {index}           : {mine / parse:8.2f} x   "
            f"({mine:.3f} s / {parse:.3f} s, 1-minute load average {load:.2f})"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
