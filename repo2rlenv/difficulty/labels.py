"""Difficulty labels in task.toml: `[metadata.repo2rlenv.difficulty]`, written through the
bundle writer's atomic `replace_config`. The key is volatile for the content hash, so
labelling never changes a task's identity (or invalidates its validation cache)."""

from __future__ import annotations

from pathlib import Path

from repo2rlenv.bundle import read_task_dir, replace_config
from schemas import DifficultyLabel, Repo2RLEnvMetadata


class LabelError(ValueError):
    """The task's config cannot be read, so no label can go into it."""


def read_difficulty(task_dir: Path) -> DifficultyLabel | None:
    tree = read_task_dir(Path(task_dir))
    if tree.config is None:
        raise LabelError(f"{task_dir}: task.toml unreadable ({tree.config_error})")
    block = tree.config.metadata.repo2rlenv
    return block.difficulty if block else None


def write_difficulty(task_dir: Path, label: DifficultyLabel) -> None:
    tree = read_task_dir(Path(task_dir))
    if tree.config is None or "task.toml" in tree.symlinks:
        raise LabelError(f"{task_dir}: task.toml unreadable or a link ({tree.config_error})")
    config = tree.config.model_copy(deep=True)
    block = config.metadata.repo2rlenv or Repo2RLEnvMetadata(generator="external")
    block.difficulty = label
    config.metadata.repo2rlenv = block
    replace_config(tree.root, config)
