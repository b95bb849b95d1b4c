"""Fixtures of the train tests: the demo's example tasks and a skewed synthetic set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.train.synthetic import Spec, skewed_specs, write_specs


@pytest.fixture(scope="session")
def demo_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `repo2rlenv examples DIR` (the demo's first step) writes."""
    out = tmp_path_factory.mktemp("demo") / "tasks"
    command = [str(Path(sys.executable).parent / "repo2rlenv"), "examples", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def skewed() -> list[Spec]:
    return skewed_specs()


@pytest.fixture(scope="session")
def skewed_root(tmp_path_factory: pytest.TempPathFactory, skewed: list[Spec]) -> Path:
    return write_specs(tmp_path_factory.mktemp("skewed"), skewed)
