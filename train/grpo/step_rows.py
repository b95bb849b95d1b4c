"""How a packed step's rows are arranged before TRL sees them, and the smoke runs'
stand-in for a group without reward variance.

TRL trains a fixed number of micro-batches per optimizer step and cannot forward an
empty one, so a step's rows are first spread over its micro-batches and any still empty
get a zero-advantage filler; the worker (train.grpo.worker) does both before pushing a step.
"""

from __future__ import annotations

from collections import Counter

from train.grpo.packing import StepPlan
from train.grpo.samples import (
    GroupSamples,
    _turn_problem,  # the same checks as a normal group's rows
    rollout_rows,
)
from train.rollout.contract import Group


def smoke_samples(group: Group, baseline: float) -> GroupSamples:
    """A zero-variance group's rows against a fixed baseline (smoke runs only, see
    TrainConfig.smoke_baseline); counted as `group.smoke-baseline`."""
    result = GroupSamples(group_id=group.group_id, task_id=group.task_id)
    skipped: Counter[str] = Counter({"group.smoke-baseline": 1})
    skipped["rollout.unscorable"] += len(group.rollouts) - len(group.scored)
    for rollout in group.scored:
        problem = _turn_problem(rollout)
        if problem is not None:
            skipped[problem] += 1
            continue
        advantage = rollout.reward - baseline
        result.advantages[rollout.request.session_id] = advantage
        result.rows.extend(rollout_rows(rollout, advantage, group))
    result.skipped = {code: n for code, n in skipped.items() if n}
    return result


def spread(plan: StepPlan) -> StepPlan:
    """Moves rows out of crowded micro-batches into empty ones (a row alone always fits),
    so a step has as many non-empty micro-batches as it can: TRL trains a fixed number of
    micro-batches per optimizer step, and an empty one cannot be forwarded."""
    batches = [list(batch) for batch in plan.micro_batches]
    while True:
        empty = [i for i, batch in enumerate(batches) if not batch]
        crowded = [i for i, batch in enumerate(batches) if len(batch) > 1]
        if not empty or not crowded:
            break
        source = max(crowded, key=lambda i: sum(row.tokens for row in batches[i]))
        smallest = min(range(len(batches[source])), key=lambda j: batches[source][j].tokens)
        batches[empty[0]].append(batches[source].pop(smallest))
    return plan.model_copy(update={"micro_batches": batches})


def fill(plan: StepPlan) -> StepPlan:
    """Gives every empty micro-batch a copy of the step's shortest row with advantage 0.
    TRL takes a fixed number of micro-batches per optimizer step; without the filler a
    short step would borrow the next step's rows and the boundaries would drift. A zero
    advantage adds nothing to the gradient."""
    rows = plan.rows
    if not rows or all(plan.micro_batches):
        return plan
    shortest = min(rows, key=lambda row: row.tokens)
    filler = shortest.model_copy(update={"advantage": 0.0})
    batches = [list(batch) if batch else [filler] for batch in plan.micro_batches]
    return plan.model_copy(update={"micro_batches": batches})
