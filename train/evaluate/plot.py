"""The evaluation as a picture: pass@1 with its 95% interval per checkpoint against the
base model, and tool calls per solved task. Drawn on a bare `Figure` (Agg, no pyplot),
like `train.launch.plot`, so it works headless and leaves global backends alone."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from train.evaluate.plan import BASE
from train.evaluate.report import EvalReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

CHECKPOINT_COLOR, BASE_COLOR, CALLS_COLOR = "#4C72B0", "#8C8C8C", "#55A868"


def render_chart(report: EvalReport) -> Figure:
    from matplotlib.figure import Figure

    rows = report.checkpoints
    labels = [r.label for r in rows]
    positions = list(range(len(rows)))
    fig = Figure(figsize=(max(8.0, 1.1 * len(rows) + 4), 4.6), dpi=110, layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=(3, 2))
    for x, row in zip(positions, rows, strict=True):
        if row.pass_at_1 is None:
            left.annotate("no scored\nattempt", (x, 0.02), ha="center", fontsize=8)
            continue
        color = BASE_COLOR if row.label == BASE else CHECKPOINT_COLOR
        left.bar(x, row.pass_at_1, color=color)
        left.errorbar(
            x,
            row.pass_at_1,
            yerr=[[row.pass_at_1 - row.ci_low], [row.ci_high - row.pass_at_1]],
            color="black",
            capsize=4,
        )
        note = f"{row.solved}/{row.scored}"
        if row.delta_vs_base is not None:
            note += f"\n{row.delta_vs_base:+.0%}"
        left.annotate(note, (x, row.ci_high), ha="center", va="bottom", fontsize=8)
    base = rows[0] if rows and rows[0].label == BASE else None
    if base is not None and base.pass_at_1 is not None:
        left.axhline(base.pass_at_1, color=BASE_COLOR, linestyle="--", linewidth=1, label="base")
        left.legend(loc="upper left")
    left.set_xticks(positions, labels, rotation=30, ha="right")
    left.set_ylim(0, 1.15)
    left.set_ylabel("pass@1 (95% Wilson interval)")
    left.set_title(f"pass@1 on {report.tasks} tasks × k={report.k} ({report.harness})")

    calls = [r.tool_calls_per_solved or 0.0 for r in rows]
    right.bar(positions, calls, color=CALLS_COLOR)
    for x, row in zip(positions, rows, strict=True):
        if row.blocked_calls:
            right.annotate(
                f"{row.blocked_calls} blocked", (x, calls[x]), ha="center", va="bottom", fontsize=8
            )
    right.set_xticks(positions, labels, rotation=30, ha="right")
    right.set_ylim(0, max(calls, default=0.0) * 1.2 or 1.0)
    right.set_ylabel("tool calls per solved task")
    right.set_title("tool calls (blocked calls noted)")
    accounted = report.accounted
    fig.suptitle(
        f"{report.planned} attempts: {accounted['scored']} scored, {accounted['failed']} "
        f"failed, {accounted['unscorable']} unscorable, {accounted['missing']} missing",
        fontweight="bold",
    )
    return fig


def write_chart(report: EvalReport, path: Path) -> Path:
    """Raises ImportError when matplotlib is absent; the caller reports and goes on."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    render_chart(report).savefig(staging, format="png", metadata={"Software": None})
    os.replace(staging, path)
    return path
