"""Mining a 500-run mini-swe-agent experiment folder without Docker, against `json.loads`
of the same files (the issue's bound: within 5x).

No public repository here holds a 500-run folder (SWE-bench experiment submissions hold
one run per instance; the mini-swe-agent history here has 122 real runs), so the folder
is built from the real runs given with --runs: they are copied round-robin up to
--count files, copy N of every run in its own folder (`copyN/<id>/<id>.traj.json`, as
an experiment folder lays runs out). Copies are byte-identical to their source, so the
ratio measures reading and replaying real runs, not a synthetic shape.

Copies of one run are a whole pass of the runs apart, as distinct runs would be: the
shell reader caches its last 512 parses, and with copies side by side (`--adjacent`,
`<id>-copyN/`, the layout of the figures before December 2026) it answered three of
every four copies' commands from that cache, which made mining look about a quarter
cheaper than on a folder of 500 different runs.

Mining reads, detects, normalises, replays and drafts every kind (no instance table, no
anchors, one job); parse and mine runs alternate, and the median of --repeats is
reported with each pair's ratio and the load average after it (the machine is shared).
Wall time is the headline; the ratio of CPU times (this process only) is printed beside
it, since another process's load slows both sides of a wall-clock pair unevenly.

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


def build_folder(runs: list[Path], count: int, dest: Path, adjacent: bool = False) -> list[Path]:
    files = []
    for index in range(count):
        source = runs[index % len(runs)]
        stem = source.name.removesuffix(".traj.json")
        copy = f"copy{index // len(runs)}"
        if adjacent:
            target = dest / f"{stem}-{copy}" / f"{stem}-{copy}.traj.json"
        else:
            target = dest / copy / stem / source.name
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


def timed(action) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of one run of `action`."""
    started, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, required=True, help="folder of *.traj.json runs")
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--adjacent",
        action="store_true",
        help="copies of a run side by side (the layout before December 2026; flatters mining)",
    )
    args = parser.parse_args()
    runs = sorted(args.runs.rglob("*.traj.json"))
    if not runs:
        raise SystemExit(f"{args.runs}: no *.traj.json runs")
    work = Path(tempfile.mkdtemp(prefix="swe-mine-bench-"))
    files = build_folder(runs, args.count, work / "runs", adjacent=args.adjacent)
    megabytes = sum(p.stat().st_size for p in files) / 1e6
    parse_times, mine_times, loads, reports = [], [], [], []
    for repeat in range(args.repeats):
        os.sync()
        parse_times.append(timed(lambda: parse_only(files)))
        out = work / f"out-{repeat}"
        mine_times.append(timed(lambda: reports.append(mine_once(work / "runs", out))))  # noqa: B023
        loads.append(os.getloadavg()[0])
    parse_s = statistics.median(wall for wall, _ in parse_times)
    mine_s = statistics.median(wall for wall, _ in mine_times)
    cpu_ratio = statistics.median(m[1] / p[1] for p, m in zip(parse_times, mine_times, strict=True))
    layout = "copies side by side" if args.adjacent else "copies a pass apart"
    print(
        f"folder: {len(files)} mini-swe-agent runs ({len(runs)} distinct real runs, {layout}), "
        f"{megabytes:.1f} MB, {reports[-1]['records_read']} records read; "
        f"median of {args.repeats}"
    )
    print(f"  json.loads only  : {parse_s:8.3f} s")
    print(f"  mine (no Docker) : {mine_s:8.3f} s")
    print(f"  mine / parse     : {mine_s / parse_s:8.2f} x   (bound: 5x)")
    print(f"  same, CPU time   : {cpu_ratio:8.2f} x   (median of the pairs' CPU-time ratios)")
    for index, (parse, mine, load) in enumerate(
        zip(parse_times, mine_times, loads, strict=True), start=1
    ):
        print(
            f"  pair {index}           : {mine[0] / parse[0]:8.2f} x   "
            f"({mine[0]:.3f} s / {parse[0]:.3f} s; CPU {mine[1] / parse[1]:.2f} x; "
            f"1-minute load average {load:.2f})"
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
