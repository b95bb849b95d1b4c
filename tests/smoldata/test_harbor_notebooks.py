"""Harbor's own CLI judges the notebook tasks: `harbor lint` finds nothing, the oracle
agent scores 1.0 and the no-op agent 0.0 on every task mined from the samples.

As in tests/test_harbor_conformance.py, the run phase uses a copy whose only change is
`network_mode = "public"` (Harbor's no-network mode needs a sidecar image from a
registry, which an offline machine cannot pull); lint runs on the unmodified tasks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.emit import emit_all
from smoldataenvs import NotebookOptions, NotebookPipeline
from tests.conftest import needs_samples
from tests.smoldata.helpers import NOTEBOOKS
from tests.test_harbor_conformance import assert_oracle_1_nop_0, harbor

# tests/test_harbor_conformance.py scores one notebook task under Harbor in CI; this is every one.
pytestmark = [
    needs_samples,
    pytest.mark.harbor,
    pytest.mark.docker,
    pytest.mark.slow,
    pytest.mark.extended,
]
__all__ = ["harbor"]


def test_notebook_tasks_pass_harbor(harbor: str, docker_ready: str, tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    options = NotebookOptions(dataset=str(NOTEBOOKS), base_image=docker_ready, reproduce=False)
    emit_all(NotebookPipeline(options), out)
    tasks = find_task_dirs([out / "qa"])
    notebooks = {
        read_task_dir(t).config.metadata.model_extra["smoldataenvs"]["notebook"] for t in tasks
    }
    assert len(notebooks) >= 4  # the rest refuse with reasons (see test_notebook_miner)

    lint = subprocess.run(
        [harbor, "lint", "--json", *map(str, tasks)], capture_output=True, text=True, timeout=300
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert json.loads(lint.stdout) == []

    runnable = tmp_path / "runnable"
    shutil.copytree(out / "qa", runnable)
    for task_toml in runnable.glob("*/task.toml"):
        text = task_toml.read_text()
        assert 'network_mode = "no-network"' in text
        task_toml.write_text(text.replace('network_mode = "no-network"', 'network_mode = "public"'))

    names = {t.name for t in tasks}
    assert_oracle_1_nop_0(harbor, runnable, names, tmp_path / "jobs")
