"""The imbalance as a picture: counts by kind on each side, the kind mix before and
after the sampling weights, and counts by difficulty label (heuristic guesses hatched).

Drawn on a bare `Figure` (Agg canvas, no pyplot), so it works headless and never touches
a global backend another library in the process might rely on.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from train.data.imbalance import ImbalanceReport

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TRAIN_COLOR, HELDOUT_COLOR, WEIGHTED_COLOR = "#4C72B0", "#DD8452", "#55A868"


def _kinds(report: ImbalanceReport) -> list[str]:
    kinds = report.marginals["kind"]
    return sorted(kinds, key=lambda k: (-kinds[k].total, k))


def render_chart(report: ImbalanceReport) -> Figure:
    """Left: stacked train / held-out counts per kind, labelled with each kind's share.
    Right: each kind's share of train as mined vs as sampled, against the uniform line."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    kinds = _kinds(report)
    counts = report.marginals["kind"]
    fig = Figure(figsize=(15, 4.6), dpi=110, layout="constrained")
    left, right, third = fig.subplots(1, 3, width_ratios=(4, 4, 3))
    positions = list(range(len(kinds)))
    train = [counts[k].train for k in kinds]
    heldout = [counts[k].heldout for k in kinds]
    left.bar(positions, train, color=TRAIN_COLOR, label="train")
    left.bar(positions, heldout, bottom=train, color=HELDOUT_COLOR, label="held out")
    for x, kind in zip(positions, kinds, strict=True):
        left.annotate(
            f"{report.share(counts[kind].total):.0%}",
            (x, counts[kind].total),
            ha="center",
            va="bottom",
            fontsize=9,
        )
    left.set_xticks(positions, kinds)
    left.set_ylim(0, max((counts[k].total for k in kinds), default=1) * 1.15)
    left.yaxis.set_major_locator(MaxNLocator(integer=True))
    left.set_ylabel("tasks")
    left.set_title(f"{report.total} tasks by kind ({report.heldout} held out)")
    left.legend()

    train_total = report.train or 1
    mined = [counts[k].train / train_total for k in kinds]
    sampled = [report.expected_mix.get(k, 0.0) for k in kinds]
    width = 0.4
    right.bar([x - width / 2 for x in positions], mined, width, color=TRAIN_COLOR, label="mined")
    right.bar(
        [x + width / 2 for x in positions],
        sampled,
        width,
        color=WEIGHTED_COLOR,
        label="sampled (rebalanced)" if report.rebalance else "sampled (no rebalancing)",
    )
    present = [k for k in kinds if counts[k].train]
    if present:
        right.axhline(1 / len(present), color="grey", linestyle="--", linewidth=1, label="uniform")
    right.set_xticks(positions, kinds)
    right.set_ylim(0, 1)
    right.set_ylabel("share of train draws")
    right.set_title("kind mix seen by the trainer")
    right.legend()

    _difficulty_panel(third, report)

    title = "task imbalance"
    if report.dominant_kind is not None and report.dominates:
        title += (
            f": '{report.dominant_kind}' dominates with {report.dominant_share:.0%} of all tasks"
        )
    elif report.dominant_kind is not None:
        title += f": no kind dominates (largest {report.dominant_share:.0%})"
    fig.suptitle(title, fontweight="bold")
    return fig


def _difficulty_panel(axes: Axes, report: ImbalanceReport) -> None:
    """Bars per difficulty label: measured (solve rate or declared) solid, heuristic
    hatched, so a guessed label never passes for a measured one."""
    from matplotlib.ticker import MaxNLocator

    rows = report.difficulty_labels()
    positions = list(range(len(rows)))
    measured = [r.measured for r in rows]
    heuristic = [r.heuristic for r in rows]
    unlabelled = [r.total - r.measured - r.heuristic for r in rows]
    axes.bar(positions, measured, color=TRAIN_COLOR, label="measured")
    axes.bar(positions, heuristic, bottom=measured, color="white", edgecolor=TRAIN_COLOR,
             hatch="//", label="heuristic")  # fmt: skip
    bottoms = [m + h for m, h in zip(measured, heuristic, strict=True)]
    axes.bar(positions, unlabelled, bottom=bottoms, color="#CCCCCC", label="no label")
    axes.set_xticks(positions, [r.label for r in rows], rotation=20)
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylabel("tasks")
    axes.set_title("tasks by difficulty")
    axes.legend()


def write_chart(report: ImbalanceReport, path: Path) -> Path:
    """Raises ImportError when matplotlib is absent; the caller reports and goes on."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig = render_chart(report)
    staging = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    fig.savefig(staging, format="png", metadata={"Software": None})
    os.replace(staging, path)
    return path
