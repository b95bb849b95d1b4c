"""Choosing a step's micro-batches from row lengths and due steps: the fullest subset
that fits, due rows first, rows sent early rather than late, short rows kept for the
long rows still queued, never over the budget."""

from __future__ import annotations

from itertools import combinations

from hypothesis import given, settings
from hypothesis import strategies as st

from train.grpo.packing_bins import best_subset, choose_bins, leftover_waste, on_time


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=40), max_size=10),
    hole=st.integers(min_value=-5, max_value=120),
)
def test_best_subset_is_the_fullest_that_fits(sizes: list[int], hole: int) -> None:
    picked = best_subset(sizes, hole)
    assert picked == sorted(set(picked)) and all(0 <= i < len(sizes) for i in picked)
    total = sum(sizes[i] for i in picked)
    best = max(
        (sum(c) for n in range(len(sizes) + 1) for c in combinations(sizes, n) if sum(c) <= hole),
        default=0,
    )
    assert total == (best if hole >= 0 else 0)


def test_rows_are_sent_early_when_leaving_them_would_make_them_late() -> None:
    """Nothing is due at step 0, and [100] alone is the fullest step, but it would leave
    two 60s due at step 1 that no single step can carry: one of them goes now."""
    assert choose_bins([100, 60, 60], [5, 1, 1], now=0, count=1, budget=100) == [[1]]
    assert choose_bins([100, 60, 60], [5, 2, 2], now=0, count=1, budget=100) == [[0]]


def test_on_time_and_leftover_waste() -> None:
    assert on_time([60, 60], [1, 1], [0, 1], step=1, count=1, budget=100) is False
    assert on_time([60, 60], [1, 2], [0, 1], step=1, count=1, budget=100) is True
    assert on_time([60, 60], [1, 1], [0, 1], step=1, count=2, budget=100) is True
    # best fit decreasing: [70, 30] [60, 20] [50]: 20 unused, the emptiest (50) not counted
    assert leftover_waste([30, 60, 70, 20, 50], [0, 1, 2, 3, 4], budget=100) == 20
    assert leftover_waste([30], [0], budget=100) == 0 and leftover_waste([], [], 100) == 0


def test_long_rows_get_the_short_rows_before_short_rows_pair_up() -> None:
    """30 + 40 + 30 fills this micro-batch as well as 70 + 30 does, but leaves 70 and 60
    that can share nothing; 70 + 30 leaves 60 + 40 and a 30."""
    bins = choose_bins([30, 40, 30, 70, 60], [9] * 5, now=0, count=1, budget=100)
    assert sorted(bins[0]) == [0, 3]


def test_a_step_may_be_less_full_when_what_it_leaves_packs_better() -> None:
    """55 + 10 + 35 fills this micro-batch, but leaves 70 and 40 (30 unused later);
    55 + 40 leaves 5 unused now and 70 + 10 with 35 (20 unused later)."""
    bins = choose_bins([70, 55, 10, 35, 40], [9] * 5, now=0, count=1, budget=100)
    assert sorted(bins[0]) == [1, 4]


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(min_value=1, max_value=120), st.integers(min_value=0, max_value=4)),
        max_size=14,
    ),
    now=st.integers(min_value=0, max_value=3),
    count=st.integers(min_value=1, max_value=4),
)
def test_choose_bins_properties(rows: list[tuple[int, int]], now: int, count: int) -> None:
    """Never over the budget, never a row twice or one longer than the budget, always
    something when anything fits, and due rows never crowded out by rows not yet due."""
    budget = 100
    sizes, dues = [n for n, _ in rows], [d for _, d in rows]
    bins = choose_bins(sizes, dues, now, count, budget)
    placed = [i for batch in bins for i in batch]
    assert len(bins) == count and len(placed) == len(set(placed))
    assert all(sum(sizes[i] for i in batch) <= budget for batch in bins)
    assert all(sizes[i] <= budget for i in placed)
    assert bool(placed) == any(n <= budget for n in sizes)
    rank = {i: (dues[i], -sizes[i], i) for i in range(len(sizes))}
    for i in range(len(sizes)):
        if i in placed or dues[i] > now or sizes[i] > budget:
            continue
        for batch in bins:
            ahead = sum(sizes[j] for j in batch if dues[j] <= now and rank[j] < rank[i])
            assert ahead + sizes[i] > budget
