"""The train-data imbalance report shows difficulty labels: counts by label in its
JSON, its table and its chart, with heuristic guesses kept apart from measured ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import train.cli
from repo2rlenv.difficulty import heuristic_label, write_difficulty
from schemas import DifficultyLabel
from train.data.imbalance import build_report
from train.data.split import split_tasks
from train.data.tasks import load_tasks
from train.launch.plot import render_chart


def _label(examples_dir: Path) -> dict[str, tuple[str, str]]:
    """Three measured, one heuristic; returns task folder -> (band, source)."""
    tasks = sorted(p for p in examples_dir.iterdir() if p.is_dir())
    measured = ("hard", "hard", "trivial")
    expected = {}
    for task, name in zip(tasks, measured, strict=False):
        write_difficulty(task, DifficultyLabel(label=name, source="solve-rate", k=8, scored=8,
                                               solved=1 if name == "hard" else 8))  # fmt: skip
        expected[task.name] = (name, "solve-rate")
    guessed = heuristic_label(tasks[3])
    write_difficulty(tasks[3], guessed)
    expected[tasks[3].name] = (guessed.label, "heuristic")
    return expected


def test_report_counts_tasks_by_difficulty_label(examples_dir: Path) -> None:
    expected = _label(examples_dir)
    loaded = load_tasks(examples_dir)
    assert {t.task_id: t.difficulty for t in loaded.tasks} == {
        name: band + (" (heuristic)" if source == "heuristic" else "")
        for name, (band, source) in expected.items()
    }
    report = build_report(split_tasks(loaded.tasks))
    rows = {r["label"]: r for r in report.to_dict()["difficulty_labels"]}
    for band in {b for b, _ in expected.values()}:
        measured = sum(1 for b, s in expected.values() if b == band and s == "solve-rate")
        guessed = sum(1 for b, s in expected.values() if b == band and s == "heuristic")
        row = rows[band]
        assert (row["measured"], row["heuristic"], row["total"]) == (
            measured,
            guessed,
            measured + guessed,
        )
        assert row["train"] + row["heldout"] == row["total"]
    labels = [r["label"] for r in report.to_dict()["difficulty_labels"]]
    order = ("trivial", "easy", "medium", "hard", "unsolved")
    assert labels == sorted(labels, key=order.index)  # bands easiest first

    chart = render_chart(report)
    panel = chart.axes[2]
    assert [t.get_text() for t in panel.get_xticklabels()] == labels
    heights = [bar.get_height() for bar in panel.patches]
    n = len(labels)
    assert heights[:n] == [rows[b]["measured"] for b in labels]
    assert heights[n : 2 * n] == [rows[b]["heuristic"] for b in labels]


def test_dry_run_table_and_json_show_difficulty(
    examples_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(train.cli, "count_gpus", lambda: 0)
    _label(examples_dir)
    assert train.cli.main(["--tasks", str(examples_dir), "--out", str(tmp_path / "o")]) == 0
    text = capsys.readouterr().out
    assert "tasks by difficulty" in text and "trivial" in text and "heuristic" in text
    data = json.loads((tmp_path / "o" / "imbalance.json").read_text())
    assert sum(r["total"] for r in data["difficulty_labels"]) == 4
    assert sum(r["heuristic"] for r in data["difficulty_labels"]) == 1
