"""How fast decontamination is, and what it finds on real tables.

Prints, against the SWE-bench Verified table (default: the copy in ../shared):
  1. index build time (MinHash LSH Ensemble over the statements, plus the lookups), for
     the table and for the table repeated to --scale times its rows (SWE-rebench-sized);
  2. check time per 1000 tasks: the table's own statements reworded and wrapped in a
     harness prompt (all should match) mixed 1:1 with fresh texts (none should);
  3. recall on those rewordings and false matches on the fresh texts;
  4. statements of one Verified instance that match another instance (near duplicates
     inside the benchmark itself: what a threshold of 0.8 calls the same issue).
Machines here are shared and noisy: figures are medians of --repeats runs.

    python benchmarks/decontam_bench.py [--table FILE] [--repeats 3] [--scale 20]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_common import median_time, write_json  # noqa: E402
from repo2rlenv.decontam.facts import TaskFacts  # noqa: E402
from repo2rlenv.decontam.index import build_index  # noqa: E402
from repo2rlenv.decontam.matching import match  # noqa: E402
from repo2rlenv.decontam.tables import Entry, Table, load_table  # noqa: E402

VERIFIED = REPO.parent / "shared" / "samples" / "swe" / "SWE-bench_Verified-test.parquet"
WRAP = (
    "<pr_description>\nConsider the following PR description:\n{text}\n</pr_description>\n\n"
    "<instructions>\n" + "Edit the source files, run the tests, then submit. " * 20 + "\n"
    "</instructions>\n"
)


DROP = 0.1


def reworded(text: str, rng: random.Random) -> str:
    """One word in ten dropped, the rest kept in order: an edited copy."""
    words = text.split()
    return " ".join(w for w in words if rng.random() >= DROP)


def fresh(rng: random.Random, vocabulary: list[str]) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(120))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", default=str(VERIFIED))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--json", default="-")
    args = parser.parse_args()
    started = time.perf_counter()
    table = load_table(args.table)
    load_s = time.perf_counter() - started
    build_s = median_time(lambda: build_index(table), args.repeats)
    big = Table(
        "scaled",
        [Entry(f"{e.instance_id}#{k}", statement=e.statement)
         for k in range(args.scale) for e in table.entries],
    )  # fmt: skip
    big_build_s = median_time(lambda: build_index(big), 1)
    index = build_index(table)
    rng = random.Random(7)
    vocabulary = sorted({w for e in table.entries for w in e.statement.split()})
    rows = [e for e in table.entries if e.statement]
    tasks = [
        TaskFacts(f"dup-{e.instance_id}", WRAP.format(text=reworded(e.statement, rng)))
        for e in rows
    ]
    tasks += [TaskFacts(f"fresh-{i}", instruction=fresh(rng, vocabulary)) for i in range(len(rows))]
    check_s = median_time(lambda: [match(t, index) for t in tasks], args.repeats)
    found = {t.task_id: {m.instance_id for m in match(t, index)} for t in tasks}
    recall = sum(f"dup-{e.instance_id}" in found and e.instance_id in found[f"dup-{e.instance_id}"]
                 for e in rows)  # fmt: skip
    false = sum(bool(v) for k, v in found.items() if k.startswith("fresh-"))
    inside = 0
    pairs = []
    for e in rows:
        others = {m.instance_id for m in match(TaskFacts(e.instance_id, e.statement), index)}
        others.discard(e.instance_id)
        if others:
            inside += 1
            pairs.append([e.instance_id, sorted(others)])
    figures = {
        "table": args.table,
        "rows": len(table.entries),
        "load_s": round(load_s, 2),
        "index_build_s": round(build_s, 3),
        f"index_build_s_x{args.scale}": round(big_build_s, 2),
        "tasks_checked": len(tasks),
        "check_s_per_1000_tasks": round(check_s / len(tasks) * 1000, 3),
        "reworded_drop_rate": DROP,
        "reworded_caught": f"{recall}/{len(rows)}",
        "fresh_flagged": f"{false}/{len(rows)}",
        "instances_matching_another_instance": inside,
        "examples": pairs[:5],
    }
    write_json(json.dumps(figures, indent=2), args.json)


if __name__ == "__main__":
    main()
