"""Fixtures of the train tests: the demo's tasks, one tiny-cpu training run on them (shared
by the training and evaluation end-to-end tests), and a skewed synthetic set."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import DEMO_OUT
from tests.train.synthetic import Spec, skewed_specs, write_specs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def demo_tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `repo2rlenv examples DIR` (the demo's first step) writes."""
    out = tmp_path_factory.mktemp("demo") / "tasks"
    command = [str(Path(sys.executable).parent / "repo2rlenv"), "examples", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def mined_demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `make demo` mines (the bundled sessions and notebooks), without validation:
    enough tasks that the split holds one out."""
    if DEMO_OUT:
        return Path(DEMO_OUT).resolve()
    out = tmp_path_factory.mktemp("mined-demo") / "tasks_out"
    cli = str(Path(sys.executable).parent / "repo2rlenv")
    for dataset in ("repo2rlenv/examples/sessions", "smoldataenvs/examples"):
        command = [cli, "mine", "--dataset", str(REPO / dataset), "--out", str(out),
                   "--no-validate"]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="session")
def tiny_cpu_run(
    mined_demo: Path, docker_ready: str, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """`python -m train --tasks <demo> --preset tiny-cpu`: a real vLLM CPU server, the pi
    harness in task containers through the guard, the verifier and TRL for two steps.
    Runs once; its output folder is what the assertions read."""
    from train.cli import main

    if DEMO_OUT:
        out = Path(DEMO_OUT).resolve() / "train"
        assert (out / "pi" / "adapters").is_dir(), f"{out}: run `make train-demo` first"
        return out
    out = tmp_path_factory.mktemp("tiny-cpu") / "run"
    assert main(["--tasks", str(mined_demo), "--preset", "tiny-cpu", "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def skewed() -> list[Spec]:
    return skewed_specs()


@pytest.fixture(scope="session")
def skewed_root(tmp_path_factory: pytest.TempPathFactory, skewed: list[Spec]) -> Path:
    return write_specs(tmp_path_factory.mktemp("skewed"), skewed)
