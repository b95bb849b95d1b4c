"""`make test` runs two pytest workers; the container tests must still run one at a time in
one of them, the server tests one at a time beside them (tests/xdist_engine.py). A small
suite is run under `-n 2` and each test records where and when it ran."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import _QUICK_SKIPS
from tests.xdist_engine import CONTAINER_MARKERS, ENGINE_MARKERS

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


SERVER_MARKERS = tuple(m for m in ENGINE_MARKERS if m not in CONTAINER_MARKERS)


def _tests(prefix: str, markers: tuple[str, ...], count: int) -> list[str]:
    return [
        f"@pytest.mark.{markers[n % len(markers)]}\n"
        f"def test_{prefix}_{n}():\n    _record('{prefix}_{n}')\n"
        for n in range(count)
    ]


def _write_suite(suite: Path) -> None:
    """Container tests (markers and the fixture), server tests in a module of their own,
    a module mixing both kinds, and unit tests."""
    containers = _tests("container", CONTAINER_MARKERS, 6)
    containers.append("def test_container_fixture(docker_ready):\n    _record('container_f')\n")
    units = [f"def test_unit_{n}():\n    _record('unit_{n}')\n" for n in range(24)]
    mixed = [
        *_tests("mixedcontainer", CONTAINER_MARKERS, 1),
        *_tests("mixedserver", SERVER_MARKERS, 2),
    ]
    modules = {
        "test_containers.py": containers + units[:12],
        "test_servers.py": _tests("server", SERVER_MARKERS, 6) + units[12:],
        "test_mixed.py": mixed,
    }
    for name, tests in modules.items():
        (suite / name).write_text(_SUITE.format(tests="\n".join(tests)))


def _one_at_a_time(runs: list[dict]) -> None:
    ordered = sorted(runs, key=lambda r: r["start"])
    assert len({r["worker"] for r in ordered}) == 1, ordered
    for before, after in itertools.pairwise(ordered):
        assert before["end"] <= after["start"], (before, after)


def _overlap(a: list[dict], b: list[dict]) -> bool:
    span = (min(r["start"] for r in a), max(r["end"] for r in a))
    return any(r["start"] < span[1] and r["end"] > span[0] for r in b)


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
    _write_suite(suite)
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
    assert len(runs) == 7 + 6 + 3 + 24
    containers = [r for r in runs if r["name"].startswith(("container", "mixed"))]
    servers = [r for r in runs if r["name"].startswith("server")]
    units = [r for r in runs if r["name"].startswith("unit")]
    _one_at_a_time(containers)  # the mixed module's server tests stay with its containers
    _one_at_a_time(servers)
    (engine_worker,) = {r["worker"] for r in containers}
    assert {r["worker"] for r in servers} != {engine_worker}, "servers not beside containers"
    assert _overlap(containers, servers), "the two engine scopes did not run at once"
    beside = [r for r in units if r["worker"] != engine_worker]
    assert beside, "no unit test ran in the other worker"
    assert _overlap(containers, beside), "not in parallel"
