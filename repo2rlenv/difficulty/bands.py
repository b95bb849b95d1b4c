"""Difficulty bands by solve rate: the share of scored attempts that solved the task.

| band     | solve rate r      | with k = 8 scored |
|----------|-------------------|-------------------|
| trivial  | r >= 0.9          | 8/8               |
| easy     | 0.6 <= r < 0.9    | 5-7/8             |
| medium   | 0.3 <= r < 0.6    | 3-4/8             |
| hard     | 0 < r < 0.3       | 1-2/8             |
| unsolved | r = 0             | 0/8               |

Why these cut-offs: GRPO learns from groups whose rollouts disagree, so the bands
separate the tasks a policy already masters (trivial: no signal), the ones it can
learn from (easy to hard, mixed outcomes) and the ones it never solves (unsolved: no
signal either, until a stronger model tries). With the default k = 8 each band is a
whole number of solves and trivial means every attempt passed. Failed or unscorable
attempts (infrastructure) do not count; a task with no scored attempt gets no label.
"""

from __future__ import annotations

from schemas import DifficultyBand

BANDS: tuple[tuple[DifficultyBand, float], ...] = (
    ("trivial", 0.9),
    ("easy", 0.6),
    ("medium", 0.3),
)
"""Lower bounds (inclusive) of the banded solve rates, hardest-first after these come
`hard` (any solve) and `unsolved` (none)."""
ORDER: tuple[DifficultyBand, ...] = ("trivial", "easy", "medium", "hard", "unsolved")


def band(solved: int, scored: int) -> DifficultyBand | None:
    """None when nothing was scored: no evidence, no label."""
    if scored < 0 or solved < 0 or solved > scored:
        raise ValueError(f"need 0 <= solved <= scored, got {solved} of {scored}")
    if scored == 0:
        return None
    if solved == 0:
        return "unsolved"
    rate = solved / scored
    for label, floor in BANDS:
        if rate >= floor:
            return label
    return "hard"
