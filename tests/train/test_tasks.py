from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.train.synthetic import Spec, task_id_of
from train.data.tasks import load_tasks

BROKEN_REASON = {
    "toml": "task.config-invalid-toml",
    "schema": "task.config-schema",
    "symlink": "bundle.symlink",
}


def test_loads_every_valid_task_with_its_metadata(skewed_root: Path, skewed: list[Spec]) -> None:
    result = load_tasks(skewed_root)
    valid = {task_id_of(s): s for s in skewed if s.broken is None}
    assert {t.task_id for t in result.tasks} == set(valid)
    for task in result.tasks:
        spec = valid[task.task_id]
        assert task.kind == spec.kind_or_unknown
        assert task.difficulty == spec.difficulty_or_unknown
        assert task.source_group == spec.source_group
        assert (task.source_dataset, task.source_record_id) == (spec.dataset, spec.record_id)
        assert task.source_format == spec.source_format
        assert task.generator == (spec.generator or "external")
        assert task.content_hash.startswith("sha256:")


def test_invalid_tasks_are_reported_not_fatal(skewed_root: Path, skewed: list[Spec]) -> None:
    result = load_tasks(skewed_root)
    expected = Counter(BROKEN_REASON[s.broken] for s in skewed if s.broken)
    assert Counter(t.reason for t in result.invalid) == expected
    assert {t.path for t in result.invalid} == {task_id_of(s) for s in skewed if s.broken}
    assert result.found == len(skewed)


def test_only_verified(skewed_root: Path, skewed: list[Spec]) -> None:
    result = load_tasks(skewed_root, only_verified=True)
    verified = {task_id_of(s) for s in skewed if s.broken is None and s.status == "verified"}
    assert {t.task_id for t in result.tasks} == verified
    others = sum(1 for s in skewed if s.broken is None and s.status != "verified")
    assert result.filtered == Counter({"filter.not-verified": others})
    assert all(t.evaluation == "verified" for t in result.tasks)


def test_demo_tasks_load_as_one_task_per_kind(demo_tasks: Path) -> None:
    result = load_tasks(demo_tasks)
    assert not result.invalid
    assert sorted(t.kind for t in result.tasks) == ["build", "extend", "qa", "repair"]
    assert {t.generator for t in result.tasks} == {"repo2rlenv-examples"}
    assert {t.source_group for t in result.tasks} == {"repo2rlenv"}
    assert {t.source_record_id for t in result.tasks} == {t.task_id for t in result.tasks}


def _write(folder: Path, toml: str) -> Path:
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    (folder / "instruction.md").write_text("do it\n")
    return folder


def test_foreign_task_fallbacks(tmp_path: Path) -> None:
    _write(tmp_path / "bench" / "a", 'source = "swebench-lite"\n[task]\nname = "org/a"\n')
    _write(tmp_path / "bench" / "b", '[task]\nname = "org/b"\n[metadata]\ndifficulty = "Hard"\n')
    _write(tmp_path / "bench" / "c", 'version = "1.0"\n[metadata]\ncategory = "x"\n')
    tasks = {t.task_id: t for t in load_tasks(tmp_path).tasks}
    assert (tasks["bench/a"].source_dataset, tasks["bench/a"].source_record_id) == (
        "swebench-lite",
        "org/a",
    )
    assert (tasks["bench/b"].source_dataset, tasks["bench/b"].difficulty) == ("org", "hard")
    assert (tasks["bench/c"].source_dataset, tasks["bench/c"].source_record_id) == (
        "local:bench",
        "bench/c",
    )
    assert {t.kind for t in tasks.values()} == {"unknown"}
    assert {t.evaluation for t in tasks.values()} == {"unverified"}


def test_a_single_task_folder_is_a_set_of_one(tmp_path: Path) -> None:
    folder = _write(tmp_path / "solo", '[task]\nname = "org/solo"\n')
    result = load_tasks(folder)
    assert [t.task_id for t in result.tasks] == ["solo"]


def test_unusable_roots_raise_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no such folder"):
        load_tasks(tmp_path / "absent")
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        load_tasks(tmp_path / "file")
    assert load_tasks(tmp_path).found == 0


def test_foreign_task_labelled_by_validate_counts_as_verified(tmp_path: Path) -> None:
    labelled = (
        '[task]\nname = "bench/x"\n[metadata.repo2rlenv]\ngenerator = "external"\n'
        '[metadata.repo2rlenv.evaluation]\nstatus = "verified"\n'
    )
    _write(tmp_path / "x", labelled)
    _write(tmp_path / "y", '[task]\nname = "bench/y"\n')
    result = load_tasks(tmp_path, only_verified=True)
    assert [(t.task_id, t.kind, t.source_dataset, t.generator) for t in result.tasks] == [
        ("x", "unknown", "bench", "external")
    ]
    assert result.filtered["filter.not-verified"] == 1


def test_the_loaded_set_holds_each_task_folder_as_a_path_read_once(
    demo_tasks: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: the folder was a string in `TaskRecord.path` and a `Path` again in
    `TaskRef`; the record keeps the `Path` every later step takes as it is."""
    import train.data.tasks
    from repo2rlenv.bundle import read_task_dir

    reads: list[Path] = []
    monkeypatch.setattr(
        train.data.tasks, "read_task_dir", lambda d: reads.append(d) or read_task_dir(d)
    )
    result = load_tasks(demo_tasks)
    assert sorted(reads) == sorted(t.path for t in result.tasks)  # each folder once
    for task in result.tasks:
        assert isinstance(task.path, Path) and task.path == demo_tasks / task.task_id
