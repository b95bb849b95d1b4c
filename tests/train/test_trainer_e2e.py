"""`python -m train --preset tiny-cpu` end to end: a real vLLM CPU server with the tiny
model, the pi harness in task containers through the guard, the verifier, and TRL for
two optimizer steps. The rollouts are gibberish at this size; the bytes are real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors.torch import load_file

from train.cli import main
from train.metrics import MetricsLog

pytestmark = [pytest.mark.slow, pytest.mark.vllm, pytest.mark.docker]


def test_tiny_cpu_run_trains_two_steps_through_the_harness(
    demo_tasks: Path, tmp_path: Path, docker_ready: str
) -> None:
    out = tmp_path / "run"
    assert main(["--tasks", str(demo_tasks), "--preset", "tiny-cpu", "--out", str(out)]) == 0

    steps, bad = MetricsLog(out / "pi" / "metrics.jsonl").read()
    assert bad == 0 and [s.step for s in steps] == [1, 2]
    assert all(s.scored > 0 and s.rows > 0 for s in steps)
    adapters = out / "pi" / "adapters"
    assert sorted(p.name for p in adapters.iterdir() if not p.name.startswith(".")) == [
        "pi-policy-v1", "pi-policy-v2", "pi-policy-v3",
    ]  # fmt: skip
    v1 = load_file(adapters / "pi-policy-v1" / "adapter_model.safetensors")
    v2 = load_file(adapters / "pi-policy-v2" / "adapter_model.safetensors")
    assert any(not (v1[key] == v2[key]).all() for key in v1)

    # Every model call went through the guard to a versioned adapter, and the
    # verifier scored the rollouts (their trial records hold its result).
    models = set()
    for log in (out / "guard").glob("*/exchanges.jsonl"):
        for line in log.read_text().splitlines():
            exchange = json.loads(line)
            models.add(exchange["upstream_model"])
            assert exchange["prompt_token_ids"] and exchange["completion_token_ids"]
    assert models and models <= {"pi-policy-v1", "pi-policy-v2", "pi-policy-v3"}
    trials = list((out / "pi" / "rollouts").glob("*/trial.json"))
    assert trials and all("verifier_exit_code" in json.loads(t.read_text()) for t in trials)
