"""How lopsided the task set is, and the sampling weights that even out its kinds.

The public recipe's set was 94% build tasks with no qa at all, so a policy trained on it
mostly learned to build. The report counts every task by source group, kind, difficulty
and source format on each side of the split, warns when one kind dominates or a kind
is missing, and recommends per-task sampling weights under which every kind present in
train is drawn equally often. The trainer uses them unless rebalancing is turned off.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from schemas.provenance import TaskKind
from train.data.split import Split

KNOWN_KINDS: tuple[TaskKind, ...] = ("repair", "build", "extend", "qa")
DIFFICULTY_ORDER = ("trivial", "easy", "medium", "hard", "unsolved")
"""`repo2rlenv difficulty` bands, easiest first; other values follow by name."""
HEURISTIC_SUFFIX = " (heuristic)"
"""How `train.data.tasks` marks a difficulty guessed from the task's shape."""
DIMENSIONS = ("source_group", "kind", "difficulty", "source_format")
SKEWED_WEIGHT_RATIO = 20.0
"""Weight ratio between kinds past which rebalancing repeats a few tasks a lot."""


class ImbalanceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dominance_threshold: float = Field(
        default=0.5, gt=0.0, le=1.0, description="Share of all tasks past which a kind dominates."
    )
    rebalance: bool = Field(
        default=True, description="Sample train tasks with weights that equalise kinds."
    )


@dataclass
class Count:
    train: int = 0
    heldout: int = 0

    @property
    def total(self) -> int:
        return self.train + self.heldout


@dataclass
class DifficultyCount(Count):
    label: str = ""
    measured: int = 0
    heuristic: int = 0


@dataclass
class ImbalanceReport:
    total: int
    train: int
    heldout: int
    cells: dict[tuple[str, str, str, str], Count]
    """(source group, kind, difficulty, source format) -> count per side."""
    marginals: dict[str, dict[str, Count]]
    """Dimension name -> value -> count per side."""
    kind_weights: dict[str, float]
    """Per-task sampling weight by kind, over the train side."""
    task_weights: dict[str, float]
    expected_mix: dict[str, float]
    """Share of draws each kind gets under `task_weights`."""
    rebalance: bool
    dominant_kind: str | None
    """The most common kind (ties: first by name)."""
    dominant_share: float
    dominates: bool
    """True when `dominant_share` is past the dominance threshold."""
    warnings: list[str] = field(default_factory=list)

    def share(self, count: int) -> float:
        return count / self.total if self.total else 0.0

    def difficulty_labels(self) -> list[DifficultyCount]:
        """Counts by difficulty label, bands in order, each split into measured (solve
        rate, or declared by the task) and heuristic guesses, and train / held out;
        `unknown` (no label) is neither."""
        merged: dict[str, DifficultyCount] = {}
        for value, c in self.marginals["difficulty"].items():
            label = value.removesuffix(HEURISTIC_SUFFIX)
            row = merged.setdefault(label, DifficultyCount(label=label))
            if label != "unknown":
                if value.endswith(HEURISTIC_SUFFIX):
                    row.heuristic += c.total
                else:
                    row.measured += c.total
            row.train += c.train
            row.heldout += c.heldout

        def rank(label: str) -> tuple[int, str]:
            known = label in DIFFICULTY_ORDER
            return (DIFFICULTY_ORDER.index(label) if known else len(DIFFICULTY_ORDER), label)

        return [merged[label] for label in sorted(merged, key=rank)]

    def to_dict(self) -> dict[str, object]:
        def count(c: Count) -> dict[str, float | int]:
            return {
                "train": c.train,
                "heldout": c.heldout,
                "total": c.total,
                "share": round(self.share(c.total), 6),
            }

        return {
            "total": self.total,
            "train": self.train,
            "heldout": self.heldout,
            "cells": [
                {**dict(zip(DIMENSIONS, key, strict=True)), **count(c)}
                for key, c in sorted(self.cells.items())
            ],
            "by": {
                dim: {value: count(c) for value, c in sorted(values.items())}
                for dim, values in self.marginals.items()
            },
            "difficulty_labels": [
                {**asdict(row), "total": row.total, "share": round(self.share(row.total), 6)}
                for row in self.difficulty_labels()
            ],
            "dominant_kind": self.dominant_kind,
            "dominant_share": round(self.dominant_share, 6),
            "dominates": self.dominates,
            "warnings": self.warnings,
            "sampling": {
                "rebalance": self.rebalance,
                "weight_by_kind": {k: round(w, 6) for k, w in sorted(self.kind_weights.items())},
                "expected_mix": {k: round(v, 6) for k, v in sorted(self.expected_mix.items())},
            },
        }


def kind_weights(train_kinds: Counter[str], rebalance: bool) -> dict[str, float]:
    """Per-task weight for each kind: N / (K * n_k), so each of the K kinds carries 1/K of
    the total weight and the mean weight stays 1 (learning-rate neutral)."""
    total, kinds = sum(train_kinds.values()), len(train_kinds)
    if not rebalance or total == 0:
        return dict.fromkeys(train_kinds, 1.0)
    return {kind: total / (kinds * n) for kind, n in train_kinds.items()}


def _warnings(report: ImbalanceReport, settings: ImbalanceSettings) -> list[str]:
    out: list[str] = []
    kinds = report.marginals["kind"]
    if report.dominates:
        action = (
            "the trainer rebalances kinds with the sampling weights (column 'weight')"
            if report.rebalance
            else "rebalancing is off (--no-rebalance), so training will mostly see it"
        )
        out.append(
            f"kind '{report.dominant_kind}' dominates: {report.dominant_share:.1%} of all "
            f"tasks (threshold {settings.dominance_threshold:.0%}); {action}"
        )
    absent = [k for k in KNOWN_KINDS if k not in kinds]
    if absent:
        out.append(f"no tasks of kind {', '.join(absent)}")
    if report.total and not report.heldout:
        out.append(
            "nothing is held out: too few tasks per kind for the cap (every kind keeps a "
            "group in train); raise split.max_fraction or add tasks to evaluate"
        )
    unmeasured = [k for k, c in kinds.items() if c.train and not c.heldout]
    if report.heldout and unmeasured:
        out.append(
            f"no held-out task of kind {', '.join(unmeasured)}: progress on it is not measured"
        )
    untrained = [k for k, c in kinds.items() if c.heldout and not c.train]
    if untrained:
        out.append(f"kind {', '.join(untrained)} is only held out: the policy never trains on it")
    if report.rebalance and report.kind_weights:
        low, high = min(report.kind_weights.values()), max(report.kind_weights.values())
        if high / low > SKEWED_WEIGHT_RATIO:
            rare = max(report.kind_weights, key=lambda k: report.kind_weights[k])
            out.append(
                f"rebalancing draws each '{rare}' task {high / low:.0f}x as often as the most "
                "common kind's tasks: few tasks, many repeats"
            )
    return out


def build_report(split: Split, settings: ImbalanceSettings | None = None) -> ImbalanceReport:
    settings = settings or ImbalanceSettings()
    cells: dict[tuple[str, str, str, str], Count] = {}
    marginals: dict[str, dict[str, Count]] = {dim: {} for dim in DIMENSIONS}
    for task_id, side in split.side.items():
        task = split.tasks[task_id]
        values = (task.source_group, task.kind, task.difficulty, task.source_format)
        targets = [cells.setdefault(values, Count())]
        targets += [
            marginals[d].setdefault(v, Count()) for d, v in zip(DIMENSIONS, values, strict=True)
        ]
        for count in targets:
            if side == "train":
                count.train += 1
            else:
                count.heldout += 1
    train_ids = split.ids("train")
    train_kinds = Counter(split.tasks[t].kind for t in train_ids)
    weights = kind_weights(train_kinds, settings.rebalance)
    mass = {kind: n * weights[kind] for kind, n in train_kinds.items()}
    total_mass = sum(mass.values())
    kinds = marginals["kind"]
    dominant = min(kinds, key=lambda k: (-kinds[k].total, k)) if kinds else None
    total = len(split.side)
    share = kinds[dominant].total / total if dominant and total else 0.0
    report = ImbalanceReport(
        total=total,
        train=len(train_ids),
        heldout=total - len(train_ids),
        cells=cells,
        marginals={d: dict(sorted(v.items())) for d, v in marginals.items()},
        kind_weights=weights,
        task_weights={t: weights[split.tasks[t].kind] for t in train_ids},
        expected_mix={k: m / total_mass for k, m in mass.items()} if total_mass else {},
        rebalance=settings.rebalance,
        dominant_kind=dominant,
        dominant_share=share,
        dominates=dominant is not None and share > settings.dominance_threshold,
    )
    report.warnings = _warnings(report, settings)
    return report
