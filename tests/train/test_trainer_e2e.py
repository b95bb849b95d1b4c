"""`python -m train --preset tiny-cpu` end to end on the demo's mined tasks, then
`python -m train eval` of that run's checkpoints on the split's held-out tasks.

The run: a real vLLM CPU server with the tiny model, the pi harness in task containers
through the guard, the verifier, and TRL for two optimizer steps. The rollouts are
gibberish at this size; the bytes are real. The evaluation starts its own vLLM server
from the run's model folder and serves the three saved adapter versions in waves.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from safetensors.torch import load_file

from tests.conftest import DEMO_OUT
from train.evaluate.plan import BASE
from train.grpo.metrics import MetricsLog

pytestmark = [pytest.mark.slow, pytest.mark.vllm, pytest.mark.docker]
VERSIONS = ["pi-policy-v1", "pi-policy-v2", "pi-policy-v3"]


def _exchanges(root: Path) -> list[dict[str, object]]:
    return [
        json.loads(line)
        for log in root.rglob("exchanges.jsonl")
        for line in log.read_text().splitlines()
    ]


def test_tiny_cpu_run_trains_two_steps_through_the_harness(tiny_cpu_run: Path) -> None:
    out = tiny_cpu_run
    steps, bad = MetricsLog(out / "pi" / "metrics.jsonl").read()
    assert bad == 0 and [s.step for s in steps] == [1, 2]
    assert all(s.scored > 0 and s.rows > 0 for s in steps)
    adapters = out / "pi" / "adapters"
    assert sorted(p.name for p in adapters.iterdir() if not p.name.startswith(".")) == VERSIONS
    v1 = load_file(adapters / "pi-policy-v1" / "adapter_model.safetensors")
    v2 = load_file(adapters / "pi-policy-v2" / "adapter_model.safetensors")
    assert any(not (v1[key] == v2[key]).all() for key in v1)

    # Every model call went through the guard to a versioned adapter, and the
    # verifier scored the rollouts (their trial records hold its result).
    exchanges = _exchanges(out / "guard")
    assert exchanges
    assert all(e["prompt_token_ids"] and e["completion_token_ids"] for e in exchanges)
    assert {e["upstream_model"] for e in exchanges} <= set(VERSIONS)
    trials = list((out / "pi" / "rollouts").glob("*/trial.json"))
    assert trials and all("verifier_exit_code" in json.loads(t.read_text()) for t in trials)

    # Training saw only the split's train side.
    split = json.loads((out / "split.json").read_text())
    trained = {json.loads(t.read_text())["task_id"] for t in trials}
    assert split["heldout"] and trained and trained <= set(split["train"])


def test_eval_of_the_runs_checkpoints_on_the_held_out_tasks(
    tiny_cpu_run: Path, mined_demo: Path, tmp_path: Path
) -> None:
    """Under CI, `make eval-demo` (k=2) ran it on the demo's run: its output is checked,
    and the resume runs on a copy of it."""
    from train.evaluate.cli import main

    heldout = json.loads((tiny_cpu_run / "split.json").read_text())["heldout"]
    out = tmp_path / "eval"
    k = 2 if DEMO_OUT else 1
    argv = ["--tasks", str(mined_demo), "--split", str(tiny_cpu_run / "split.json"),
            "--checkpoints", str(tiny_cpu_run / "pi" / "adapters"),
            "--base-model", str(tiny_cpu_run / "model"), "--harness", "pi", "-k", str(k),
            "--slots", "2", "-j", "2", "--retries", "0", "--max-tokens", "48",
            "--out", str(out)]  # fmt: skip
    if DEMO_OUT:
        shutil.copytree(Path(DEMO_OUT).resolve() / "eval", out)
    else:
        assert main(argv) == 0
    data = json.loads((out / "eval.json").read_text())
    assert data["tasks"] == len(heldout) and data["planned"] == 4 * k * len(heldout)
    assert sum(data["accounted"].values()) == data["planned"] and data["accounted"]["missing"] == 0
    assert [r["label"] for r in data["checkpoints"]] == [BASE, *VERSIONS]
    attempts = [json.loads(line) for line in (out / "ledger.jsonl").read_text().splitlines()]
    assert sorted((a["checkpoint"], a["task_id"]) for a in attempts) == sorted(
        (label, task) for label in [BASE, *VERSIONS] for task in heldout for _ in range(k)
    )
    # Each checkpoint's requests reached the server under its own adapter name.
    served = {e.get("upstream_model") for e in _exchanges(out / "guard")}
    assert {f"eval-{v}" for v in VERSIONS} <= served, sorted(map(str, served))
    # A rerun resumes: nothing left to run (so no server starts), same report bytes.
    before = (out / "eval.json").read_bytes()
    server_log = (out / "vllm.log").stat().st_mtime_ns
    assert main(argv) == 0
    assert (out / "eval.json").read_bytes() == before
    assert (out / "vllm.log").stat().st_mtime_ns == server_log
