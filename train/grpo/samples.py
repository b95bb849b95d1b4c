"""A finished group becomes GRPO training rows: group-relative advantages, then one row
per chain of turns.

Advantages are computed over the group's *scored* rollouts only (unscorable ones never
become rows and never shift the baseline): reward minus the group mean, divided by the
group's standard deviation when `scale_by_std` is on. A group in which every scored
rollout earned the same reward carries no signal (every advantage is zero, so the policy
gradient is zero): it yields no rows and is counted, so it costs no token budget.

Rows: an agent session is a chain of model calls in which each prompt usually extends the
previous prompt plus its completion (the harness appends the tool result and asks
again). Such a chain becomes ONE row, the last prompt plus the last completion, with
the completion mask and old log-probabilities set on every generated span, so a rollout
costs its final context length once instead of once per turn. A turn whose prompt does
not extend the chain (the harness compacted or rewrote history) starts a new row.
"""

from __future__ import annotations

import math
from collections import Counter

from pydantic import BaseModel, ConfigDict, Field

from train.rollout.contract import Group, Rollout, TrainingRow, Turn

SKIP_REASONS = {
    "group.too-few-scored": "fewer than two scored rollouts: no group baseline",
    "group.zero-variance": "every scored rollout earned the same reward: no signal",
    "rollout.unscorable": "never trained on",
    "rollout.bad-reward": "a scored rollout whose reward is NaN or infinite; left out",
    "rollout.no-turns": "the guard recorded no model call",
    "rollout.wrong-model": "a turn was answered by another model than the requested adapter",
    "turn.logprob-mismatch": "completion ids and logprobs differ in length",
    "turn.empty-completion": "a turn generated nothing",
}


class SampleSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    scale_by_std: bool = Field(default=True, description="Divide by the group's std (GRPO).")
    min_scored: int = Field(default=2, ge=2, description="Scored rollouts a group needs.")
    epsilon: float = Field(default=1e-6, gt=0.0, description="Std below this is zero variance.")


class GroupSamples(BaseModel):
    """What one group yields: rows (empty when skipped) and why things were left out."""

    model_config = ConfigDict(extra="forbid")

    group_id: int
    task_id: str
    rows: list[TrainingRow] = Field(default_factory=list)
    advantages: dict[str, float] = Field(
        default_factory=dict, description="Per scored rollout, by session id."
    )
    skipped: dict[str, int] = Field(
        default_factory=dict, description="Reason code (SKIP_REASONS) -> count."
    )

    @property
    def tokens(self) -> int:
        return sum(row.tokens for row in self.rows)


def group_advantages(
    rewards: list[float], settings: SampleSettings | None = None
) -> list[float] | None:
    """Group-relative advantages in input order; None when the group has no signal."""
    settings = settings or SampleSettings()
    if len(rewards) < settings.min_scored:
        return None
    mean = sum(rewards) / len(rewards)
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / len(rewards))
    if std < settings.epsilon:
        return None
    scale = std if settings.scale_by_std else 1.0
    return [(r - mean) / scale for r in rewards]


def _extends(sequence: list[int], prompt: list[int]) -> bool:
    return len(prompt) >= len(sequence) and prompt[: len(sequence)] == sequence


def turn_chains(turns: list[Turn]) -> list[tuple[list[int], list[int], list[float]]]:
    """(input_ids, completion_mask, old_logprobs) per chain of turns that extend each other."""
    chains: list[tuple[list[int], list[int], list[float]]] = []
    ids: list[int] = []
    mask: list[int] = []
    logprobs: list[float] = []
    for turn in turns:
        prompt = turn.prompt_token_ids
        if ids and not _extends(ids, prompt):
            chains.append((ids, mask, logprobs))
            ids, mask, logprobs = [], [], []
        added = len(prompt) - len(ids)
        ids = list(prompt) + list(turn.completion_token_ids)
        mask = mask + [0] * added + [1] * len(turn.completion_token_ids)
        logprobs = logprobs + [0.0] * added + list(turn.completion_logprobs)
    if ids:
        chains.append((ids, mask, logprobs))
    return chains


def _turn_problem(rollout: Rollout) -> str | None:
    if not rollout.turns:
        return "rollout.no-turns"
    for turn in rollout.turns:
        if turn.model != rollout.request.adapter:
            return "rollout.wrong-model"
        if len(turn.completion_logprobs) != len(turn.completion_token_ids):
            return "turn.logprob-mismatch"
        if not turn.completion_token_ids:
            return "turn.empty-completion"
    return None


def rollout_rows(rollout: Rollout, advantage: float, group: Group) -> list[TrainingRow]:
    return [
        TrainingRow(
            input_ids=ids,
            completion_mask=mask,
            old_logprobs=logprobs,
            advantage=advantage,
            model_version=rollout.request.model_version,
            group_id=group.group_id,
            task_id=group.task_id,
        )
        for ids, mask, logprobs in turn_chains(rollout.turns)
    ]


def build_samples(group: Group, settings: SampleSettings | None = None) -> GroupSamples:
    settings = settings or SampleSettings()
    skipped: Counter[str] = Counter()
    result = GroupSamples(group_id=group.group_id, task_id=group.task_id)
    scored = [r for r in group.scored if math.isfinite(r.reward)]
    skipped["rollout.unscorable"] += len(group.rollouts) - len(group.scored)
    skipped["rollout.bad-reward"] += len(group.scored) - len(scored)
    advantages = group_advantages([r.reward for r in scored], settings)
    if advantages is None:
        reason = "group.too-few-scored" if len(scored) < settings.min_scored else None
        skipped[reason or "group.zero-variance"] += 1
        result.skipped = {code: n for code, n in skipped.items() if n}
        return result
    for rollout, advantage in zip(scored, advantages, strict=True):
        result.advantages[rollout.request.session_id] = advantage
        problem = _turn_problem(rollout)
        if problem is not None:
            skipped[problem] += 1
            continue
        result.rows.extend(rollout_rows(rollout, advantage, group))
    result.skipped = {code: n for code, n in skipped.items() if n}
    return result
