"""Three peft adapters of the tiny model evaluated through one real vLLM CPU server
(the train tests' shared one).

`test_adapters_are_served_in_waves_by_name` drives the evaluator with a runner that
really calls the server under each adapter's name (no harness): it proves the waves,
the routing (vLLM answers as the adapter, and each adapter's greedy output differs from
the base model's, so its weights are applied) and the accounting. `python -m train eval`
with the real pi harness on checkpoints of a real GRPO run is in test_trainer_e2e.py.
"""

from __future__ import annotations

import json
import shutil
import threading
import urllib.request
from pathlib import Path

import pytest

from tests.tiny import build_adapter
from train.evaluate import Evaluator, Ledger, build_report, find_checkpoints
from train.evaluate.plan import BASE, EvalPlan, EvalTask
from train.rollout.contract import Rollout, RolloutRequest

SLOTS = 2


@pytest.fixture(scope="module")
def tiny_with_adapters(
    module_lora_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """Three adapters of the shared server's model, at seeds 1 to 3."""
    _, model = module_lora_server
    adapters = tmp_path_factory.mktemp("eval-vllm") / "run" / "pi" / "adapters"
    for seed in (1, 2, 3):
        build_adapter(model, adapters / f"pi-policy-v{seed}", seed=seed, alpha=32)
    return model, adapters


def _models(base_url: str) -> list[str]:
    with urllib.request.urlopen(f"{base_url}/v1/models", timeout=30) as response:
        return [card["id"] for card in json.loads(response.read())["data"]]


class ChatRunner:
    """A rollout = one greedy chat completion under the request's model name. The task
    is "answer with an even first token"; the score comes from the server's answer."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.answers: dict[tuple[str, str, int], list[int]] = {}
        self.served_as: list[tuple[str, str]] = []
        self.adapters_seen: list[list[str]] = []
        self.lock = threading.Lock()

    def __call__(self, request: RolloutRequest) -> Rollout:
        body = {
            "model": request.adapter,
            "messages": [{"role": "user", "content": f"Task {request.task_id}: go."}],
            "max_tokens": 6,
            "temperature": 0.0,
            "return_token_ids": True,
        }
        call = urllib.request.Request(
            f"{self.base_url}/v1/chat/completions",
            data=json.dumps(body).encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(call, timeout=120) as response:
            data = json.loads(response.read())
        tokens = data["choices"][0].get("token_ids") or []
        with self.lock:
            self.answers[(request.adapter, request.task_id, request.attempt)] = tokens
            self.served_as.append((request.adapter, data["model"]))
            self.adapters_seen.append([m for m in _models(self.base_url) if m != "tiny"])
        solved = bool(tokens) and tokens[0] % 2 == 0
        return Rollout(
            request=request, status="scored", verifier_score=1.0 if solved else 0.0, tool_calls=1
        )


@pytest.mark.slow
@pytest.mark.vllm
def test_adapters_are_served_in_waves_by_name(
    module_lora_server: tuple[str, Path], tiny_with_adapters: tuple[Path, Path], tmp_path: Path
) -> None:
    from train.serving.adapters import AdapterClient

    _, adapters = tiny_with_adapters
    plan = EvalPlan(
        harness="pi",
        k=2,
        base_model="tiny",
        checkpoints=find_checkpoints([adapters]),
        tasks=[EvalTask(task_id=f"t{i}", task_dir=tmp_path) for i in range(3)],
        slots=SLOTS,
    )
    url, _ = module_lora_server
    runner = ChatRunner(url)
    ledger = Ledger(tmp_path / "ledger.jsonl")
    slots = AdapterClient(url)
    summary = Evaluator(slots, lambda _m: runner, plan, ledger, jobs=2).run()

    assert summary.waves == [["pi-policy-v1", "pi-policy-v2"], ["pi-policy-v3"]]
    assert all(len(seen) <= SLOTS for seen in runner.adapters_seen)
    assert slots.loaded() == []  # every wave unloaded
    assert all(asked == answered for asked, answered in runner.served_as)
    base = {(t, a): ids for (m, t, a), ids in runner.answers.items() if m == "tiny"}
    for checkpoint in plan.checkpoints:
        mine = {(t, a): ids for (m, t, a), ids in runner.answers.items()
                if m == checkpoint.adapter}  # fmt: skip
        assert len(mine) == len(plan.tasks) * plan.k
        assert mine != base, f"{checkpoint.label} answered like the base model"

    report = build_report(plan, ledger.load())
    assert sum(report.accounted.values()) == plan.total_attempts == report.accounted["scored"]
    for row in report.checkpoints:
        model = "tiny" if row.label == BASE else f"eval-{row.label}"
        solved = sum(1 for (m, _, _), ids in runner.answers.items()
                     if m == model and ids and ids[0] % 2 == 0)  # fmt: skip
        assert (row.solved, row.scored) == (solved, len(plan.tasks) * plan.k)


@pytest.mark.slow
@pytest.mark.vllm
@pytest.mark.docker
def test_difficulty_from_real_attempts(
    module_lora_server: tuple[str, Path], demo_tasks: Path, docker_ready: str, tmp_path: Path
) -> None:
    from repo2rlenv.cli import main
    from repo2rlenv.difficulty import band, read_difficulty

    held_out = tmp_path / "tasks"
    shutil.copytree(demo_tasks / "example-qa-config", held_out / "example-qa-config")
    endpoint = f"{module_lora_server[0]}/v1"
    argv = ["difficulty", str(held_out), "--model", endpoint, "--model-name", "tiny",
            "-k", "2", "--harness", "pi", "--max-tokens", "48",
            "--work-dir", str(tmp_path / "work")]  # fmt: skip
    assert main(argv) == 0
    label = read_difficulty(held_out / "example-qa-config")
    ledgers = list((tmp_path / "work").glob("*.jsonl"))
    assert len(ledgers) == 1 and len(ledgers[0].read_text().splitlines()) == 2
    assert label is not None, ledgers[0].read_text()  # at least one attempt scored
    assert (label.source, label.k, label.model) == ("solve-rate", 2, endpoint)
    assert label.scored is not None and label.solved is not None and label.scored >= 1
    assert label.label == band(label.solved, label.scored)
