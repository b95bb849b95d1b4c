"""One harness's GRPO trainer: TRL's AsyncGRPOTrainer with its own adapter name and a
weight sync that never pauses the shared vLLM server.

TRL 1.16 names every adapter `trl-policy-v<N>` and wraps each sync in `/pause` and
`/resume` of the whole server, so several trainers on one server would overwrite each
other's adapters and stall each other's rollouts. Here a sync saves the adapter as a
plain peft folder, `<out>/<harness>/adapters/<harness>-policy-v<N>` (the checkpoints
evaluation reads), loads it under that name, and unloads this harness's versions that
fell out of the staleness window; nothing else on the server is touched. The server
then holds at most `max_staleness + 2` adapters per trainer (train.launch.plan's
ADAPTER_HEADROOM). Version numbers survive a resume: `rollout_state.json` in each
checkpoint records the live version, so a resumed run never republishes a name.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from torch.utils.data import IterableDataset
from transformers import PrinterCallback

from train.grpo.metrics import MetricsLog, StepMetrics
from train.grpo.trl_compat import (
    AsyncGRPOTrainer,
    DataCollatorForRollout,
    DataLoader,
    RolloutQueueDataset,
    TrainerCallback,
    TreeRow,
    save_lora_adapter,
    select_adapter_sync,
)
from train.grpo.worker import PLAN_LAST, PLAN_MICRO_BATCH, PLAN_STEP, RolloutWorker, step_metrics
from train.rollout.contract import AdapterSlots, adapter_name
from train.serving.adapters import AdapterError
from train.serving.capability import TrainerSetupError, require_adapter_sync, server_info

ROLLOUT_STATE = "rollout_state.json"


def adapter_version(name: str, harness: str) -> int | None:
    match = re.fullmatch(rf"{re.escape(harness)}-policy-v(\d+)", name)
    return int(match.group(1)) if match else None


def stale_adapters(loaded: list[str], harness: str, version: int, max_staleness: int) -> list[str]:
    """This harness's loaded versions older than the window `version - max_staleness ..
    version`; other harnesses' adapters and foreign names are never listed."""
    oldest_live = version - max_staleness
    stale = []
    for name in loaded:
        found = adapter_version(name, harness)
        if found is not None and found < oldest_live:
            stale.append(name)
    return sorted(stale, key=lambda n: adapter_version(n, harness) or 0)


def unload_stale(slots: AdapterSlots, harness: str, version: int, max_staleness: int) -> list[str]:
    """Unloads what `stale_adapters` lists; one already gone is no error."""
    stale = stale_adapters(slots.loaded(), harness, version, max_staleness)
    for name in stale:
        try:
            slots.unload(name)
        except AdapterError as exc:
            if exc.code != "adapter.not-loaded":
                raise
    return stale


class PlanBatcher(IterableDataset):
    """Micro-batches exactly as the worker packed them (one rank): samples accumulate in
    a TreeRow until the worker's `plan/last` mark or a new (step, micro-batch) key."""

    def __init__(self, source: Any) -> None:
        super().__init__()
        self.source = source
        self.wait_s = 0.0
        self.plans: list[int] = []

    def __iter__(self) -> Iterator[list[Any]]:
        row, key = TreeRow(), None
        samples = iter(self.source)
        while True:
            began = time.monotonic()
            sample = next(samples)
            self.wait_s += time.monotonic() - began
            metrics = dict(sample["metrics"])
            this = (metrics.pop(PLAN_STEP, -1.0), metrics.pop(PLAN_MICRO_BATCH, -1.0))
            last = metrics.pop(PLAN_LAST, 1.0) >= 1.0
            if row.samples and this != key:
                yield [row]
                row = TreeRow()
            key = this
            row.add({**sample, "metrics": metrics})
            if last:
                self.plans.append(int(this[0]))
                yield [row]
                row = TreeRow()

    def take(self) -> tuple[list[int], float]:
        plans, wait = sorted(set(self.plans)), self.wait_s
        self.plans, self.wait_s = [], 0.0
        return plans, wait


class HarnessTrainer(AsyncGRPOTrainer):
    """AsyncGRPOTrainer for one harness (see the module docstring)."""

    def __init__(
        self,
        *,
        harness: str,
        slots: AdapterSlots,
        adapters_dir: Path,
        rollout_worker: RolloutWorker,
        metrics_log: MetricsLog | None = None,
        on_step: Callable[[StepMetrics], None] | None = None,
        **kwargs: Any,
    ) -> None:
        # Set before TRL's __init__, which probes the server through _init_lora_sync.
        self.harness = harness
        self.slots = slots
        self.adapters_dir = Path(adapters_dir).resolve()
        self.metrics_log = metrics_log
        self.on_step = on_step
        self._plan_batcher: PlanBatcher | None = None
        super().__init__(rollout_worker=rollout_worker, **kwargs)
        self._lora_name = f"{harness}-policy"
        # Steps reach the console through the run's live view and metrics.jsonl; TRL's
        # full log dict is kept in each checkpoint's trainer_state.json.
        self.remove_callback(PrinterCallback)
        self.add_callback(_StepMetricsCallback(self))

    # -- adapter sync --------------------------------------------------------------
    def _init_lora_sync(self, model: Any) -> bool:
        """Adapter sync or nothing: TRL's fallback (merged weights over NCCL, server
        paused) would overwrite the base weights every other trainer serves from."""
        self.vllm_client.wait_for_server_ready()
        url = self.args.vllm_server_base_url
        # A server whose capability cannot be read is refused, never assumed able.
        info = server_info(self.vllm_client.get_server_info, url)
        require_adapter_sync(select_adapter_sync(info, model, self.args), url)
        return True

    def adapter_dir(self, version: int) -> Path:
        return self.adapters_dir / adapter_name(self.harness, version)

    def _sync_weight_lora(self, t0: float) -> tuple[float, float, float]:
        version = self.model_version + 1
        name = adapter_name(self.harness, version)
        folder = self.adapter_dir(version)
        folder.parent.mkdir(parents=True, exist_ok=True)
        model = self.accelerator.unwrap_model(self.model)
        t_pause = time.time()  # nothing is paused: only this trainer's names change
        self.accelerator.wait_for_everyone()
        t_barrier = time.time()
        save_lora_adapter(model, self.accelerator, self._adapter_name, str(folder))
        t_transfer = time.time()
        self.accelerator.wait_for_everyone()
        if self.accelerator.is_main_process:
            # Loaded before the version moves: the worker asks for the new name at once.
            self.slots.load(name, folder)
            self.unload_stale(version)
            self.model_version = version
            if self.rollout_worker:
                self.rollout_worker.update_model_version(version)
        return t_pause, t_barrier, t_transfer

    def unload_stale(self, version: int) -> list[str]:
        return unload_stale(self.slots, self.harness, version, self.args.max_staleness)

    # -- data ----------------------------------------------------------------------
    def get_train_dataloader(self) -> Any:
        """TRL's loader with the worker's micro-batches kept (one process); TRL's own
        token-budget batcher for several ranks."""
        if self.accelerator.num_processes != 1:
            return super().get_train_dataloader()
        dataset = RolloutQueueDataset(
            rollout_queue=self.rollout_queue,
            model_version_fn=lambda: self.model_version,
            check_health_fn=self.rollout_worker.check_health,
            stale_after_s=self.args.heartbeat_stale_after_s,
            metrics=self._metrics["train"],
            max_staleness=self.args.max_staleness,
            report_to=self.args.report_to,
        )
        self._rollout_dataset = dataset
        self._plan_batcher = PlanBatcher(dataset)
        collator = DataCollatorForRollout(
            self.processing_class.pad_token_id,
            1,
            groups_trained=self._trained_groups,
            metrics=self._metrics["train"],
            token_budget=max(self.args.token_budget or 0, 0),
        )
        loader = DataLoader(self._plan_batcher, batch_size=1, collate_fn=collator, num_workers=0)
        return self.accelerator.prepare(loader)

    # -- checkpoints ---------------------------------------------------------------
    def _save_checkpoint(self, model: Any, trial: Any) -> None:
        super()._save_checkpoint(model, trial)
        if self.accelerator.is_main_process:
            folder = (
                Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
            )
            folder.mkdir(parents=True, exist_ok=True)
            state = {"model_version": self.model_version, "harness": self.harness}
            (folder / ROLLOUT_STATE).write_text(json.dumps(state) + "\n")

    def _inner_training_loop(self, *args: Any, **kwargs: Any) -> Any:
        checkpoint = kwargs.get("resume_from_checkpoint")
        version = self.model_version
        if checkpoint is not None:
            version = read_rollout_state(Path(checkpoint), self.harness)
        if self.accelerator.is_main_process:
            # A server that already holds this harness's names (an earlier run) must
            # never get one of them again: vLLM keys its prefix cache on the name.
            held = [adapter_version(n, self.harness) for n in self.slots.loaded()]
            version = max([version, *(v for v in held if v is not None)])
        self.model_version = version
        if self.rollout_worker:
            self.rollout_worker.update_model_version(version)
        return super()._inner_training_loop(*args, **kwargs)


def read_rollout_state(checkpoint: Path, harness: str) -> int:
    """The adapter version live when `checkpoint` was saved; the next sync continues
    from it. A checkpoint of another harness is refused (its names would collide)."""
    path = checkpoint / ROLLOUT_STATE
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise TrainerSetupError(
            "trainer.bad-checkpoint", f"{path} is missing or unreadable: {exc}"
        ) from exc
    if state.get("harness") != harness:
        raise TrainerSetupError(
            "trainer.bad-checkpoint",
            f"{checkpoint} belongs to harness {state.get('harness')!r}, not {harness!r}",
        )
    version = state.get("model_version")
    if not isinstance(version, int) or version < 0:
        raise TrainerSetupError("trainer.bad-checkpoint", f"{path}: bad model_version {version!r}")
    return version


def latest_checkpoint(output_dir: Path) -> Path | None:
    found = [
        (int(p.name.split("-")[1]), p)
        for p in Path(output_dir).glob("checkpoint-*")
        if p.name.split("-")[1].isdigit() and (p / ROLLOUT_STATE).is_file()
    ]
    return max(found)[1] if found else None


class _StepMetricsCallback(TrainerCallback):
    """One StepMetrics line per optimizer step: the packed step's rollouts and budget
    (from the worker), its waiting and compute time (measured here)."""

    def __init__(self, trainer: HarnessTrainer) -> None:
        self.trainer = trainer
        self.last = time.monotonic()

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.last = time.monotonic()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        trainer = self.trainer
        now = time.monotonic()
        wall, self.last = now - self.last, now
        if trainer._plan_batcher is None or not trainer.accelerator.is_main_process:
            return
        plans, wait = trainer._plan_batcher.take()
        worker = trainer.rollout_worker
        summaries = [worker.summaries.pop(p) for p in plans if p in worker.summaries]
        metrics = step_metrics(
            state.global_step, trainer.harness, trainer.model_version, summaries, wait, wall - wait
        )
        if trainer.metrics_log is not None:
            trainer.metrics_log.append(metrics)
        if trainer.on_step is not None:
            trainer.on_step(metrics)
