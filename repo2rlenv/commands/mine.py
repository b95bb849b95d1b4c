"""`repo2rlenv mine`: published agent sessions (and, through installed sources such as
the notebooks, other inputs) into Harbor tasks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, create_model

from repo2rlenv import ui
from repo2rlenv.cli_args import option
from repo2rlenv.cli_options import (
    BaseImageOption,
    DebugOption,
    ForceOption,
    JsonReport,
    QuietOption,
    RuntimeOption,
)
from repo2rlenv.cli_paths import write_report
from repo2rlenv.commands.common import EXIT_OK, EXIT_SETUP, paths_usable, runtime_of
from repo2rlenv.mining.options import MineOptions

if TYPE_CHECKING:
    from repo2rlenv.decontam.report import Decontaminator
    from repo2rlenv.emit import Pipeline
    from repo2rlenv.runtime import Runtime
    from repo2rlenv.settings import Settings
    from repo2rlenv.source import Source

NAME = "mine"
SESSIONS = "sessions"
"""`--only`'s name for the session miner (the installed sources go by their own names)."""
HELP = "mine published agent sessions into Harbor tasks"
DESCRIPTION = (
    "Reads a Hub dataset id or a local file/folder of sessions (ATIF, pi, Claude Code, "
    "Codex, opencode, Hermes, OpenAI-message rows), replays each session and writes "
    "repair/build/extend/qa tasks to OUT/<kind>/<task-id>/ plus OUT/manifest.jsonl. "
    "Jupyter notebooks in the source become data-analysis qa tasks (smoldataenvs, an "
    "installed source). Every task is proven in Docker unless --no-validate. Rerunning "
    "resumes: finished tasks are left as they are."
)


class Options(
    BaseImageOption,
    MineOptions,
    JsonReport,
    ForceOption,
    RuntimeOption,
    QuietOption,
    DebugOption,
):
    out: Path = option(Path("tasks_out"), "output folder", metavar="DIR")
    only: str | None = option(
        None,
        "mine only this source: `sessions` or an installed source's name (`notebooks`); "
        "nothing of it in the input is an error",
        metavar="SOURCE",
    )


def options_model() -> type[Options]:
    """`Options` with every installed source's own options mixed in (the notebooks'
    `--data-dir` ...): the one model `mine` parses into and hands to each source."""
    from repo2rlenv.emit import installed_sources

    extras: tuple[type[BaseModel], ...] = tuple(s.options for s in installed_sources())
    if not extras:
        return Options
    return create_model("MineCommandOptions", __base__=(Options, *extras))  # type: ignore[return-value,call-overload]


def _decontaminator(options: Options) -> tuple[bool, Decontaminator | None]:
    """The benchmark tables, loaded before any mining: a table asked for that cannot be
    read stops the run here in one line (False)."""
    from repo2rlenv.decontam.report import Decontaminator
    from repo2rlenv.decontam.tables import TableError

    if not options.decontaminate_against:
        if options.drop_contaminated:
            ui.error("--drop-contaminated needs --decontaminate-against NAME|FILE")
            return False, None
        return True, None
    try:
        return True, Decontaminator.load(
            options.decontaminate_against, drop=options.drop_contaminated
        )
    except TableError as exc:
        ui.error(str(exc))
        return False, None


def _pipelines(
    options: Options,
    source: Source,
    runtime: Runtime | None,
    base_image: str,
    settings: Settings,
    fields: dict[str, Any],
) -> list[Pipeline] | None:
    """The sessions' pipeline (first) and each installed source's that finds input, or
    only the one `--only` names; None (said in one line) when `--only` names no source
    or its source finds nothing in the input."""
    from repo2rlenv.emit import installed_sources
    from repo2rlenv.mining.session_miner import SessionPipeline
    from repo2rlenv.validate import ResultCache

    plugins = installed_sources()
    names = [SESSIONS, *(plugin.name for plugin in plugins)]
    if options.only is not None and options.only not in names:
        ui.error(f"--only {options.only}: no such source (one of: {', '.join(names)})")
        return None
    pipelines: list[Pipeline] = []
    if options.only in (None, SESSIONS):
        cache = ResultCache(settings.cache_dir)
        pipelines.append(SessionPipeline(MineOptions(**fields), runtime, cache, source=source))
    for plugin in plugins:
        if options.only not in (None, plugin.name):
            continue
        found = plugin.pipeline(options, source=source, base_image=base_image, runtime=runtime)
        if found is not None:
            pipelines.append(found)
    if not pipelines:
        ui.error(f"--only {options.only}: no input of that source in {options.dataset}")
        return None
    return pipelines


def run(options: Options) -> int:
    """Sessions and notebooks in one run: each pipeline that finds input writes into OUT
    and prints its own yield table; the manifest covers both."""
    from repo2rlenv.decontam.report import Decontaminated
    from repo2rlenv.emit import emit_all
    from repo2rlenv.mining.instances import InstanceError
    from repo2rlenv.settings import load_settings
    from repo2rlenv.source import resolve_source

    inputs = (
        {"--exclude": options.exclude, "--data-dir": getattr(options, "data_dir", None)},
        {"--repo-map": options.repo_map},
    )
    outputs = {"--out": options.out, "--repo-cache": options.repo_cache}
    if not paths_usable(outputs, {"--json": options.json_path}, inputs):
        return EXIT_SETUP
    source = resolve_source(options.dataset, options.revision)  # the one resolution; fast
    settings = load_settings()
    base_image = options.base_image or settings.base_image
    runtime = None
    if options.validate_tasks:
        advice = " (or mine with --no-validate: tasks are then labelled unverified)"
        runtime = runtime_of(options.runtime, settings, advice=advice)
        if runtime is None:
            return EXIT_SETUP
    fields = options.model_dump(include=set(MineOptions.model_fields))
    fields |= {
        "base_image": base_image,
        "strict_secrets": options.strict_secrets or settings.strict_secrets,
    }
    try:
        pipelines = _pipelines(options, source, runtime, base_image, settings, fields)
    except InstanceError as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    if pipelines is None:
        return EXIT_SETUP
    sessions = pipelines[0] if options.only in (None, SESSIONS) else None
    ready, checker = _decontaminator(options)
    if not ready:
        return EXIT_SETUP
    if checker is not None:
        pipelines = [Decontaminated(p, checker) for p in pipelines]
        sessions = pipelines[0] if sessions is not None else None
    # `--json -`: the report is standard output, so the tables go to stderr beside it.
    to_stdout = options.json_path is not None and str(options.json_path) == "-"
    console = ui.err if to_stdout else ui.out
    reports = []
    for pipeline in pipelines:
        oracle = options.validate_tasks and pipeline is sessions
        with ui.mining_progress(enabled=not options.quiet, oracle=oracle) as on_progress:
            report = emit_all(
                pipeline, options.out, on_progress=on_progress, overwrite=options.force
            )
        if report.records_read or len(pipelines) == 1:
            ui.yield_table(report, console)
        reports.append(report.to_dict())
    if checker is not None:
        for line in checker.counts.lines():
            console.print(line, soft_wrap=True, highlight=False)
    if options.json_path is not None:
        payload = reports[0] if len(reports) == 1 else {"pipelines": reports}
        if checker is not None:
            payload = payload | {"decontamination": checker.counts.to_dict()}
        if write_report(options.json_path, json.dumps(payload, indent=2, sort_keys=True) + "\n"):
            ui.info(f"yield report written to {options.json_path}")
    return EXIT_OK
