"""`make test` runs two pytest workers; the engine tests run in two lanes (vLLM, Docker), each
one at a time in one worker, the lanes side by side (tests/xdist_engine.py). A small suite
is run under `-n 2` and each test records where and when it ran."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _QUICK_SKIPS
from tests.xdist_engine import ENGINE_MARKERS, ENGINE_SCOPE, VLLM_SCOPE

REPO = Path(__file__).resolve().parents[1]

_SUITE = """
import json, os, time
from pathlib import Path
import pytest

LOG = Path(os.environ["RUN_LOG"])

def _record(name):
    start = time.monotonic()
    time.sleep(0.2)
    with LOG.open("a") as log:
        log.write(json.dumps({{"name": name, "worker": os.environ.get("PYTEST_XDIST_WORKER"),
                              "start": start, "end": time.monotonic()}}) + "\\n")

{tests}
"""


def _suite(engine: int, units: int) -> str:
    tests = []
    markers = ENGINE_MARKERS
    for n in range(engine):
        marker = markers[n % len(markers)]
        lane = VLLM_SCOPE if marker == "vllm" else ENGINE_SCOPE
        tests.append(f"@pytest.mark.{marker}\ndef test_engine_{n}():\n    _record('{lane}_{n}')\n")
    tests.append(f"def test_engine_by_fixture(docker_ready):\n    _record('{ENGINE_SCOPE}_fx')\n")
    for n in range(units):
        tests.append(f"def test_unit_{n}():\n    _record('unit_{n}')\n")
    return _SUITE.format(tests="\n".join(tests))


def test_the_engine_markers_are_the_ones_make_quick_skips() -> None:
    assert set(ENGINE_MARKERS) == set(_QUICK_SKIPS)


def _one_at_a_time_in_one_worker(runs: list[dict]) -> tuple[str, tuple[float, float]]:
    """The worker and time span of one lane's tests, asserting they ran one after another."""
    runs = sorted(runs, key=lambda r: r["start"])
    assert len({r["worker"] for r in runs}) == 1, runs
    for before, after in itertools.pairwise(runs):
        assert before["end"] <= after["start"], (before, after)
    return runs[0]["worker"], (runs[0]["start"], runs[-1]["end"])


def test_each_engine_lane_runs_one_at_a_time_in_its_own_worker_beside_the_other(
    tmp_path: Path,
) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is a dev dependency (`make test` has it)")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n" + "".join(f"    {m}: engine\n" for m in ENGINE_MARKERS)
    )
    (suite / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef docker_ready():\n    return 'image'\n"
    )
    (suite / "test_mixed.py").write_text(_suite(engine=12, units=24))
    log = tmp_path / "run.jsonl"
    env = {**os.environ, "RUN_LOG": str(log), "PYTHONPATH": str(REPO)}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
         "-p", "tests.xdist_engine", "--strict-markers", str(suite)],
        cwd=suite, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 12 + 1 + 24
    vllm = [r for r in runs if r["name"].startswith(f"{VLLM_SCOPE}_")]
    docker = [r for r in runs if r["name"].startswith(f"{ENGINE_SCOPE}_")]
    assert (len(vllm), len(docker)) == (3, 10)
    vllm_worker, vllm_span = _one_at_a_time_in_one_worker(vllm)
    docker_worker, docker_span = _one_at_a_time_in_one_worker(docker)
    assert vllm_worker != docker_worker
    assert vllm_span[0] < docker_span[1] and docker_span[0] < vllm_span[1], "lanes not in parallel"
    units = [r for r in runs if r["name"].startswith("unit")]
    assert {r["worker"] for r in units} == {vllm_worker, docker_worker}
