"""TRL's rollout worker for one harness: finished groups in, packed training samples out.

TRL's `AsyncGRPOTrainer` drains `rollout_buffer`; this worker fills it from a
`GroupSource` (the scheduler) on a background thread: each group becomes rows with
group-relative advantages (`train.grpo.samples`), the rows wait in a `Packer` until a step's
worth is there (`train.grpo.packing`), and a step goes out micro-batch by micro-batch. Every
sample carries its step and micro-batch in `metrics` (`plan/step`, `plan/micro_batch`,
`plan/last`), which the trainer's batcher reads to keep those boundaries, so one
optimizer step trains exactly one packed step.

A step is also pushed before it is full when the trainer has nothing left to train on:
a starving trainer costs more than a partly filled step. Nothing a group contains can
stop the thread (bad rows are counted and skipped); anything else that does is
re-raised by `check_health`, which TRL calls while it waits.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from train.grpo.metrics import StepMetrics, rollout_summary
from train.grpo.packing import MAX_WAIT, Packer, PackSettings, StepPlan
from train.grpo.samples import SampleSettings, build_samples
from train.grpo.step_rows import fill, smoke_samples, spread
from train.rollout.contract import Group, GroupSource, TrainingRow

PLAN_STEP, PLAN_MICRO_BATCH, PLAN_LAST = "plan/step", "plan/micro_batch", "plan/last"


class WorkerSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    micro_batches: int = Field(default=4, ge=1)
    token_budget: int = Field(default=16384, ge=1, description="Tokens per micro-batch.")
    max_staleness: int = Field(default=4, ge=0)
    poll_s: float = Field(default=0.5, gt=0.0, description="How often the thread wakes.")
    starve_s: float = Field(
        default=2.0,
        ge=0.0,
        description="How long the trainer's queue stays empty before a partly filled step "
        "is pushed rather than waiting for a full one.",
    )
    samples: SampleSettings = Field(default_factory=SampleSettings)
    smoke_baseline: float | None = Field(
        default=None, description="TrainConfig.smoke_baseline: smoke runs only."
    )


class WorkerError(RuntimeError):
    """`code`: worker.died (the thread raised), worker.stopped, worker.stalled."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class StepSummary(BaseModel):
    """What the worker knows about one packed step, for the trainer's per-step metrics."""

    model_config = ConfigDict(extra="forbid")

    plan: int
    groups: list[Group]
    rows: int
    tokens: int
    capacity: int
    dropped_stale_groups: int

    @property
    def budget_utilisation(self) -> float:
        return min(1.0, self.tokens / self.capacity)


def step_metrics(
    step: int,
    harness: str,
    version: int,
    summaries: list[StepSummary],
    wait_s: float,
    compute_s: float,
) -> StepMetrics:
    """One optimizer step's metrics line from the packed step(s) it trained on."""
    tokens = sum(s.tokens for s in summaries)
    capacity = sum(s.capacity for s in summaries)
    return StepMetrics(
        step=step,
        harness=harness,
        adapter_version=version,
        **rollout_summary([g for s in summaries for g in s.groups]),
        dropped_stale_groups=sum(s.dropped_stale_groups for s in summaries),
        rows=sum(s.rows for s in summaries),
        tokens=tokens,
        budget_utilisation=min(1.0, tokens / capacity) if capacity else 0.0,
        wait_s=max(0.0, wait_s),
        compute_s=max(0.0, compute_s),
    )


class RolloutWorker:
    """Implements TRL's `RolloutWorkerProtocol` over a `GroupSource`."""

    def __init__(
        self,
        source: GroupSource,
        settings: WorkerSettings,
        convert: Callable[[TrainingRow, dict[str, float]], Any],
    ) -> None:
        self.source = source
        self.settings = settings
        self.convert = convert
        self.rollout_buffer: queue.Queue[Any] = queue.Queue()
        self.metrics_queue: queue.Queue[dict[str, Any]] = queue.Queue()
        self.skipped: Counter[str] = Counter()
        self.summaries: dict[int, StepSummary] = {}
        self._packer = Packer(  # a row waiting past max_staleness would only be dropped
            PackSettings(micro_batches=settings.micro_batches, token_budget=settings.token_budget),
            max_wait=min(MAX_WAIT, settings.max_staleness),
        )
        self._groups: dict[int, Group] = {}
        self._version = 0
        self._plans = 0
        self._dropped_since_step = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None
        self._last_push = time.monotonic()
        self._last_rows = 0
        self._empty_since: float | None = None
        self._lock = threading.Lock()

    # -- RolloutWorkerProtocol -----------------------------------------------------
    def start(self) -> None:
        if self._thread is not None:
            return
        self._last_push = time.monotonic()
        self.source.start()
        self._thread = threading.Thread(target=self._run, name="rollout-worker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
        self.source.stop()

    def update_model_version(self, model_version: int) -> None:
        with self._lock:
            self._version = model_version
        self.source.set_version(model_version)

    def check_health(self, stale_after_s: float) -> None:
        if self._error is not None:
            raise WorkerError(
                "worker.died", f"{type(self._error).__name__}: {self._error}"
            ) from self._error
        if self._thread is None or (not self._thread.is_alive() and not self._stop.is_set()):
            raise WorkerError("worker.stopped", "the rollout worker thread is not running")
        idle = time.monotonic() - self._last_push
        if idle > stale_after_s:
            skipped = ", ".join(f"{k}: {n}" for k, n in sorted(self.skipped.items())) or "none"
            raise WorkerError(
                "worker.stalled",
                f"no training sample in {idle:.0f}s (limit {stale_after_s:.0f}s); "
                f"groups waiting {len(self._packer.pending)}, skipped so far: {skipped}",
            )

    # -- the thread --------------------------------------------------------------------
    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                group = self.source.next_group(timeout=self.settings.poll_s)
                if group is not None:
                    self.take(group)
                self.flush(*self._demand())
        except BaseException as exc:  # re-raised in the trainer by check_health
            self._error = exc

    def take(self, group: Group) -> None:
        samples = build_samples(group, self.settings.samples)
        baseline = self.settings.smoke_baseline
        if baseline is not None and samples.skipped.get("group.zero-variance"):
            samples = smoke_samples(group, baseline)
        self.skipped.update(samples.skipped)
        if samples.rows and self._packer.add(samples):
            self._groups[group.group_id] = group
        self.skipped.update(self._packer.skipped)
        self._packer.skipped.clear()

    def _demand(self) -> tuple[bool, bool]:
        """(room, starving): room while less than one step waits in the trainer's queue,
        so samples are never queued far ahead of the policy that will train on them;
        starving once the queue has been empty for `starve_s`."""
        queued = self.rollout_buffer.qsize()
        now = time.monotonic()
        if queued:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = now
        starving = self._empty_since is not None and now - self._empty_since >= (
            self.settings.starve_s
        )
        return queued < max(1, self._last_rows), starving

    def flush(self, room: bool = True, starving: bool = False) -> StepSummary | None:
        """Push one step if a full one is ready and there is room, or any step if the
        trainer is starving; drop groups gone stale first."""
        self._dropped_since_step += self._packer.drop_stale(
            self.version, self.settings.max_staleness
        )
        if not room and not starving:
            return None
        plan = self._packer.next_step(force=starving)
        if plan is None:
            return None
        return self._push(plan, fill(spread(plan)))

    def _push(self, plan: StepPlan, packed: StepPlan) -> StepSummary:
        """`plan` as packed (what the metrics report), `packed` as trained (filled)."""
        index = self._plans
        self._plans += 1
        groups = [self._groups.pop(g) for g in plan.group_ids if g in self._groups]
        summary = StepSummary(
            plan=index,
            groups=groups,
            rows=len(plan.rows),
            tokens=plan.tokens,
            capacity=plan.capacity,
            dropped_stale_groups=self._dropped_since_step,
        )
        self._dropped_since_step = 0
        self.summaries[index] = summary
        batches = [batch for batch in packed.micro_batches if batch]
        for number, batch in enumerate(batches):
            for position, row in enumerate(batch):
                marks = {
                    PLAN_STEP: float(index),
                    PLAN_MICRO_BATCH: float(number),
                    PLAN_LAST: float(position == len(batch) - 1),
                }
                try:
                    sample = self.convert(row, marks)
                except ValueError as exc:
                    self.skipped[getattr(exc, "code", "sample.invalid")] += 1
                    continue
                self.rollout_buffer.put(sample)
        self._last_push = time.monotonic()
        self._last_rows = len(packed.rows)
        self._empty_since = None
        self.metrics_queue.put(
            {
                "plan/budget_utilisation": summary.budget_utilisation,
                "plan/groups": float(len(summary.groups)),
                "plan/dropped_stale_groups_total": float(summary.dropped_stale_groups),
            }
        )
        return summary
