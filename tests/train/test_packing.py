"""Packing rows into steps: never over the budget, no row lost or duplicated, rows due
first and never later than their due step when the queue allows it, nothing stale
packed, groups split across steps instead of skipped, over-long rows skipped with a
reason."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from train.grpo.packing import PACK_REASONS, Packer, PackSettings, StepPlan, pack_first_come
from train.grpo.samples import GroupSamples
from train.rollout.contract import TrainingRow

_next_id = iter(range(10**9))


def make_group(group_id: int, sizes: list[int], versions: int | list[int] = 0) -> GroupSamples:
    """Rows whose first token is a unique id, so a row can be traced through packing."""
    if isinstance(versions, int):
        versions = [versions] * len(sizes)
    rows = [
        TrainingRow(
            input_ids=[next(_next_id)] + [0] * (size - 1),
            completion_mask=[0] * (size - 1) + [1],
            old_logprobs=[0.0] * size,
            advantage=0.5 + group_id,
            model_version=version,
            group_id=group_id,
            task_id=f"t{group_id}",
        )
        for size, version in zip(sizes, versions, strict=True)
    ]
    return GroupSamples(group_id=group_id, task_id=f"t{group_id}", rows=rows)


def key(row: TrainingRow) -> int:
    return row.input_ids[0]


def assert_due_rows_first(
    plan: StepPlan, queue: list[TrainingRow], due: dict[int, int], now: int, budget: int
) -> None:
    """A row due by step `now` may stay behind only if it fits in no micro-batch next to
    the due rows placed before it (earliest due first, then longest, then oldest): rows
    not yet due never take its room."""
    rank = {key(row): (due[row.group_id], -row.tokens, n) for n, row in enumerate(queue)}
    keys = {key(row) for row in plan.rows}
    for row in queue:
        if key(row) in keys or due[row.group_id] > now:
            continue
        for batch in plan.micro_batches:
            ahead = [
                r.tokens for r in batch if due[r.group_id] <= now and rank[key(r)] < rank[key(row)]
            ]
            assert sum(ahead) + row.tokens > budget, "a due row left where it would fit"


_group = st.lists(
    st.tuples(st.integers(min_value=1, max_value=130), st.integers(min_value=0, max_value=3)),
    min_size=1,
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(
    budget=st.integers(min_value=8, max_value=100),
    micro_batches=st.integers(min_value=1, max_value=4),
    lookahead=st.sampled_from([1.0, 1.5, 3.0]),
    max_wait=st.integers(min_value=0, max_value=3),
    max_staleness=st.integers(min_value=0, max_value=3),
    events=st.lists(st.tuples(_group, st.integers(0, 2), st.booleans()), min_size=1, max_size=14),
)
def test_packer_properties(
    budget: int,
    micro_batches: int,
    lookahead: float,
    max_wait: int,
    max_staleness: int,
    events: list[tuple[list[tuple[int, int]], int, bool]],
) -> None:
    """Groups arrive (rows of random lengths and adapter versions), the version moves on,
    and steps are taken with stale rows dropped first (as the worker does), in random
    order; checked against a model of the queue: groups first come first served, a
    group's rows longest first, each due `max_wait` steps after its group arrived."""
    config = PackSettings(micro_batches=micro_batches, token_budget=budget)
    packer = Packer(config, lookahead=lookahead, max_wait=max_wait)
    queue: list[TrainingRow] = []  # the model: queued rows, oldest first
    due: dict[int, int] = {}  # the model: group id -> due step
    sent: list[int] = []
    counts = {"over": 0, "stale": 0, "empty": 0}
    version = 0
    steps = 0

    def step(force: bool) -> bool:
        nonlocal steps
        gone = {key(r) for r in queue if version - r.model_version > max_staleness}
        groups = len({r.group_id for r in queue if key(r) in gone})
        assert packer.drop_stale(version, max_staleness) == groups
        counts["stale"] += len(gone)
        queue[:] = [r for r in queue if key(r) not in gone]
        if (plan := packer.next_step(force=force)) is None:
            assert not queue if force else packer.pending_tokens < lookahead * config.capacity
            return False
        assert len(plan.micro_batches) <= micro_batches and plan.capacity == config.capacity
        assert plan.tokens <= plan.capacity and 0 < plan.utilisation <= 1
        for batch in plan.micro_batches:
            assert sum(row.tokens for row in batch) <= budget
        keys = [key(row) for row in plan.rows]
        queued = [key(row) for row in queue]
        assert len(set(keys)) == len(keys) and set(keys) <= set(queued)  # no dup, no ghost
        assert_due_rows_first(plan, queue, due, steps, budget)
        assert packer.steps == steps + 1
        steps += 1
        assert all(version - row.model_version <= max_staleness for row in plan.rows)
        assert all(row.advantage == 0.5 + row.group_id for row in plan.rows)
        assert plan.group_ids == list(dict.fromkeys(r.group_id for r in queue if key(r) in keys))
        sent.extend(keys)
        queue[:] = [row for row in queue if key(row) not in set(keys)]
        return True

    for group_id, (rows, tries, bump) in enumerate(events):
        group = make_group(group_id, [n for n, _ in rows], [max(0, version - v) for _, v in rows])
        fits = [row for row in group.rows if row.tokens <= budget]
        counts["over"] += len(rows) - len(fits)
        counts["empty"] += not fits
        assert packer.add(group) == bool(fits)
        queue += sorted(fits, key=lambda row: -row.tokens)
        if fits:
            due[group_id] = steps + max_wait
            assert packer.due(group_id) == due[group_id]
        version += 2 * bump
        for _ in range(tries):
            if not step(force=False):
                break
        assert packer.pending_tokens == sum(row.tokens for row in queue)
    while step(force=True):
        pass
    assert queue == [] and packer.pending == [] and packer.pending_tokens == 0
    admitted = [r for rows, _, _ in events for r in rows if r[0] <= budget]
    assert len(sent) + counts["stale"] == len(admitted)
    assert packer.skipped["row.over-budget"] == counts["over"]
    assert packer.skipped["row.stale"] == counts["stale"]
    assert packer.skipped["group.empty"] == counts["empty"]
    assert set(packer.skipped) <= set(PACK_REASONS)


def test_a_group_larger_than_a_step_is_split_over_consecutive_steps() -> None:
    packer = Packer(PackSettings(micro_batches=2, token_budget=100), lookahead=1.0)
    assert packer.add(make_group(0, [90, 80, 95]))
    first = packer.next_step()
    assert first is not None and first.group_ids == [0]
    assert sorted(r.tokens for r in first.rows) == [90, 95]  # longest first
    assert packer.next_step() is None  # 80 tokens left: less than a step
    second = packer.next_step(force=True)
    assert second is not None and [r.tokens for r in second.rows] == [80]
    assert {r.advantage for r in first.rows + second.rows} == {0.5}  # the group's advantage
    assert "group.over-step" not in packer.skipped and "group.over-step" not in PACK_REASONS


def test_holes_get_filled_from_later_groups() -> None:
    config = PackSettings(micro_batches=2, token_budget=100)
    packer = Packer(config, lookahead=1.0)
    packer.add(make_group(0, [60, 60]))
    packer.add(make_group(1, [40, 90, 40]))
    plan = packer.next_step()
    assert plan is not None and plan.utilisation == 1.0 and plan.group_ids == [0, 1]
    assert sorted(sorted(r.tokens for r in batch) for batch in plan.micro_batches) == [
        [40, 60],
        [40, 60],
    ]
    assert [[r.tokens for r in g.rows] for g in packer.pending] == [[90]]
    whole = pack_first_come([make_group(0, [60, 60]), make_group(1, [40, 90, 40])], config)
    assert whole is not None and whole.group_ids == [0] and whole.utilisation == 0.6


def test_first_come_baseline_stays_under_budget() -> None:
    config = PackSettings(micro_batches=3, token_budget=50)
    plan = pack_first_come([make_group(0, [30, 30, 30]), make_group(1, [10, 45])], config)
    assert plan is not None
    assert all(sum(r.tokens for r in b) <= 50 for b in plan.micro_batches)
    assert plan.group_ids == [0]


def test_waits_for_a_full_step_unless_forced() -> None:
    packer = Packer(PackSettings(micro_batches=2, token_budget=100), lookahead=1.0)
    assert packer.add(make_group(0, [50, 50]))
    assert packer.next_step() is None
    assert packer.add(make_group(1, [50, 50]))
    plan = packer.next_step()
    assert plan is not None and sorted(plan.group_ids) == [0, 1] and plan.utilisation == 1.0
    assert packer.add(make_group(2, [10]))
    assert packer.next_step() is None
    forced = packer.next_step(force=True)
    assert forced is not None and forced.group_ids == [2]
    assert packer.next_step(force=True) is None


def test_a_step_is_ready_when_its_rows_need_enough_micro_batches() -> None:
    """204 tokens are far from 1.5 steps (300), but rows over half a micro-batch take one
    each: four of them fill `max_wait - 1` = 2 steps' micro-batches, so a step goes."""
    packer = Packer(PackSettings(micro_batches=2, token_budget=100), lookahead=1.5)
    packer.add(make_group(0, [51, 51, 51]))
    assert packer.next_step() is None  # 3 micro-batches' worth
    packer.add(make_group(1, [51]))
    plan = packer.next_step()
    assert plan is not None and plan.tokens == 102 and packer.pending_tokens == 102


def test_look_ahead_waits_for_more_than_a_step() -> None:
    packer = Packer(PackSettings(micro_batches=1, token_budget=100), lookahead=2.0)
    packer.add(make_group(0, [100]))
    assert packer.next_step() is None
    packer.add(make_group(1, [100]))
    plan = packer.next_step()
    assert plan is not None and plan.group_ids == [0]
    with pytest.raises(ValueError, match=r"packing\.bad-lookahead"):
        Packer(lookahead=0.5)


def test_oversized_rows_are_skipped_with_reasons() -> None:
    packer = Packer(PackSettings(micro_batches=2, token_budget=100))
    assert packer.add(make_group(0, [101, 40]))
    assert not packer.add(make_group(1, [101]))
    assert dict(packer.skipped) == {"row.over-budget": 2, "group.empty": 1}
    plan = packer.next_step(force=True)
    assert plan is not None and [r.tokens for r in plan.rows] == [40]


def test_stale_rows_are_dropped_by_their_own_version() -> None:
    packer = Packer(PackSettings(micro_batches=1, token_budget=100))
    packer.add(make_group(0, [10, 20], versions=[1, 5]))
    packer.add(make_group(1, [10], versions=5))
    packer.add(make_group(2, [30], versions=0))
    assert packer.drop_stale(version=6, max_staleness=4) == 2
    assert [(g.group_id, [r.tokens for r in g.rows]) for g in packer.pending] == [
        (0, [20]),
        (1, [10]),
    ]
    assert packer.skipped["row.stale"] == 2 and packer.pending_tokens == 30
    assert packer.drop_stale(version=6, max_staleness=4) == 0


def test_a_fuller_step_goes_before_the_oldest_row_until_that_row_is_due() -> None:
    packer = Packer(PackSettings(micro_batches=1, token_budget=100), lookahead=1.0, max_wait=1)
    packer.add(make_group(0, [50]))
    packer.add(make_group(1, [100]))
    plan = packer.next_step()  # nothing due yet: the full micro-batch goes first
    assert plan is not None and plan.group_ids == [1] and plan.tokens == 100
    packer.add(make_group(2, [60]))
    plan = packer.next_step()  # the 50 is due now: it goes, though 60 would fill more
    assert plan is not None and plan.group_ids == [0] and plan.tokens == 50
    assert packer.steps == 2 and packer.due(2) == 2


def lognormal_stream(groups: int, budget: int, seed: int) -> list[GroupSamples]:
    """Groups of 8 like the benchmark's real contexts, scaled to `budget`: median 55% of
    it, sigma 0.8, half the log variance shared within a group, capped at the budget."""
    rng = random.Random(seed)
    mu, sigma = math.log(0.555 * budget), 0.8
    out = []
    for group_id in range(groups):
        centre = rng.gauss(mu, sigma * math.sqrt(0.5))
        sizes = [
            max(1, min(budget, round(math.exp(rng.gauss(centre, sigma * math.sqrt(0.5))))))
            for _ in range(8)
        ]
        out.append(make_group(group_id, sizes))
    return out


@pytest.mark.parametrize("seed", [0, 1])
def test_a_steady_stream_keeps_every_row_within_its_due_step(seed: int) -> None:
    """Groups arriving one at a time, steps taken whenever one is ready (as the benchmark
    and the worker do): every row goes out once, within `max_wait` steps of its group's
    arrival, no micro-batch over the budget, and the steps well filled."""
    config = PackSettings(micro_batches=4, token_budget=400)
    packer = Packer(config)
    stream = lognormal_stream(120, config.token_budget, seed)
    arrived: dict[int, int] = {}
    went: dict[int, int] = {}
    plans: list[StepPlan] = []
    for group in stream:
        assert packer.add(group)
        arrived[group.group_id] = len(plans)
        while (plan := packer.next_step()) is not None:
            assert all(sum(r.tokens for r in b) <= config.token_budget for b in plan.micro_batches)
            for row in plan.rows:
                assert key(row) not in went
                went[key(row)] = len(plans)
                assert len(plans) - arrived[row.group_id] <= packer.max_wait
            plans.append(plan)
    regular = plans[:]  # then the rest, forced out however full
    while (plan := packer.next_step(force=True)) is not None:
        for row in plan.rows:
            assert key(row) not in went
            went[key(row)] = len(plans)
        plans.append(plan)
    assert sorted(went) == sorted(key(r) for g in stream for r in g.rows)
    assert sum(p.tokens for p in regular) / sum(p.capacity for p in regular) > 0.9
