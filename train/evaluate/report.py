"""Per-checkpoint figures from the ledger alone, so a resumed run reports the same bytes.

pass@1 is the share of scored attempts that solved the task (verifier score 1.0 and no
blocked call), with a 95% Wilson interval (see `stats`). Failed and unscorable attempts
are not counted as failures of the policy, but every planned attempt is accounted for:
planned = scored + failed + unscorable + missing (never run, e.g. its adapter would not
load or the run was stopped).
"""

from __future__ import annotations

import json
from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from train.evaluate.ledger import Attempt, AttemptKey
from train.evaluate.plan import BASE, EvalPlan
from train.evaluate.stats import newcombe_difference, wilson_interval

INTERVAL_METHOD = "wilson-95"
DIGITS = 6


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CheckpointRow(_Row):
    label: str
    model: str = Field(description="Served name: the adapter, or the base model.")
    planned: int
    scored: int
    failed: int
    unscorable: int
    missing: int
    solved: int
    pass_at_1: float | None = Field(description="solved / scored; None when nothing scored.")
    ci_low: float
    ci_high: float
    mean_score: float | None
    tool_calls_per_solved: float | None
    blocked_calls: int
    attempts_with_blocked: int
    delta_vs_base: float | None
    delta_ci_low: float | None
    delta_ci_high: float | None
    load_error: str | None = None
    solved_by_task: dict[str, list[int]] = Field(
        description="task id -> [solved, scored]: what difficulty labels are made of."
    )


class EvalReport(_Row):
    harness: str
    k: int
    tasks: int
    base_model: str
    runtime: str = "docker"
    """Where the attempts' harness trials ran (`--runtime`): `docker`, `harbor:docker`."""
    interval: str = INTERVAL_METHOD
    planned: int
    accounted: dict[str, int]
    checkpoints: list[CheckpointRow]

    def to_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"

    def row(self, label: str) -> CheckpointRow:
        return next(r for r in self.checkpoints if r.label == label)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _row(
    label: str, model: str, plan: EvalPlan, attempts: list[Attempt], load_error: str | None
) -> CheckpointRow:
    status = Counter(a.status for a in attempts)
    scored = [a for a in attempts if a.status == "scored"]
    solved = [a for a in scored if a.solved]
    low, high = wilson_interval(len(solved), len(scored))
    by_task: dict[str, list[int]] = {t.task_id: [0, 0] for t in plan.tasks}
    for a in scored:
        by_task[a.task_id][1] += 1
        by_task[a.task_id][0] += a.solved
    return CheckpointRow(
        label=label,
        model=model,
        planned=len(plan.tasks) * plan.k,
        scored=len(scored),
        failed=status["failed"],
        unscorable=status["unscorable"],
        missing=len(plan.tasks) * plan.k - len(attempts),
        solved=len(solved),
        pass_at_1=_round(len(solved) / len(scored)) if scored else None,
        ci_low=round(low, DIGITS),
        ci_high=round(high, DIGITS),
        mean_score=_round(sum(a.verifier_score or 0.0 for a in scored) / len(scored))
        if scored
        else None,
        tool_calls_per_solved=_round(sum(a.tool_calls for a in solved) / len(solved))
        if solved
        else None,
        blocked_calls=sum(a.blocked_calls for a in attempts),
        attempts_with_blocked=sum(1 for a in attempts if a.blocked_calls),
        delta_vs_base=None,
        delta_ci_low=None,
        delta_ci_high=None,
        load_error=load_error,
        solved_by_task=by_task,
    )


def build_report(
    plan: EvalPlan,
    attempts: dict[AttemptKey, Attempt],
    load_errors: dict[str, str] | None = None,
    runtime: str = "docker",
) -> EvalReport:
    """Only attempts the plan asks for count; the ledger may hold others (a larger k
    before, other tasks) and they are left out."""
    task_ids = {t.task_id for t in plan.tasks}
    grouped: dict[str, list[Attempt]] = {label: [] for label in plan.labels}
    for (label, task_id, index), attempt in sorted(attempts.items()):
        if label in grouped and task_id in task_ids and index < plan.k:
            grouped[label].append(attempt)
    models = {BASE: plan.base_model, **{c.label: c.adapter for c in plan.checkpoints}}
    errors = load_errors or {}
    rows = [
        _row(label, models[label], plan, grouped[label], errors.get(label)) for label in plan.labels
    ]
    base = rows[0] if plan.include_base else None
    if base is not None and base.scored:
        for row in rows[1:]:
            if not row.scored:
                continue
            low, high = newcombe_difference(row.solved, row.scored, base.solved, base.scored)
            row.delta_vs_base = round(row.solved / row.scored - base.solved / base.scored, DIGITS)
            row.delta_ci_low, row.delta_ci_high = round(low, DIGITS), round(high, DIGITS)
    accounted = {
        key: sum(getattr(r, key) for r in rows)
        for key in ("scored", "failed", "unscorable", "missing")
    }
    return EvalReport(
        runtime=runtime,
        harness=plan.harness,
        k=plan.k,
        tasks=len(plan.tasks),
        base_model=plan.base_model,
        planned=plan.total_attempts,
        accounted=accounted,
        checkpoints=rows,
    )
