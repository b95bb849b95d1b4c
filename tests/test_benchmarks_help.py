"""Every benchmark script still starts. Benchmarks are run by hand, not by the suite, so a
renamed module broke `swe_mine_bench.py` silently (it imported `repo2rlenv.pipeline` long
after that became `repo2rlenv.emit`). `--help` imports everything a script imports and
parses its arguments without doing any work, so it is a cheap guard against that."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((REPO / "benchmarks").glob("*.py"))


def test_benchmarks_are_found() -> None:
    assert len(SCRIPTS) >= 10, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_help_runs(script: Path, tmp_path: Path) -> None:
    # Run from elsewhere with only this checkout on the path, as the docs promise a
    # benchmark runs (`python benchmarks/NAME.py` from anywhere); the checkout, not an
    # installed copy of the package, is what must import.
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(script), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    if 'if __name__ == "__main__":' in script.read_text():
        assert done.stdout.startswith("usage:"), done.stdout[:500]
