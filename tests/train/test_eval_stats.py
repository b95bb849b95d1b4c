"""The 95% intervals are right: coverage against a simulated binomial source.

The source is seeded; for each (n, p) the share of simulated intervals that contain the
true p must sit near 95%. The same check run on a deliberately wrong interval (z = 1,
a 68% interval) must fall outside the band, so the test can fail.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from train.evaluate.stats import Z95, newcombe_difference, wilson_interval

GRID_N = (10, 30, 100, 300)
GRID_P = (0.05, 0.2, 0.5, 0.8)
SIMULATIONS = 2000
Interval = Callable[[int, int], tuple[float, float]]


def _draw(rng: random.Random, n: int, p: float) -> int:
    return sum(rng.random() < p for _ in range(n))


def _coverage(interval: Interval, n: int, p: float, seed: int) -> float:
    rng = random.Random(seed)
    hits = 0
    for _ in range(SIMULATIONS):
        low, high = interval(_draw(rng, n, p), n)
        hits += low <= p <= high
    return hits / SIMULATIONS


def _grid(interval: Interval) -> list[float]:
    return [
        _coverage(interval, n, p, seed=1000 * i + j)
        for i, n in enumerate(GRID_N)
        for j, p in enumerate(GRID_P)
    ]


def _within_band(coverages: list[float]) -> bool:
    """Mean coverage within 1.5 points of 95%; no grid point below 89% (Wilson's known
    dip at n·p near 0.5 sits around 90%)."""
    mean = sum(coverages) / len(coverages)
    return 0.935 <= mean <= 0.965 and min(coverages) >= 0.89


def test_wilson_interval_covers_95_percent_of_simulated_rates() -> None:
    assert _within_band(_grid(wilson_interval))


def test_a_wrong_interval_fails_the_coverage_check() -> None:
    assert not _within_band(_grid(lambda s, n: wilson_interval(s, n, z=1.0)))


def test_newcombe_difference_covers_95_percent() -> None:
    rng = random.Random(7)
    coverages = []
    for n1, n2, p1, p2 in ((40, 40, 0.3, 0.5), (100, 60, 0.6, 0.6), (200, 200, 0.1, 0.25)):
        hits = 0
        for _ in range(SIMULATIONS):
            low, high = newcombe_difference(_draw(rng, n1, p1), n1, _draw(rng, n2, p2), n2)
            hits += low <= p1 - p2 <= high
        coverages.append(hits / SIMULATIONS)
    assert 0.93 <= sum(coverages) / len(coverages) <= 0.97, coverages


def test_wilson_known_values_and_edges() -> None:
    # Wilson's formula by hand for 8 of 10: centre (0.8 + z²/20) / (1 + z²/10).
    z2 = Z95 * Z95
    centre = (0.8 + z2 / 20) / (1 + z2 / 10)
    half = Z95 / (1 + z2 / 10) * (0.8 * 0.2 / 10 + z2 / 400) ** 0.5
    assert wilson_interval(8, 10) == pytest.approx((centre - half, centre + half))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2  # never zero width at the edge
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and 0.8 < low < 0.9
    with pytest.raises(ValueError):
        wilson_interval(5, 4)
