"""Groups become GRPO rows: group-relative advantages (blocked calls earn a negative
one), no rows from unscorable rollouts or signal-free groups, one row per turn chain."""

from __future__ import annotations

import statistics

import pytest

from tests.train.rollout_fakes import chain_turns, group, request, rollout
from train.grpo.samples import (
    SKIP_REASONS,
    SampleSettings,
    build_samples,
    group_advantages,
    turn_chains,
)
from train.rollout.contract import Group, Turn


@pytest.mark.parametrize("scale", [True, False])
def test_advantages_are_reward_minus_mean_over_std(scale: bool) -> None:
    rewards = [1.1, 0.0, 0.25, 0.0, 1.05]
    got = group_advantages(rewards, SampleSettings(scale_by_std=scale))
    mean, std = statistics.fmean(rewards), statistics.pstdev(rewards)
    expected = [(r - mean) / (std if scale else 1.0) for r in rewards]
    assert got == pytest.approx(expected)


def test_blocked_call_earns_zero_reward_and_a_negative_advantage() -> None:
    samples_group = group([("scored", 1.0, 0), ("scored", 1.0, 1), ("scored", 1.0, 0)])
    blocked = samples_group.rollouts[1]
    assert blocked.reward == 0.0
    samples = build_samples(samples_group)
    advantages = samples.advantages
    assert advantages[blocked.request.session_id] < 0
    assert all(a > 0 for s, a in advantages.items() if s != blocked.request.session_id)
    rows = [r for r in samples.rows if r.advantage < 0]
    assert rows and all(r.advantage == advantages[blocked.request.session_id] for r in rows)


def test_zero_variance_group_yields_no_rows_and_is_counted() -> None:
    samples = build_samples(group([("scored", 1.0, 0)] * 4))
    assert samples.rows == [] and samples.skipped == {"group.zero-variance": 1}


def test_unscorable_rollouts_never_become_rows_nor_shift_the_baseline() -> None:
    outcomes = [("scored", 1.0, 0), ("unscorable", 0.0, 0), ("scored", 0.0, 0)]
    samples = build_samples(group(outcomes))
    scored = {r.request.session_id for r in group(outcomes).scored}
    assert set(samples.advantages) == scored
    assert sorted(samples.advantages.values()) == pytest.approx([-1.0, 1.0])
    assert samples.skipped == {"rollout.unscorable": 1}
    assert {r.advantage for r in samples.rows} == set(samples.advantages.values())


def test_group_with_one_scored_rollout_has_no_baseline() -> None:
    samples = build_samples(group([("scored", 1.0, 0), ("unscorable", 0.0, 0)]))
    assert samples.rows == []
    assert samples.skipped == {"rollout.unscorable": 1, "group.too-few-scored": 1}


def test_a_chain_of_turns_becomes_one_row_with_every_generated_span_masked() -> None:
    turns = chain_turns("pi-policy-v0", [(30, 6), (9, 3), (4, 7)])
    ((ids, mask, logprobs),) = turn_chains(turns)
    last = turns[-1]
    assert ids == last.prompt_token_ids + last.completion_token_ids
    generated = [t for turn in turns for t in turn.completion_token_ids]
    assert [t for t, m in zip(ids, mask, strict=True) if m] == generated
    expected = [lp for turn in turns for lp in turn.completion_logprobs]
    assert [lp for lp, m in zip(logprobs, mask, strict=True) if m] == expected
    assert all(lp == 0.0 for lp, m in zip(logprobs, mask, strict=True) if not m)


def test_a_rewritten_history_starts_a_new_row() -> None:
    first = chain_turns("m", [(10, 2), (3, 2)], start=0)
    rewritten = chain_turns("m", [(6, 4)], start=500)
    chains = turn_chains(first + rewritten)
    assert len(chains) == 2
    assert chains[1][0] == rewritten[0].prompt_token_ids + rewritten[0].completion_token_ids
    assert sum(chains[1][1]) == 4


def _with_turns(g: Group, index: int, turns: list[Turn]) -> Group:
    rollouts = list(g.rollouts)
    rollouts[index] = rollouts[index].model_copy(update={"turns": turns})
    return g.model_copy(update={"rollouts": rollouts})


def _turn(completion: list[int], logprobs: list[float], model: str = "pi-policy-v0") -> Turn:
    return Turn(prompt_token_ids=[1], completion_token_ids=completion,
                completion_logprobs=logprobs, model=model)  # fmt: skip


@pytest.mark.parametrize(
    ("turn", "reason"),
    [
        (_turn([2], [-0.1], model="pi-policy-v9"), "rollout.wrong-model"),
        (_turn([2, 3], [-0.1]), "turn.logprob-mismatch"),
        (_turn([], []), "turn.empty-completion"),
    ],
)
def test_bad_turns_skip_their_rollout_with_a_reason(turn: Turn, reason: str) -> None:
    g = _with_turns(group([("scored", 1.0, 0), ("scored", 0.0, 0), ("scored", 0.5, 0)]), 0, [turn])
    samples = build_samples(g)
    assert samples.skipped == {reason: 1} and reason in SKIP_REASONS
    assert len(samples.advantages) == 3
    sources = {r.input_ids[-1] for r in samples.rows}
    assert 2 not in sources and len(samples.rows) == 2


def test_rows_carry_version_group_and_task() -> None:
    g = group([("scored", 1.0, 0), ("scored", 0.0, 0)], group_id=7, version=3)
    samples = build_samples(g)
    assert len(samples.rows) == 2
    for row in samples.rows:
        assert (row.model_version, row.group_id, row.task_id) == (3, 7, "t0")
        assert len(row.input_ids) == len(row.completion_mask) == len(row.old_logprobs)
    assert samples.tokens == sum(len(r.input_ids) for r in samples.rows)


def test_rollout_without_turns_is_counted() -> None:
    g = group([("scored", 1.0, 0), ("scored", 0.0, 0), ("scored", 0.5, 0)])
    g = _with_turns(g, 2, [])
    assert build_samples(g).skipped == {"rollout.no-turns": 1}
    assert request().adapter == rollout(request()).turns[0].model


def test_a_non_finite_reward_is_left_out_of_the_baseline() -> None:
    g = group([("scored", 1.0, 0), ("scored", 0.0, 0), ("scored", 0.5, 0)])
    rollouts = list(g.rollouts)
    rollouts[2] = rollouts[2].model_copy(update={"reward": float("nan")})
    samples = build_samples(g.model_copy(update={"rollouts": rollouts}))
    assert samples.skipped == {"rollout.bad-reward": 1}
    assert sorted(samples.advantages.values()) == pytest.approx([-1.0, 1.0])
