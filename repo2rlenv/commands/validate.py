"""`repo2rlenv validate`: prove tasks in real containers."""

from __future__ import annotations

import sys
from pathlib import Path

from repo2rlenv import ui
from repo2rlenv.cli_args import option, options_from
from repo2rlenv.cli_options import JobsOption, JsonReport, QuietOption, RuntimeOption, TaskPaths
from repo2rlenv.cli_paths import write_report
from repo2rlenv.commands.common import EXIT_SETUP, paths_usable, runtime_of

NAME = "validate"
HELP = "prove tasks in real containers"
DESCRIPTION = (
    "Static checks on every task, then real trials in Docker: the reference must score "
    "1.0, the untouched start state 0.0, and both must hold on reruns. Exit 0 when all "
    "tasks are valid, 1 when some are not, 2 on a set-up error."
)


class Options(TaskPaths, JobsOption, JsonReport, RuntimeOption, QuietOption):
    run: bool = option(True, "static checks only", flags=("--no-run",))
    strict_secrets: bool = option(
        False,
        "count secret-shaped text in files that are blobs of the anchored public commit as "
        "errors (default: warnings, secrets.public-checkout; settings strict_secrets)",
    )
    reruns: int = option(
        2, "extra reference and no-op runs that must agree", metavar="N", ge=0, le=50
    )
    write_labels: bool = option(
        False,
        "write the evaluation label into each task.toml (atomically; without times or a "
        "check date, so a task's bytes change only when its verdict does)",
    )
    probes: bool = option(
        True,
        "skip the forgery probes (conftest hook, sitecustomize, fake pytest, pre-written "
        "reward, overwritten tests); on by default with Docker",
    )
    cache: bool = option(True, "re-run trials even for unchanged tasks")
    cache_dir: Path | None = option(None, "result cache folder (default: the settings')")


def run(options: Options) -> int:
    from repo2rlenv.bundle import find_task_dirs
    from repo2rlenv.settings import load_settings
    from repo2rlenv.validate import ResultCache, ValidateOptions, validate_tasks

    missing = [p for p in options.paths if not p.is_dir()]
    if missing:
        ui.error(f"not a folder: {', '.join(map(str, missing))}; give task folders or their parent")
        return EXIT_SETUP
    if not paths_usable({"--cache-dir": options.cache_dir}, {"--json": options.json_path}):
        return EXIT_SETUP
    task_dirs = find_task_dirs(options.paths, unconfigured=True)
    if not task_dirs:
        ui.error(f"no task.toml found under {', '.join(map(str, options.paths))}")
        return EXIT_SETUP
    settings = load_settings()
    runtime = runtime_of(options.runtime, settings, check=options.run)
    if runtime is None:
        return EXIT_SETUP
    checks = options_from(
        options,
        ValidateOptions,
        use_cache=options.cache,
        strict_secrets=options.strict_secrets or settings.strict_secrets,
        runtime=runtime.name,
    )
    cache = ResultCache(options.cache_dir or settings.cache_dir) if checks.use_cache else None
    with ui.validate_progress(len(task_dirs), enabled=not options.quiet) as progress:
        report = validate_tasks(task_dirs, checks, runtime if checks.run else None, cache, progress)
    json_path = options.json_path
    if json_path is not None and str(json_path) == "-":
        sys.stdout.write(report.to_json())
    else:
        ui.validation_table(report)
        if json_path is not None and write_report(json_path, report.to_json()):
            ui.info(f"report written to {json_path}")
    return report.exit_code
