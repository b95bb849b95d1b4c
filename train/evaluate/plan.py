"""What an evaluation will run: the checkpoints, the tasks, k, and the adapter waves.

A checkpoint is a plain peft adapter folder (adapter_config.json beside its weights),
as the trainer writes under `<out>/<harness>/adapters/<harness>-policy-v<N>`. Each is
served under its own name, `eval-<label>`, apart from the trainer's `<harness>-policy-v<N>`
names, so an evaluation sharing a server never reuses a training adapter's prefix cache.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from train.data.config import Harness

BASE = "base"
"""Checkpoint label of the base model (served without an adapter)."""
ADAPTER_MARKER = "adapter_config.json"


class CheckpointError(ValueError):
    """A --checkpoints folder holds no adapter; the message says what was looked for."""


class Checkpoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    label: str = Field(min_length=1, description="Stable name in the ledger and report.")
    path: Path
    adapter: str = Field(min_length=1, description="Name the server serves it under.")


class EvalTask(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    task_dir: Path


class EvalPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    harness: Harness
    k: int = Field(ge=1)
    base_model: str = Field(min_length=1, description="Served name of the base model.")
    include_base: bool = True
    checkpoints: list[Checkpoint]
    tasks: list[EvalTask]
    slots: int = Field(ge=1, description="Adapters the server holds at once (--max-loras).")

    @property
    def labels(self) -> list[str]:
        return ([BASE] if self.include_base else []) + [c.label for c in self.checkpoints]

    @property
    def total_attempts(self) -> int:
        return len(self.labels) * len(self.tasks) * self.k


def _natural(text: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _adapter_dirs(folder: Path) -> list[Path]:
    if (folder / ADAPTER_MARKER).is_file():
        return [folder]
    found = sorted(p.parent for p in folder.rglob(ADAPTER_MARKER) if p.is_file())
    return [p for p in found if not any(part.startswith(".") for part in p.parts)]


def served_name(label: str) -> str:
    return ("eval-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-"))[:120]


def find_checkpoints(folders: list[Path]) -> list[Checkpoint]:
    """Each folder is an adapter or holds adapters (searched recursively). Labels are the
    folder names, widened by parent folders where two would clash; ordered naturally
    (v2 before v10)."""
    dirs: list[Path] = []
    for folder in folders:
        if not Path(folder).is_dir():
            raise CheckpointError(f"not a folder: {folder}")
        found = _adapter_dirs(Path(folder))
        if not found:
            raise CheckpointError(f"no adapter folder ({ADAPTER_MARKER}) under {folder}")
        dirs += [d.resolve() for d in found if d.resolve() not in dirs]
    depth = {d: 1 for d in dirs}
    while True:
        labels = {d: "/".join(d.parts[-depth[d] :]) for d in dirs}
        clashes = {d for d in dirs if list(labels.values()).count(labels[d]) > 1}
        widen = {d for d in clashes if depth[d] < len(d.parts) - 1}
        if not widen:
            break
        for d in widen:
            depth[d] += 1
    if len(set(labels.values())) != len(labels) or BASE in labels.values():
        raise CheckpointError("checkpoint folders must have distinct names other than 'base'")
    ordered = sorted(dirs, key=lambda d: _natural(labels[d]))
    return [Checkpoint(label=labels[d], path=d, adapter=served_name(labels[d])) for d in ordered]


def plan_waves(checkpoints: list[Checkpoint], slots: int) -> list[list[Checkpoint]]:
    """Consecutive groups of at most `slots` checkpoints, in order: every checkpoint in
    exactly one wave, and never more adapters loaded than the server can hold."""
    if slots < 1:
        raise ValueError(f"the server needs at least one adapter slot, got {slots}")
    return [checkpoints[i : i + slots] for i in range(0, len(checkpoints), slots)]
