"""`python -m train eval --runtime harbor:docker`: the pi harness's attempt runs in
Harbor's Docker environment (the derived environment: the task's plus the pi bundle),
reaching the real guard in front of a real vLLM CPU server through the harness
network, and the task's verifier scores it in a fresh environment of the task's own
definition. One task, one adapter, one attempt: the proof that the path holds, not a
measurement (the Docker runtime's eval is test_trainer_e2e's).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import docker
import pytest

from repo2rlenv.runtime.harbor_protocol import session_prefix
from repo2rlenv.runtime.harbor_runtime import default_python
from tests.tiny import build_adapter

pytestmark = [
    pytest.mark.slow,
    pytest.mark.docker,
    pytest.mark.vllm,
    pytest.mark.harbor,
    pytest.mark.skipif(
        not default_python().exists(), reason=f"Harbor's interpreter is not at {default_python()}"
    ),
]
TASK = "example-repair-median"


def _harbor_containers() -> list[str]:
    client = docker.from_env()
    found = client.containers.list(all=True, filters={"label": "com.docker.compose.project"})
    return [
        c.name for c in found if c.labels["com.docker.compose.project"].startswith(session_prefix())
    ]


@pytest.mark.timeout(1200)
def test_eval_runs_its_attempt_through_harbor_docker(
    lora_server: tuple[str, Path], demo_tasks: Path, docker_ready: str, tmp_path: Path
) -> None:
    from train.evaluate.cli import main

    url, model = lora_server  # the train tests' shared server: a server's start is the demo's
    build_adapter(model, tmp_path / "adapters" / "pi-policy-v1")
    tasks = tmp_path / "tasks"
    shutil.copytree(demo_tasks / TASK, tasks / TASK)
    out = tmp_path / "eval"
    argv = ["--tasks", str(tasks), "--checkpoints", str(tmp_path / "adapters"),
            "--server-url", url, "--harness", "pi", "-k", "1", "--no-base",
            "--slots", "1", "-j", "1", "--retries", "0", "--max-tokens", "48",
            "--runtime", "harbor:docker", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0

    data = json.loads((out / "eval.json").read_text())
    assert data["runtime"] == "harbor:docker"
    assert data["planned"] == 1 and data["accounted"]["scored"] == 1, data["accounted"]
    (attempt,) = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    assert attempt["status"] == "scored", attempt
    trials = list((out / "rollouts").glob("*/trial.json"))
    assert len(trials) == 1
    trial = json.loads(trials[0].read_text())
    assert trial["runtime"] == "harbor:docker"  # what ran it, not only what was asked
    # The verifier ran on the agent's work (a random model leaves the bug: FAIL, 0).
    assert trial["verifier_exit_code"] == 0 and trial["reward"] == 0.0
    assert trial["phase_s"]["agent"] > 0 and trial["phase_s"]["verifier"] > 0
    # Every model call went through the guard to the adapter.
    exchanges = [
        json.loads(line)
        for log in (out / "guard").rglob("exchanges.jsonl")
        for line in log.read_text().splitlines()
    ]
    assert exchanges and {e["upstream_model"] for e in exchanges} == {"eval-pi-policy-v1"}
    assert _harbor_containers() == []


@pytest.mark.extended  # the demo trains on Docker; the eval above covers the Harbor runtime
@pytest.mark.timeout(1800)
def test_tiny_cpu_training_rolls_out_through_harbor_docker(
    mined_demo: Path, docker_ready: str, tmp_path: Path
) -> None:
    """`python -m train --preset tiny-cpu --runtime harbor:docker`, cut to one optimizer
    step: the scheduler hands its rollouts to Harbor's Docker environment."""
    from train.cli import main
    from train.grpo.metrics import MetricsLog

    out = tmp_path / "run"
    argv = ["--tasks", str(mined_demo), "--preset", "tiny-cpu", "--set", "steps=1",
            "--set", "micro_batches_per_step=1",
            "--runtime", "harbor:docker", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    steps, bad = MetricsLog(out / "pi" / "metrics.jsonl").read()
    assert bad == 0 and [s.step for s in steps] == [1] and steps[0].scored > 0
    trials = [json.loads(t.read_text()) for t in (out / "pi" / "rollouts").glob("*/trial.json")]
    assert trials and {t["runtime"] for t in trials} == {"harbor:docker"}
    assert all("verifier_exit_code" in t for t in trials)
    split = json.loads((out / "split.json").read_text())
    assert {t["task_id"] for t in trials} <= set(split["train"])
    assert _harbor_containers() == []
