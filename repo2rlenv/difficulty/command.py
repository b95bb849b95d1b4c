"""`repo2rlenv difficulty DIR... [--model URL|ADAPTER] [-k 8]`: label every task.

With `--model`, k real attempts per task (harness, guard, verifier) give a solve-rate
band; without, a heuristic band marked `source = "heuristic"`, which never replaces a
solve-rate label. Exit 0 labels written, 2 set-up error (no task, no server or
harness), 130 interrupted.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from repo2rlenv import ui
from repo2rlenv.bundle import find_task_dirs
from repo2rlenv.cli_paths import STDOUT, write_report
from repo2rlenv.difficulty.bands import band
from repo2rlenv.difficulty.heuristic import heuristic_label
from repo2rlenv.difficulty.labels import LabelError, read_difficulty, write_difficulty
from repo2rlenv.difficulty.measure import MeasureError, MeasureOptions, measure
from schemas import DifficultyLabel

EXIT_OK, EXIT_SETUP = 0, 2


class DifficultyRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paths: list[Path]
    measure: MeasureOptions | None = None
    json_path: Path | None = None
    dry_run: bool = False


def _task_ids(dirs: list[Path]) -> dict[str, Path]:
    ids: dict[str, Path] = {}
    for folder in dirs:
        name = folder.name
        key = name if name not in ids else str(folder)
        ids[key] = folder
    return ids


def label_tasks(request: DifficultyRequest) -> int:
    missing = [p for p in request.paths if not p.is_dir()]
    if missing:
        ui.error(f"not a folder: {', '.join(map(str, missing))}")
        return EXIT_SETUP
    tasks = _task_ids(find_task_dirs(request.paths))
    if not tasks:
        ui.error(f"no task.toml found under {', '.join(map(str, request.paths))}")
        return EXIT_SETUP
    counts: dict[str, tuple[int, int]] = {}
    if request.measure is not None:
        try:
            counts = measure(tasks, request.measure)
        except MeasureError as exc:
            ui.error(str(exc))
            return EXIT_SETUP
    rows: list[tuple[str, DifficultyLabel | None, str]] = []
    for task_id, folder in tasks.items():
        label, note = _label_for(task_id, folder, request, counts)
        if label is not None and not request.dry_run:
            try:
                write_difficulty(folder, label)
            except (LabelError, OSError) as exc:
                label, note = None, f"difficulty.write-failed: {exc}"
        rows.append((task_id, label, note))
    to_stdout = request.json_path is not None and str(request.json_path) == STDOUT
    ui.labels_table(rows, ui.err if to_stdout else ui.out)  # `--json -` owns stdout
    if request.json_path is not None:
        payload = {
            task: {"label": label.model_dump(mode="json") if label else None, "note": note}
            for task, label, note in rows
        }
        if write_report(request.json_path, json.dumps(payload, indent=2, sort_keys=True) + "\n"):
            ui.written([request.json_path])
    return EXIT_OK


def _label_for(
    task_id: str, folder: Path, request: DifficultyRequest, counts: dict[str, tuple[int, int]]
) -> tuple[DifficultyLabel | None, str]:
    if request.measure is None:
        try:
            current = read_difficulty(folder)
        except LabelError as exc:
            return None, f"task.config-invalid: {exc}"
        if current is not None and current.source == "solve-rate":
            return None, f"kept solve-rate label '{current.label}'"
        return heuristic_label(folder), "heuristic: no model tried it"
    solved, scored = counts.get(task_id, (0, 0))
    measured = band(solved, scored)
    if measured is None:
        return None, "difficulty.unscored: no attempt was scored"
    options = request.measure
    return DifficultyLabel(
        label=measured,
        source="solve-rate",
        k=options.k,
        scored=scored,
        solved=solved,
        model=options.model if options.model.startswith("http") else Path(options.model).name,
    ), ""
