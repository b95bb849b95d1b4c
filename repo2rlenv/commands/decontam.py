"""`repo2rlenv decontam`: check task folders against benchmark instance tables."""

from __future__ import annotations

from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import JsonReport, TaskPaths
from repo2rlenv.commands.common import EXIT_INVALID, EXIT_OK, EXIT_SETUP, paths_usable

NAME = "decontam"
HELP = "check task folders against benchmark instance tables (SWE-bench...)"
DESCRIPTION = (
    "Flags tasks that match a benchmark instance by repository, base commit and touched "
    "files, by a near-duplicate instruction (MinHash LSH), by a notebook data file's hash, "
    "or that are in a previous run's held-out split. Exit 1 when a task is contaminated. "
    "Rules and thresholds: docs/decontamination.md."
)


class Options(TaskPaths, JsonReport):
    against: list[str] = option(
        [],
        "table to check against (repeatable): a short name (swe-bench-verified...), "
        "'default' (every named table that can be read), a Hub id, a .jsonl/.json/.parquet "
        "instance table, a folder of tasks, or a split.json from `python -m train`",
        metavar="NAME|FILE",
    )
    write_labels: bool = option(
        False, "write the result into each task.toml ([metadata.repo2rlenv.decontamination])"
    )


def run(options: Options) -> int:
    from repo2rlenv import ui
    from repo2rlenv.decontam.folders import check_folders
    from repo2rlenv.decontam.report import Decontaminator
    from repo2rlenv.decontam.tables import TableError

    if not options.against:
        ui.error("decontam: name at least one table with --against (or --against default)")
        return EXIT_SETUP
    if not paths_usable({}, {"--json": options.json_path}):
        return EXIT_SETUP
    try:
        checker = Decontaminator.load(options.against)
    except TableError as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    results = check_folders(
        options.paths, checker, json_path=options.json_path, write_labels=options.write_labels
    )
    return EXIT_INVALID if any(r.contaminated for r in results.values()) else EXIT_OK
