"""Per-step training metrics: one JSON line per optimizer step, flushed as it is written,
so a crashed run leaves every finished step on disk and a resumed run knows where it
stopped; and a live table of the latest steps.

A run killed mid-write leaves at most one torn last line: reading skips it (and counts
it) instead of refusing the whole log, because every line before it is whole.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from train.grpo.packing import StepPlan
from train.rollout.contract import Group


class StepMetrics(BaseModel):
    model_config = ConfigDict(extra="forbid")

    step: int = Field(ge=0)
    harness: str
    adapter_version: int = Field(ge=0, description="Version trained by this step.")
    groups: int = Field(ge=0)
    rollouts: int = Field(ge=0, description="Rollouts in the step's groups, scored or not.")
    scored: int = Field(ge=0)
    reward_mean: float | None = Field(description="Over scored rollouts; None if none.")
    pass_rate: float | None = Field(description="Share of scored rollouts the verifier passed.")
    tool_calls_per_rollout: float | None
    blocked_calls: int = Field(ge=0)
    dropped_stale_groups: int = Field(ge=0, description="Since the previous step.")
    rows: int = Field(ge=0)
    tokens: int = Field(ge=0)
    budget_utilisation: float = Field(ge=0.0, le=1.0)
    wait_s: float = Field(ge=0.0, description="Waiting for finished groups.")
    compute_s: float = Field(ge=0.0, description="Forward, backward and optimizer.")
    skipped: dict[str, int] = Field(
        default_factory=dict,
        description="Reason code -> count since the previous step (train.grpo.samples, "
        "train.grpo.packing): what never became a row, and why.",
    )
    time: float = Field(default_factory=time.time, description="Unix time when logged.")

    @property
    def step_s(self) -> float:
        return self.wait_s + self.compute_s


def rollout_summary(groups: Iterable[Group], pass_threshold: float = 1.0) -> dict[str, Any]:
    """The rollout half of a step's metrics, from the groups it trained on."""
    groups = list(groups)
    rollouts = [r for g in groups for r in g.rollouts]
    scored = [r for r in rollouts if r.status == "scored"]

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    passed = [1.0 if (r.verifier_score or 0.0) >= pass_threshold - 1e-9 else 0.0 for r in scored]
    return {
        "groups": len(groups),
        "rollouts": len(rollouts),
        "scored": len(scored),
        "reward_mean": mean([r.reward for r in scored]),
        "pass_rate": mean(passed),
        "tool_calls_per_rollout": mean([float(r.tool_calls) for r in scored]),
        "blocked_calls": sum(r.blocked_calls for r in rollouts),
    }


def step_metrics(
    *,
    step: int,
    harness: str,
    adapter_version: int,
    groups: list[Group],
    plan: StepPlan,
    dropped_stale_groups: int,
    wait_s: float,
    compute_s: float,
    skipped: dict[str, int] | None = None,
) -> StepMetrics:
    """One step's metrics from what the trainer already holds: the groups packed into
    the step (`plan.group_ids`), the plan, and the step's two timers."""
    return StepMetrics(
        step=step,
        harness=harness,
        adapter_version=adapter_version,
        dropped_stale_groups=dropped_stale_groups,
        rows=len(plan.rows),
        tokens=plan.tokens,
        budget_utilisation=plan.utilisation,
        wait_s=wait_s,
        compute_s=compute_s,
        skipped={code: n for code, n in (skipped or {}).items() if n},
        **rollout_summary(groups),
    )


class MetricsLog:
    """Append-only JSONL log of `StepMetrics`."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def append(self, metrics: StepMetrics) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        line = metrics.model_dump_json() + "\n"
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def read(self) -> tuple[list[StepMetrics], int]:
        """Every whole step in the log and the number of lines skipped as unreadable."""
        if not self.path.exists():
            return [], 0
        steps: list[StepMetrics] = []
        bad = 0
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                steps.append(StepMetrics.model_validate(json.loads(line)))
            except (ValueError, ValidationError):
                bad += 1
        return steps, bad

    def last_step(self) -> int | None:
        """The last logged step, where a resumed run continues from; None for a new log."""
        steps, _ = self.read()
        return max((s.step for s in steps), default=None)
