"""One job mines in the calling thread, several through a pool: same events, same bytes."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from repo2rlenv.emit import emit_all
from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.mining.ordered import ordered_map
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline


def test_without_a_pool_work_runs_here_lazily_and_in_order():
    seen: list[int] = []

    def work(item: int) -> tuple[int, str]:
        seen.append(item)
        return item * 2, threading.current_thread().name

    results = ordered_map(None, work, iter(range(5)), window=3)
    assert seen == []  # nothing read ahead before the first result is asked for
    assert next(results) == (0, threading.current_thread().name)
    assert seen == [0]
    assert [r for r, _ in results] == [2, 4, 6, 8]


def test_with_a_pool_results_keep_input_order():
    with ThreadPoolExecutor(max_workers=3) as pool:
        assert list(ordered_map(pool, lambda x: x * x, range(20), window=4)) == [
            x * x for x in range(20)
        ]


def _mine(out: Path, jobs: int) -> tuple[dict, dict[str, bytes]]:
    options = MineOptions(
        dataset=str(SESSIONS_DIR), jobs=jobs, validate_tasks=False, base_image="img:1"
    )
    report = emit_all(SessionPipeline(options, runtime=None), out).to_dict()
    files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    return report, files


def test_one_job_and_three_jobs_give_the_same_output(tmp_path):
    one = _mine(tmp_path / "one", jobs=1)
    three = _mine(tmp_path / "three", jobs=3)
    assert one == three
    assert one[0]["emitted"] == 6 and len(one[1]) > 6
