"""Confidence intervals for pass rates.

We use the Wilson score interval, not the exact Clopper-Pearson one: with the few
hundred attempts an evaluation has, Clopper-Pearson is conservative (its coverage is
often 97-99% for a nominal 95%, so real differences between checkpoints look
insignificant), while Wilson's coverage stays close to 95% on average over p, it never
collapses to a zero-width interval at 0 or n successes (as the textbook Wald interval
does), and it has a closed form with no dependency. Newcombe's method 10 combines two
Wilson intervals into one for the difference of two rates (checkpoint minus base).

Caveat: attempts are treated as independent draws of one rate. With k attempts on each
of T tasks the attempts of one task are correlated (tasks differ in difficulty), so for
large k the interval is narrower than the spread between task sets would be.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
"""Two-sided 95% standard normal quantile."""


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval for `successes` out of `n`; (0, 1) when n is 0."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got {successes} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def newcombe_difference(s1: int, n1: int, s2: int, n2: int, z: float = Z95) -> tuple[float, float]:
    """95% interval for p1 - p2 from two independent samples (Newcombe 1998, method 10)."""
    p1 = s1 / n1 if n1 else 0.0
    p2 = s2 / n2 if n2 else 0.0
    l1, u1 = wilson_interval(s1, n1, z)
    l2, u2 = wilson_interval(s2, n2, z)
    delta = p1 - p2
    low = delta - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = delta + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return max(-1.0, low), min(1.0, high)
