"""`repo2rlenv images`: what the tasks' images cost on this engine (build time, size, the
layers a repository version's tasks share, the disk all of them take)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from repo2rlenv import ui
from repo2rlenv.cli_options import JsonReport, TaskPaths
from repo2rlenv.cli_paths import write_report
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, docker_client, paths_usable

if TYPE_CHECKING:
    from repo2rlenv.runtime.image_usage import UsageReport

NAME = "images"
HELP = "build time, size and shared layers of the tasks' images on this engine"
DESCRIPTION = (
    "Reads, never builds: for each task, the image the Docker runtime builds it under "
    "(as validate does), its size and its last build's time (recorded for images built "
    "since this command existed); per repository version (a SWE recipe's repo and "
    "version, else repository@commit), the bytes every image of the group shares; in "
    "all, the images' sizes added up and the disk their distinct layers take. Tasks "
    "whose image is not built are counted. Exit 0, or 2 when no engine answers."
)


class Options(TaskPaths, JsonReport):
    pass


def run(options: Options) -> int:
    from repo2rlenv.bundle import find_task_dirs
    from repo2rlenv.runtime.image_usage import measure, summarize

    missing = [p for p in options.paths if not p.is_dir()]
    if missing:
        ui.error(f"not a folder: {', '.join(map(str, missing))}; give task folders or their parent")
        return EXIT_SETUP
    if not paths_usable({}, {"--json": options.json_path}):
        return EXIT_SETUP
    task_dirs = find_task_dirs(options.paths)
    if not task_dirs:
        ui.error(f"no task.toml found under {', '.join(map(str, options.paths))}")
        return EXIT_SETUP
    client = docker_client()
    if client is None:
        return EXIT_SETUP
    report = summarize(measure(client, task_dirs))
    text = report.model_dump_json(indent=2) + "\n"
    if options.json_path is not None and str(options.json_path) == "-":
        sys.stdout.write(text)
        return EXIT_OK
    _print(report)
    if options.json_path is not None and write_report(options.json_path, text):
        ui.info(f"report written to {options.json_path}")
    return EXIT_OK


def _size(value: int | None) -> str:
    return "-" if value is None else f"{value / 1e9:.2f} GB"


def _print(report: UsageReport) -> None:
    tasks = Table(title="task images", title_justify="left")
    for column in ("task", "repository version", "image", "built in", "size"):
        tasks.add_column(column, justify="right" if column in ("built in", "size") else "left")
    for usage in report.tasks:
        built = (
            "not built"
            if not usage.present
            else (f"{usage.build_s:.0f} s" if usage.build_s is not None else "not recorded")
        )
        tasks.add_row(
            escape(usage.task), escape(usage.group), usage.image, built, _size(usage.size_bytes)
        )
    ui.out.print(tasks)
    groups = Table(title="per repository version", title_justify="left")
    for column in ("repository version", "tasks", "images", "shared by all", "distinct layers"):
        groups.add_column(column, justify="left" if column == "repository version" else "right")
    for group in report.groups:
        groups.add_row(
            escape(group.group),
            str(group.tasks),
            str(group.images),
            _size(group.shared_bytes),
            _size(group.disk_bytes),
        )
    ui.out.print(groups)
    ui.out.print(
        f"  {len(report.tasks)} tasks, {report.missing} without an image here; images "
        f"{_size(report.images_bytes)} added up, {_size(report.disk_bytes)} on disk "
        f"(distinct layers); recorded build time {report.build_s:.0f} s",
        highlight=False,
    )
