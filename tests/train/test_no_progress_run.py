"""A real `python -m train --preset tiny-cpu` run on a task folder that every rollout
fails on (each task image fails to build) stops by itself, exit 1, within a minute of
its first failed rollout, and says why: the failures by reason (issue 22)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from tests.train.test_interrupt import _training
from train.data.failures import FAILURES, read_failures

FIRST_FAILURE_WAIT_S = 600  # the trainer's start (torch, TRL) on two CPU cores comes first
STOP_AFTER_FIRST_FAILURE_S = 60


def _broken_copy(demo_tasks: Path, root: Path) -> Path:
    """The demo's tasks, each with an image that cannot build: a reason that no retry
    cures, as a wrong task path or a missing harness would be."""
    broken = root / "broken-tasks"
    shutil.copytree(demo_tasks, broken)
    dockerfiles = sorted(broken.rglob("environment/Dockerfile"))
    assert len(dockerfiles) >= 3
    for dockerfile in dockerfiles:
        dockerfile.write_text(dockerfile.read_text() + "RUN exit 3\n")
    return broken


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.docker
def test_a_run_whose_every_rollout_fails_stops_within_a_minute_and_says_why(
    lora_server: tuple[str, Path], demo_tasks: Path, docker_ready: str, tmp_path: Path
) -> None:
    out, log = tmp_path / "run", tmp_path / "train.log"
    failures = out / "pi" / FAILURES
    # The train tests' shared server (`--server-url`): the run's own start is the demo's.
    broken = _broken_copy(demo_tasks, tmp_path)
    with _training(broken, out, log, "--server-url", lora_server[0]) as (process, _):
        deadline = time.monotonic() + FIRST_FAILURE_WAIT_S
        while not failures.exists() and process.poll() is None:
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.5)
        first_failure = time.monotonic()
        code = process.wait(timeout=STOP_AFTER_FIRST_FAILURE_S + 60)
        stopped_after = time.monotonic() - first_failure
    text = log.read_text()
    assert code == 1, text[-3000:]
    assert stopped_after < STOP_AFTER_FIRST_FAILURE_S, text[-3000:]
    summary = read_failures(failures)
    assert summary is not None and summary.stopped, text[-3000:]
    assert set(summary.counts) == {"task.image-build-failed"}
    assert summary.counts["task.image-build-failed"] >= 3
    assert "task.image-build-failed" in text and "no-progress" in text
