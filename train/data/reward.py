"""The scalar a rollout earns: the verifier's score, a small bonus for solving with few
model calls, and nothing at all when the guard had to block a call.

The bonus only applies to correct rollouts so that it can never lift a wrong answer
above a right one: the largest bonus (`efficiency_coef`) is paid on top of full marks,
and a rollout below full marks keeps exactly the verifier's score. A blocked call
zeroes the reward even for a correct rollout, because otherwise the policy would learn
that trying forbidden actions is free.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

_TOLERANCE = 1e-9
"""Verifier scores arrive as text (reward.txt); 0.9999999999 from float noise is 1."""


class RewardSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    efficiency_coef: float = Field(
        default=0.1, ge=0.0, le=1.0, description="Bonus paid at zero calls for a correct rollout."
    )
    call_cap: int = Field(
        default=15, ge=1, description="Calls at or past which the efficiency bonus is zero."
    )
    correct_threshold: float = Field(
        default=1.0, gt=0.0, le=1.0, description="Verifier score that counts as correct."
    )


class RolloutOutcome(BaseModel):
    """What the reward needs to know about one finished rollout."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    verifier_score: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    calls: int = Field(ge=0, description="Model calls the harness made in this rollout.")
    blocked_calls: int = Field(default=0, ge=0, description="Calls the guard refused.")


def is_correct(verifier_score: float, settings: RewardSettings) -> bool:
    return verifier_score >= settings.correct_threshold - _TOLERANCE


def compute_reward(outcome: RolloutOutcome, settings: RewardSettings | None = None) -> float:
    settings = settings or RewardSettings()
    if outcome.blocked_calls > 0:
        return 0.0
    score = outcome.verifier_score
    if not is_correct(score, settings):
        return score
    used = min(outcome.calls, settings.call_cap) / settings.call_cap
    return score + settings.efficiency_coef * (1.0 - used)


def reward(
    verifier_score: float,
    calls: int,
    blocked_calls: int = 0,
    settings: RewardSettings | None = None,
) -> float:
    """`compute_reward` for plain numbers; raises `ValueError` on a score outside [0, 1],
    NaN, or a negative count, so a broken verifier never turns into a training signal."""
    try:
        outcome = RolloutOutcome(
            verifier_score=verifier_score, calls=calls, blocked_calls=blocked_calls
        )
    except ValueError as exc:
        raise ValueError(f"invalid rollout outcome: {exc}") from exc
    return compute_reward(outcome, settings)
