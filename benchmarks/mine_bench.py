"""How fast is `repo2rlenv mine` without Docker, against plain JSON parsing of the same bytes.

Prints sessions/s and MB/s for mining (read, detect, normalise to ATIF, replay, draft all
four kinds, static checks, write tasks and manifest) and for `json.loads` over the same
files, their ratio (target: mining within 5x of parsing), and the emitted-task yield per
kind on the bundled example sessions. Figures are medians of --repeats runs measured in
the same process; only the ratio is meant to be compared across machines. Parse and mine
runs alternate, so a machine that gets busier or quieter during the benchmark weighs on
both alike; each pair's own ratio and the load average are printed to show the noise.

    python benchmarks/mine_bench.py [--repeats 5] [--samples ../shared/samples/real]
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
from repo2rlenv.examples.session_formats import SESSIONS_DIR  # noqa: E402
from repo2rlenv.formats import jsondecode  # noqa: E402
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline  # noqa: E402
from repo2rlenv.mining.sources import SESSION_SUFFIXES  # noqa: E402


def session_files(roots: list[Path]) -> list[Path]:
    return [
        p
        for root in roots
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.suffix in SESSION_SUFFIXES and p.suffix != ".parquet"
    ]


def parse_only(files: list[Path]) -> None:
    for path in files:
        text = path.read_text(errors="replace")
        if path.suffix == ".jsonl":
            for line in text.splitlines():
                if line.strip():
                    try:  # noqa: SIM105 - a bare try is the cheapest baseline
                        json.loads(line)
                    except ValueError:
                        pass
        else:
            try:  # noqa: SIM105 - a bare try is the cheapest baseline
                json.loads(text)
            except ValueError:
                pass


def mine_once(root: Path, out: Path) -> dict:
    options = MineOptions(dataset=str(root), jobs=1, validate_tasks=False, base_image="img:1")
    report = emit_all(SessionPipeline(options, runtime=None), out)
    return report.to_dict()


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samples", type=Path, default=REPO.parent / "shared" / "samples" / "real")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="mine-bench-"))
    corpus = work / "corpus"
    shutil.copytree(SESSIONS_DIR, corpus / "examples")
    if args.samples.exists():
        shutil.copytree(
            args.samples,
            corpus / "samples",
            ignore=shutil.ignore_patterns("*.ipynb", "*.csv", "*.md"),
        )
    files = session_files([corpus])
    megabytes = sum(p.stat().st_size for p in files) / 1e6

    reports: list[dict] = []
    parse_times, mine_times = [], []
    for run in range(args.repeats):
        out = work / f"out-{run}"
        # A real run writes once: flush the earlier repeats' writes first, so their
        # writeback does not land in this repeat's timing (nor in the next parse).
        os.sync()
        parse_times.append(timed(lambda: parse_only(files)))
        mine_times.append(timed(lambda: reports.append(mine_once(corpus, out))))  # noqa: B023
    parse_s, mine_s = statistics.median(parse_times), statistics.median(mine_times)
    records = reports[-1]["records_read"]
    examples = mine_once(SESSIONS_DIR, work / "examples-out")

    print(
        f"corpus: {len(files)} files, {records} records, {megabytes:.2f} MB; "
        f"median of {args.repeats}"
    )
    print(
        f"  json.loads only   : {parse_s:8.3f} s  {records / parse_s:9.1f} sessions/s  "
        f"{megabytes / parse_s:8.2f} MB/s"
    )
    print(
        f"  mine (no Docker)  : {mine_s:8.3f} s  {records / mine_s:9.1f} sessions/s  "
        f"{megabytes / mine_s:8.2f} MB/s"
    )
    print(f"  mine / parse      : {mine_s / parse_s:8.2f} x   (target <= 5x)")
    pairs = " ".join(f"{m / p:.2f}" for p, m in zip(parse_times, mine_times, strict=True))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"  each run's ratio       : {pairs}   (load average {load})")
    decoder = "orjson, exact-checked" if jsondecode.orjson is not None else "json (stdlib)"
    print(f"  mining decodes with    : {decoder}; the baseline always uses json (stdlib)")
    print(f"  emitted on the corpus  : {reports[-1]['emitted_by_kind']}")
    print(
        f"  yield on the examples  : {examples['emitted_by_kind']} "
        f"from {examples['records_read']} sessions"
    )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
