"""Difficulty labels: bands by solve rate, the heuristic's signals, labels written into
task.toml and read back without changing the task's identity, and the CLI."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.bundle.standard import environment_files, grading_files, standard_config
from repo2rlenv.cli import main
from repo2rlenv.difficulty import band, heuristic_label, read_difficulty, signals
from repo2rlenv.difficulty import command as difficulty_command
from repo2rlenv.difficulty.heuristic import EASY_MAX, MEDIUM_MAX, effort, heuristic_band
from repo2rlenv.kinds.common import reference_script
from schemas import BundleFile, DifficultyLabel, SourceRef, TaskBundle

# The documented table, written out by hand: solved of 8 scored -> band.
OF_EIGHT = ["unsolved", "hard", "hard", "medium", "medium", "easy", "easy", "easy", "trivial"]


def test_bands_for_k_8_follow_the_documented_table() -> None:
    assert [band(solved, 8) for solved in range(9)] == OF_EIGHT


@pytest.mark.parametrize(
    ("solved", "scored", "expected"),
    [(9, 10, "trivial"), (6, 10, "easy"), (5, 10, "medium"), (3, 10, "medium"),
     (2, 10, "hard"), (1, 3, "medium"), (0, 1, "unsolved"), (1, 1, "trivial")],
)  # fmt: skip
def test_bands_by_rate_for_other_k(solved: int, scored: int, expected: str) -> None:
    assert band(solved, scored) == expected


def test_no_scored_attempt_gives_no_label_and_bad_counts_raise() -> None:
    assert band(0, 0) is None
    with pytest.raises(ValueError):
        band(3, 2)


START = {f"app_{i}.py": "".join(f"value_{j} = {j}\n" for j in range(10)) for i in range(3)}


def _task(root: Path, name: str, changes: dict[str, str | None], tests: int) -> Path:
    body = "".join(f"def test_{i}():\n    assert True\n\n" for i in range(tests))
    files = [
        *environment_files("python:3.12-slim", dict(START)),
        *grading_files("print('ok')\n", protected={"test_visible.py": "def test_seen(): pass\n"}),
        BundleFile(path="tests/test_hidden.py", content=body.encode()),
        BundleFile(
            path="solution/solve.sh", content=reference_script(changes).encode(), executable=True
        ),
    ]
    config = standard_config(
        name,
        kind="repair",
        source=SourceRef(dataset="handmade", record_id=name, format="handmade"),
        generator="repo2rlenv-examples",
    )
    bundle = TaskBundle(task_id=name, config=config, instruction="Fix it.\n", files=files)
    return write_bundle(bundle, root).path


def test_heuristic_signals_measure_the_reference_change(tmp_path: Path) -> None:
    edited = START["app_0.py"].replace("value_3 = 3", "value_3 = 33").replace("value_7 = 7", "x=1")
    task = _task(
        tmp_path,
        "small",
        {"app_0.py": edited, "app_2.py": None, "new.py": "a = 1\nb = 2\n"},
        tests=4,
    )
    # 2 lines replaced (4 changed), 10 lines deleted, 2 lines added; 3 files; 4 tests
    # (the protected copy of a visible test is not a hidden test).
    assert signals(task) == {"changed_lines": 16, "files": 3, "tests": 4}
    label = heuristic_label(task)
    assert label.source == "heuristic" and label.signals["files"] == 3
    assert label.label == heuristic_band(label.signals)
    assert effort(label.signals) == 16 + 2 * 20 + 4 * 3


def test_heuristic_bands_grow_with_the_change(tmp_path: Path) -> None:
    tiny = _task(tmp_path, "tiny", {"app_0.py": START["app_0.py"] + "extra = 1\n"}, tests=1)
    big_text = "".join(f"line_{i} = {i}\n" for i in range(200))
    big = _task(tmp_path, "big", {f"mod_{i}.py": big_text for i in range(3)}, tests=10)
    assert effort(signals(tiny)) <= EASY_MAX and heuristic_label(tiny).label == "easy"
    assert effort(signals(big)) > MEDIUM_MAX and heuristic_label(big).label == "hard"
    assert heuristic_band({"changed_lines": EASY_MAX + 1, "files": 1, "tests": 0}) == "medium"


def test_labels_are_written_read_back_and_keep_the_task_identity(
    tmp_path: Path, examples_dir: Path
) -> None:
    task = next(p for p in sorted(examples_dir.iterdir()) if p.is_dir())
    before = read_task_dir(task)
    label = DifficultyLabel(label="hard", source="solve-rate", k=8, scored=7, solved=1, model="m")
    from repo2rlenv.difficulty import write_difficulty

    write_difficulty(task, label)
    assert read_difficulty(task) == label
    after = read_task_dir(task)
    assert after.content_hash == before.content_hash  # difficulty is volatile
    assert after.config is not None and after.config.metadata.repo2rlenv is not None
    assert after.config.metadata.repo2rlenv.content_hash == before.content_hash
    assert "[metadata.repo2rlenv.difficulty]" in (task / "task.toml").read_text()
    assert not list(task.glob(".task.toml.tmp-*"))


def test_cli_writes_heuristic_labels_and_keeps_measured_ones(examples_dir: Path) -> None:
    tasks = sorted(p for p in examples_dir.iterdir() if p.is_dir())
    from repo2rlenv.difficulty import write_difficulty

    measured = DifficultyLabel(label="unsolved", source="solve-rate", k=8, scored=8, solved=0)
    write_difficulty(tasks[0], measured)
    assert main(["difficulty", str(examples_dir)]) == 0
    assert read_difficulty(tasks[0]) == measured
    for task in tasks[1:]:
        label = read_difficulty(task)
        assert label is not None and label.source == "heuristic"
        assert label.label in ("easy", "medium", "hard") and label.signals


def test_cli_dry_run_writes_nothing(examples_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "labels.json"
    assert main(["difficulty", str(examples_dir), "--dry-run", "--json", str(out)]) == 0
    assert all(read_difficulty(t) is None for t in examples_dir.iterdir() if t.is_dir())
    assert '"source": "heuristic"' in out.read_text()


def test_model_path_labels_by_solve_rate(
    examples_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = sorted(p.name for p in examples_dir.iterdir() if p.is_dir())
    counts = {name: (i * 2, 8) for i, name in enumerate(names)}  # 0, 2, 4, 6 of 8
    seen = {}

    def fake_measure(task_dirs, options):
        seen.update(task_dirs=task_dirs, options=options)
        return counts

    monkeypatch.setattr(difficulty_command, "measure", fake_measure)
    code = main(["difficulty", str(examples_dir), "--model", "http://h:1/v1", "-k", "8"])
    assert code == 0 and sorted(seen["task_dirs"]) == names and seen["options"].k == 8
    for name in names:
        label = read_difficulty(examples_dir / name)
        assert label is not None and label.source == "solve-rate"
        assert (label.solved, label.scored, label.k) == (*counts[name], 8)
        assert label.label == OF_EIGHT[counts[name][0]]
        assert label.model == "http://h:1/v1"


def test_cli_set_up_errors_exit_2(tmp_path: Path, examples_dir: Path) -> None:
    assert main(["difficulty", str(tmp_path / "nope")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["difficulty", str(tmp_path / "empty")]) == 2
    with pytest.raises(SystemExit) as stop:  # refused while the arguments are parsed
        main(["difficulty", str(examples_dir), "-k", "0"])
    assert stop.value.code == 2
    # An endpoint nobody answers: a clear set-up error, no label written.
    code = main(["difficulty", str(examples_dir), "--model", "http://127.0.0.1:9/v1",
                 "--work-dir", str(tmp_path / "w")])  # fmt: skip
    assert code == 2
    assert all(read_difficulty(t) is None for t in examples_dir.iterdir() if t.is_dir())


def test_help_exits_0_and_repo2rlenv_does_not_import_train() -> None:
    with pytest.raises(SystemExit) as stop:
        main(["difficulty", "--help"])
    assert stop.value.code == 0
    probe = (
        "import sys, repo2rlenv.cli, repo2rlenv.difficulty.command\n"
        "print(sorted(m for m in sys.modules if m == 'train' or m.startswith('train.')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_solver_is_found_through_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """repo2rlenv never imports train: the installed solver is looked up by group."""
    from repo2rlenv.difficulty import measure as measure_module
    from train.evaluate.solve_rates import measure as train_solver

    found = measure_module.entry_points(group=measure_module.SOLVERS_GROUP)
    assert [ep.load() for ep in found] == [train_solver]

    monkeypatch.setattr(measure_module, "entry_points", lambda group: [])
    options = measure_module.MeasureOptions(model="http://127.0.0.1:9/v1")
    with pytest.raises(measure_module.MeasureError, match=r"difficulty\.train-missing"):
        measure_module.measure({}, options)
