"""`make test` runs two pytest workers; the engine tests must still run one at a time in one
of them (tests/xdist_engine.py). A small suite is run under `-n 2` and each test records
where and when it ran."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _QUICK_SKIPS
from tests.xdist_engine import ENGINE_MARKERS

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
        tests.append(f"@pytest.mark.{marker}\ndef test_engine_{n}():\n    _record('engine_{n}')\n")
    tests.append("def test_engine_by_fixture(docker_ready):\n    _record('engine_fixture')\n")
    for n in range(units):
        tests.append(f"def test_unit_{n}():\n    _record('unit_{n}')\n")
    return _SUITE.format(tests="\n".join(tests))


def test_the_engine_markers_are_the_ones_make_quick_skips() -> None:
    assert set(ENGINE_MARKERS) == set(_QUICK_SKIPS)


def test_engine_tests_run_one_at_a_time_in_one_worker_beside_the_unit_tests(
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
    (suite / "test_mixed.py").write_text(_suite(engine=8, units=24))
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
    assert len(runs) == 8 + 1 + 24
    engine = sorted((r for r in runs if r["name"].startswith("engine")), key=lambda r: r["start"])
    units = [r for r in runs if r["name"].startswith("unit")]
    assert len(engine) == 9
    assert len({r["worker"] for r in engine}) == 1, engine
    for before, after in itertools.pairwise(engine):
        assert before["end"] <= after["start"], (before, after)
    (engine_worker,) = {r["worker"] for r in engine}
    beside = [r for r in units if r["worker"] != engine_worker]
    assert beside, "no unit test ran in the other worker"
    span = (engine[0]["start"], engine[-1]["end"])
    assert any(r["start"] < span[1] and r["end"] > span[0] for r in beside), "not in parallel"
