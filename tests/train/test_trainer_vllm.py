"""The trainer against a real vLLM CPU server with LoRA on: real completions under the
versioned adapter names, two real TRL optimizer steps, adapters synced without a pause.

The runner here stands in for a harness only in where the reward comes from (the share
of even token ids in the completion, so groups have variance): the tokens, their
log-probabilities and the adapter that produced them are the server's own. Everything
between (scheduler, samples, packing, worker, TRL, peft, adapter sync) is the real code.
"""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import pytest
from safetensors.torch import load_file

from tests.tiny import build_adapter
from train.data.config import resolve_config
from train.grpo.metrics import MetricsLog
from train.rollout.contract import Rollout, RolloutRequest, Turn
from train.rollout.scheduler import Scheduler, SchedulerOptions, TaskRef
from train.serving.adapters import AdapterClient, AdapterError

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

REPO = Path(__file__).resolve().parents[2]
MAX_STALENESS = 1
PROBE = [5, 17, 42, 99, 7, 3, 250, 64, 11, 120]


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.load(response)


class CompletionRunner:
    """A rollout = one real chat completion from the adapter the request names."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.models: list[tuple[str, str]] = []

    def __call__(self, request: RolloutRequest) -> Rollout:
        began = time.time()
        data = _post(
            f"{self.base_url}/v1/chat/completions",
            {
                "model": request.adapter,
                "messages": [{"role": "user", "content": f"{request.task_id} #{request.attempt}"}],
                "max_tokens": 8,
                "temperature": 1.0,
                "top_p": 1.0,
                "top_k": 0,
                "seed": request.seed,
                "logprobs": True,
                "return_token_ids": True,
            },
        )
        choice = data["choices"][0]
        ids = choice["token_ids"]
        self.models.append((request.adapter, data["model"]))
        score = sum(1 for token in ids if token % 2 == 0) / len(ids)
        turn = Turn(
            prompt_token_ids=data["prompt_token_ids"],
            completion_token_ids=ids,
            completion_logprobs=[item["logprob"] for item in choice["logprobs"]["content"]],
            model=data["model"],
        )
        return Rollout(request=request, status="scored", verifier_score=score, reward=score,
                       turns=[turn], started_at=began, finished_at=time.time())  # fmt: skip


def _prompt_logprobs(base_url: str, model: str) -> list[float]:
    """The server's log-probabilities of a fixed token sequence under `model`."""
    data = _post(
        f"{base_url}/v1/completions",
        {"model": model, "prompt": PROBE, "max_tokens": 1, "prompt_logprobs": 0},
    )
    scored = data["choices"][0]["prompt_logprobs"][1:]
    return [entry[str(token)]["logprob"] for entry, token in zip(scored, PROBE[1:], strict=True)]


def test_two_steps_sync_versioned_adapters_that_really_serve(
    module_lora_server: tuple[str, Path], tmp_path: Path
) -> None:
    from train.grpo.trainer import HarnessTrainer
    from train.grpo.trl_compat import (
        grpo_config,
        lora_config,
        placeholder_dataset,
        to_rollout_sample,
    )
    from train.grpo.worker import RolloutWorker, WorkerSettings

    url, model = module_lora_server
    client = AdapterClient(url)
    config = resolve_config(preset="tiny-cpu", overrides=[("max_staleness", MAX_STALENESS)])
    assert config.steps == 2
    runner = CompletionRunner(url)
    tasks = [TaskRef(task_id=f"t{i}", task_dir=tmp_path) for i in range(3)]
    scheduler = Scheduler(runner, tasks, SchedulerOptions(
        harness="pi", sessions=2, rollouts_per_task=4, max_staleness=MAX_STALENESS))  # fmt: skip
    budget = 96  # two rows of a ~30-token prompt + 8 generated tokens per micro-batch
    worker = RolloutWorker(
        scheduler,
        WorkerSettings(micro_batches=2, token_budget=budget, max_staleness=MAX_STALENESS),
        to_rollout_sample,
    )
    out = tmp_path / "pi"
    args = grpo_config(config, output_dir=out / "trainer", server_url=url,
                       micro_batch_tokens=budget, save_steps=1, stale_after_s=600)  # fmt: skip
    trainer = HarnessTrainer(
        harness="pi", slots=client, adapters_dir=out / "adapters", rollout_worker=worker,
        metrics_log=MetricsLog(out / "metrics.jsonl"), model=str(model), args=args,
        train_dataset=placeholder_dataset(), peft_config=lora_config(config.lora),
    )  # fmt: skip
    trainer.train()

    assert trainer.state.global_step == 2
    # v1 is the untrained adapter published before the first step; each step adds one.
    assert trainer.model_version == 3
    folders = sorted(p.name for p in (out / "adapters").iterdir() if not p.name.startswith("."))
    assert folders == ["pi-policy-v1", "pi-policy-v2", "pi-policy-v3"]
    # Only the staleness window stays loaded, under versioned names.
    assert sorted(client.loaded()) == ["pi-policy-v2", "pi-policy-v3"]

    v1 = load_file(out / "adapters" / "pi-policy-v1" / "adapter_model.safetensors")
    v2 = load_file(out / "adapters" / "pi-policy-v2" / "adapter_model.safetensors")
    assert v1.keys() == v2.keys() and any("lora_B" in key for key in v1)
    assert any(not (v1[key] == v2[key]).all() for key in v1)
    config_json = json.loads(
        (out / "adapters" / "pi-policy-v2" / "adapter_config.json").read_text()
    )
    assert config_json["r"] == 32

    # Every request named a versioned adapter and the server answered with that adapter.
    assert runner.models and all(asked == answered for asked, answered in runner.models)
    assert {asked for asked, _ in runner.models} <= {"pi-policy-v1", "pi-policy-v2", "pi-policy-v3"}
    assert "pi-policy-v2" in {asked for asked, _ in runner.models}

    # The served adapters are the trained ones: v1 scores like the base model, v2 not.
    client.load("probe-v1", out / "adapters" / "pi-policy-v1")
    base = _prompt_logprobs(url, client.base_model())
    served_v1 = _prompt_logprobs(url, "probe-v1")
    served_v2 = _prompt_logprobs(url, "pi-policy-v2")
    assert served_v1 == pytest.approx(base, abs=1e-4)
    assert max(abs(a - b) for a, b in zip(served_v2, base, strict=True)) > 1e-4
    client.unload("probe-v1")

    steps, bad = MetricsLog(out / "metrics.jsonl").read()
    assert bad == 0 and [s.step for s in steps] == [1, 2]
    assert all(0.0 < s.budget_utilisation <= 1.0 and s.rows > 0 for s in steps)
    assert [s.adapter_version for s in steps] == [2, 3]
    state = json.loads((out / "trainer" / "checkpoint-2" / "rollout_state.json").read_text())
    assert state == {"model_version": 3, "harness": "pi"}

    # Resumed for one more step: the optimizer state comes back and the names go on
    # counting (v4 republishes the checkpoint's weights under a fresh name, v5 is new).
    scheduler = Scheduler(runner, tasks, SchedulerOptions(
        harness="pi", sessions=2, rollouts_per_task=4, max_staleness=MAX_STALENESS))  # fmt: skip
    worker = RolloutWorker(
        scheduler,
        WorkerSettings(micro_batches=2, token_budget=budget, max_staleness=MAX_STALENESS),
        to_rollout_sample,
    )
    args = grpo_config(config.model_copy(update={"steps": 3}), output_dir=out / "trainer",
                       server_url=url, micro_batch_tokens=budget, save_steps=1,
                       stale_after_s=600)  # fmt: skip
    resumed = HarnessTrainer(
        harness="pi", slots=client, adapters_dir=out / "adapters", rollout_worker=worker,
        metrics_log=MetricsLog(out / "metrics.jsonl"), model=str(model), args=args,
        train_dataset=placeholder_dataset(), peft_config=lora_config(config.lora),
    )  # fmt: skip
    resumed.train(resume_from_checkpoint=str(out / "trainer" / "checkpoint-2"))
    assert (resumed.state.global_step, resumed.model_version) == (3, 5)
    assert sorted(client.loaded()) == ["pi-policy-v4", "pi-policy-v5"]
    v3 = load_file(out / "adapters" / "pi-policy-v3" / "adapter_model.safetensors")
    v4 = load_file(out / "adapters" / "pi-policy-v4" / "adapter_model.safetensors")
    assert all((v3[key] == v4[key]).all() for key in v3)  # the checkpoint's weights
    steps, _ = MetricsLog(out / "metrics.jsonl").read()
    assert [s.step for s in steps] == [1, 2, 3]


def test_adapter_client_against_the_real_server(
    module_lora_server: tuple[str, Path], tmp_path: Path
) -> None:
    """Real vLLM's answers map onto the client's reason codes."""
    url, model = module_lora_server
    client = AdapterClient(url)
    folder = build_adapter(model, tmp_path / "adapter", random=False)
    client.load("probe-a", folder)
    assert "probe-a" in client.loaded()
    with pytest.raises(AdapterError) as info:
        client.load("probe-a", folder)
    assert info.value.code == "adapter.already-loaded"
    client.unload("probe-a")
    with pytest.raises(AdapterError) as info:
        client.unload("probe-a")
    assert info.value.code == "adapter.not-loaded"
    assert "probe-a" not in client.loaded()
