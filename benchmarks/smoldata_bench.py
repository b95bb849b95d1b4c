"""How fast smoldataenvs finds candidates, and how many survive the reproduction check.

Prints, for a folder of notebooks (default: the real samples):
  1. candidate extraction (read, parse, slice, plan data, write the question) in
     notebooks/s, and its cost relative to two baselines timed in the same run:
     `json.loads` of the same files (the floor: reading them at all) and
     `nbformat.reads` with validation (what a typical notebook reader costs);
  2. the share of candidates that survive the reproduction check (the sliced
     reference re-run in Docker reproduces the saved answer), with the trials' wall
     time. Skipped with --no-reproduce or when no Docker engine answers.
Machines here are shared and noisy: figures are medians of --repeats runs, and only
ratios between measurements of the same run are meaningful.

    python benchmarks/smoldata_bench.py [--notebooks DIR] [--repeats 5] [--no-reproduce]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_common import median_time  # noqa: E402
from repo2rlenv.emit import emit_all  # noqa: E402
from smoldataenvs import NotebookOptions, NotebookPipeline  # noqa: E402
from smoldataenvs.candidates import Candidate, CandidateExtractor  # noqa: E402
from smoldataenvs.datafiles import FileIndex, _columns, _sha256  # noqa: E402
from smoldataenvs.notebook import NotebookError, load_notebook  # noqa: E402
from smoldataenvs.notebook_files import find_notebooks  # noqa: E402
from smoldataenvs.slicing import effects  # noqa: E402

SAMPLES = REPO.parent / "shared" / "samples" / "real" / "notebooks"


def extract_all(notebooks: list[tuple[Path, str]]) -> int:
    for cache in (effects, _sha256, _columns):  # every repeat starts cold
        cache.cache_clear()
    extractor = CandidateExtractor(FileIndex([]))
    found = 0
    for path, record_id in notebooks:
        try:
            notebook = load_notebook(path, record_id)
        except NotebookError:
            continue
        found += sum(isinstance(c, Candidate) for c in extractor.extract(notebook))
    return found


def read_json(notebooks: list[tuple[Path, str]]) -> None:
    for path, _ in notebooks:
        json.loads(path.read_bytes())


def read_nbformat(notebooks: list[tuple[Path, str]]) -> None:
    import nbformat

    for path, _ in notebooks:
        try:
            nbformat.reads(path.read_text(), as_version=4)
        except Exception:  # a baseline: its failures are not ours to report
            continue


def extraction(folder: Path, repeats: int) -> None:
    notebooks = find_notebooks(folder)
    size = sum(p.stat().st_size for p, _ in notebooks) / 1e6
    candidates = extract_all(notebooks)
    ours = median_time(lambda: extract_all(notebooks), repeats)
    floor = median_time(lambda: read_json(notebooks), repeats)
    typical = median_time(lambda: read_nbformat(notebooks), repeats)
    print(f"notebooks: {len(notebooks)} ({size:.1f} MB), candidates found: {candidates}")
    print(f"candidate extraction: {len(notebooks) / ours:8.1f} notebooks/s ({ours * 1e3:.1f} ms)")
    print(f"  vs json.loads only:  {ours / floor:8.2f}x the time of just reading the JSON")
    print(f"  vs nbformat.reads:   {ours / typical:8.2f}x the time of nbformat's reader")


def survival(folder: Path, jobs: int) -> None:
    from repo2rlenv.runtime import DockerRuntime, RuntimeUnavailableError

    try:
        DockerRuntime().check()
    except RuntimeUnavailableError as exc:
        print(f"reproduction: skipped ({exc})")
        return
    events: list = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        options = NotebookOptions(dataset=str(folder), jobs=jobs, max_per_dataset=1000)
        report = emit_all(NotebookPipeline(options), Path(out), on_event=events.append)
    wall = time.perf_counter() - started
    failed = {r: n for r, n in report.skipped.items() if r.startswith("reproduce.")}
    tried = report.emitted + sum(failed.values())
    share = report.emitted / tried if tried else 0.0
    print(
        f"reproduction: {report.emitted}/{tried} candidates reproduced ({share:.0%}), "
        f"{wall:.1f}s wall with -j {jobs} ({wall / max(tried, 1):.1f}s per candidate)"
    )
    for reason, count in sorted(failed.items()):
        print(f"  {reason}: {count}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", type=Path, default=SAMPLES)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--no-reproduce", action="store_true")
    args = parser.parse_args()
    extraction(args.notebooks, args.repeats)
    if not args.no_reproduce:
        survival(args.notebooks, args.jobs)


if __name__ == "__main__":
    main()
