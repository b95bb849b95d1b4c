"""Harbor's own CLI is the judge: tasks from our bundle writer lint clean and score 1.0
under its oracle agent and 0.0 under its no-op agent.

Harbor enforces `network_mode = "no-network"` on Docker through an egress sidecar
image it pulls from a registry; on an air-gapped machine that pull cannot succeed, so
the run phase uses a copy of each task whose only change is `network_mode = "public"`.
Lint runs on the unmodified tasks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [pytest.mark.harbor, pytest.mark.docker, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def harbor() -> str:
    candidate = os.environ.get("HARBOR_BIN") or str(REPO / ".venv-harbor" / "bin" / "harbor")
    if not Path(candidate).exists():
        pytest.fail(f"Harbor's CLI is not at {candidate}; `make harbor` installs it")
    return candidate


def harbor_run(harbor: str, tasks: Path, agent: str, jobs: Path) -> dict[str, float]:
    done = subprocess.run(
        [harbor, "run", "-p", str(tasks), "-a", agent, "-y", "-n", "4", "-o", str(jobs)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    rewards = {}
    for result in jobs.glob("*/*/result.json"):
        data = json.loads(result.read_text())
        assert data.get("exception_info") is None, data["exception_info"]
        rewards[data["task_name"].split("/", 1)[1]] = data["verifier_result"]["rewards"]["reward"]
    return rewards


def test_bundle_writer_output_passes_harbor(harbor, docker_ready, examples_dir, tmp_path):
    """The hand-made examples and every task mined from the bundled example sessions."""
    from repo2rlenv.cli import main
    from repo2rlenv.examples.session_formats import SESSIONS_DIR

    mined = tmp_path / "mined"
    assert (
        main(
            [
                "mine",
                "-q",
                "--no-validate",
                "--dataset",
                str(SESSIONS_DIR),
                "--out",
                str(mined),
                "--base-image",
                docker_ready,
            ]
        )
        == 0
    )
    for task in mined.glob("*/*/task.toml"):
        shutil.copytree(task.parent, examples_dir / task.parent.name)
    tasks = sorted(p for p in examples_dir.iterdir() if p.is_dir())
    assert len(tasks) == 10
    lint = subprocess.run(
        [harbor, "lint", "--json", *map(str, tasks)], capture_output=True, text=True, timeout=300
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert json.loads(lint.stdout) == []

    runnable = tmp_path / "runnable"
    shutil.copytree(examples_dir, runnable)
    for task_toml in runnable.glob("*/task.toml"):
        text = task_toml.read_text()
        assert 'network_mode = "no-network"' in text
        task_toml.write_text(text.replace('network_mode = "no-network"', 'network_mode = "public"'))

    names = {p.name for p in tasks}
    assert harbor_run(harbor, runnable, "oracle", tmp_path / "oracle") == dict.fromkeys(names, 1.0)
    assert harbor_run(harbor, runnable, "nop", tmp_path / "nop") == dict.fromkeys(names, 0.0)
