"""Relative command-line paths (issue 22): `python -m train --tasks tasks_out`, as the
README and the Makefile write it, from a directory of its own. The trainer's task paths
used to become `tasks_out/tasks_out/<kind>/<id>`, so every rollout failed at once."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

import pytest

import train.cli
import train.launch.run
from repo2rlenv.cli_paths import absolute, absolute_paths
from train.rollout.scheduler import TaskRef


def test_absolute_paths_makes_every_path_argument_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = argparse.Namespace(
        tasks=Path("tasks_out"), dirs=[Path("a"), Path("../b")], json=Path("-"),
        name="tasks_out", none=None,
    )  # fmt: skip
    absolute_paths(args)
    assert args.tasks == tmp_path / "tasks_out"
    assert args.dirs == [tmp_path / "a", tmp_path.parent / "b"]
    assert args.json == Path("-")  # standard output, not a file
    assert args.name == "tasks_out"  # a string (e.g. a Hub id) is left as it is
    assert absolute(Path("~")).is_absolute()


def test_relative_tasks_reach_the_rollouts_as_existing_absolute_folders(
    demo_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(demo_tasks, tmp_path / "tasks_out")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(train.cli, "count_gpus", lambda: 0)
    seen: dict[str, object] = {}

    def fake_run(config, tasks: list[TaskRef], out: Path, *, resume: bool = False):
        seen.update(tasks=tasks, out=out)
        return train.launch.run.RunResult(steps={}, versions={}, adapters={})

    monkeypatch.setattr(train.launch.run, "run_training", fake_run)
    code = train.cli.main(
        ["--tasks", "tasks_out", "--preset", "tiny-cpu", "--out", "tasks_out/train"]
    )
    assert code == 0
    tasks = seen["tasks"]
    assert isinstance(tasks, list) and tasks
    for task in tasks:
        assert task.task_dir.is_absolute(), task.task_dir
        assert (task.task_dir / "task.toml").is_file(), task.task_dir
        assert task.task_dir.is_relative_to(tmp_path / "tasks_out")
    assert seen["out"] == tmp_path / "tasks_out" / "train"
