from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from train.data.reward import RewardSettings, RolloutOutcome, compute_reward, reward

# (verifier score, model calls, blocked calls, expected reward) under the defaults:
# bonus 0.1 * (1 - min(calls, 15) / 15) on top of a full score, nothing otherwise.
DEFAULT_CASES = [
    (1.0, 0, 0, 1.1),
    (1.0, 3, 0, 1.08),
    (1.0, 5, 0, 1.0 + 0.1 * (10 / 15)),
    (1.0, 15, 0, 1.0),
    (1.0, 40, 0, 1.0),
    (0.9999999999, 0, 0, 1.0999999999),
    (0.99, 0, 0, 0.99),
    (0.5, 1, 0, 0.5),
    (0.0, 0, 0, 0.0),
    (0.0, 99, 0, 0.0),
    (1.0, 0, 1, 0.0),
    (1.0, 15, 2, 0.0),
    (0.6, 4, 1, 0.0),
]


@pytest.mark.parametrize(("score", "calls", "blocked", "expected"), DEFAULT_CASES)
def test_default_reward_table(score: float, calls: int, blocked: int, expected: float) -> None:
    assert reward(score, calls, blocked) == pytest.approx(expected, abs=1e-12)


CUSTOM = RewardSettings(efficiency_coef=0.2, call_cap=10, correct_threshold=0.8)
CUSTOM_CASES = [
    (0.8, 0, 0, 1.0),
    (0.8, 5, 0, 0.9),
    (0.9, 10, 0, 0.9),
    (1.0, 2, 0, 1.16),
    (0.79, 0, 0, 0.79),
    (0.95, 0, 1, 0.0),
]


@pytest.mark.parametrize(("score", "calls", "blocked", "expected"), CUSTOM_CASES)
def test_settings_change_coefficient_cap_and_threshold(
    score: float, calls: int, blocked: int, expected: float
) -> None:
    assert reward(score, calls, blocked, CUSTOM) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("score", "calls", "blocked"),
    [(1.5, 0, 0), (-0.1, 0, 0), (math.nan, 0, 0), (math.inf, 0, 0), (1.0, -1, 0), (1.0, 0, -1)],
)
def test_invalid_outcomes_are_refused(score: float, calls: int, blocked: int) -> None:
    with pytest.raises(ValueError):
        reward(score, calls, blocked)


@pytest.mark.parametrize(
    "bad",
    [{"call_cap": 0}, {"efficiency_coef": -0.1}, {"correct_threshold": 0.0}, {"cap": 3}],
)
def test_invalid_settings_are_refused(bad: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        RewardSettings.model_validate(bad)


@given(
    wrong=st.floats(min_value=0.0, max_value=0.999),
    wrong_calls=st.integers(min_value=0, max_value=100),
    right_calls=st.integers(min_value=0, max_value=100),
)
def test_a_wrong_rollout_never_beats_a_right_one(
    wrong: float, wrong_calls: int, right_calls: int
) -> None:
    assert reward(wrong, wrong_calls) < reward(1.0, right_calls)


@given(calls=st.integers(min_value=0, max_value=60))
def test_fewer_calls_never_earn_less(calls: int) -> None:
    outcome = RolloutOutcome(verifier_score=1.0, calls=calls)
    fewer = RolloutOutcome(verifier_score=1.0, calls=max(0, calls - 1))
    assert compute_reward(fewer) >= compute_reward(outcome)
    assert 1.0 <= compute_reward(outcome) <= 1.1
