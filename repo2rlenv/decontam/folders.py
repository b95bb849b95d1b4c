"""`repo2rlenv decontam`: task folders on disk checked against the tables; the result
printed, written as JSON, and with `--write-labels` put into each task.toml
(`[metadata.repo2rlenv.decontamination]`, volatile for the content hash) through the
bundle writer's atomic `replace_config`; a folder named that holds a `manifest.jsonl`
(a mine's output) has it rebuilt, so its rows' `contaminated` says what task.toml says."""

from __future__ import annotations

import json
from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.bundle import find_task_dirs, read_task_dir, replace_config
from repo2rlenv.cli_paths import STDOUT, write_report
from repo2rlenv.decontam.facts import of_tree
from repo2rlenv.decontam.report import Decontaminator
from repo2rlenv.manifest import MANIFEST, write_manifest
from schemas import Repo2RLEnvMetadata
from schemas.provenance import DecontaminationResult


def _write(task_dir: Path, result: DecontaminationResult) -> str | None:
    tree = read_task_dir(task_dir)
    if tree.config is None or "task.toml" in tree.symlinks:
        return f"decontam.write-failed: task.toml unreadable or a link ({tree.config_error})"
    config = tree.config.model_copy(deep=True)
    block = config.metadata.repo2rlenv or Repo2RLEnvMetadata(generator="external")
    block.decontamination = result
    config.metadata.repo2rlenv = block
    try:
        replace_config(tree.root, config)
    except OSError as exc:
        return f"decontam.write-failed: {exc}"
    return None


def check_folders(
    paths: list[Path],
    checker: Decontaminator,
    *,
    json_path: Path | None = None,
    write_labels: bool = False,
) -> dict[str, DecontaminationResult]:
    """Every task folder under `paths`, checked; the report keyed by folder name."""
    results: dict[str, DecontaminationResult] = {}
    problems: dict[str, str] = {}
    for task_dir in find_task_dirs(paths):
        tree = read_task_dir(task_dir)
        result = checker.check(of_tree(tree))
        results[str(task_dir)] = result
        if write_labels and checker.indexes:  # nothing checked: nothing to record
            problem = _write(task_dir, result)
            if problem:
                problems[str(task_dir)] = problem
    if write_labels and checker.indexes:
        for path in paths:
            if (path / MANIFEST).is_file():
                write_manifest(path)
    stream = ui.err if json_path is not None and str(json_path) == STDOUT else ui.out
    for task, result in results.items():
        if result.contaminated:
            rules = ", ".join(
                sorted({f"{m.rule} {m.benchmark}:{m.instance_id}" for m in result.matches})
            )
            stream.print(f"{task}: contaminated ({rules})", soft_wrap=True, highlight=False)
    for line in checker.counts.lines():
        stream.print(line, soft_wrap=True, highlight=False)
    for task, problem in problems.items():
        ui.error(f"{task}: {problem}")
    if json_path is not None:
        payload = {
            "summary": checker.counts.to_dict(),
            "tasks": {task: r.model_dump(mode="json") for task, r in results.items()},
            "problems": problems,
        }
        if write_report(json_path, json.dumps(payload, indent=2, sort_keys=True) + "\n"):
            ui.written([json_path])
    return results
