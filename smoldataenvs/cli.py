"""`python -m smoldataenvs`: mine notebooks into data-analysis question tasks.

Kept beside `repo2rlenv mine` (which mines notebooks too, with the same notebook
options model) for notebook work alone: it adds the answer tolerances, re-runs
references with `--no-reproduce` as the switch, and exits 1 when no task came out.
Its options are `mine`'s shared models plus `NotebookFlags`; the parser is generated.

Exit codes: 0 at least one task emitted, 1 none, 2 usage or set-up error (dataset not
found, no Docker engine while reproduction is on), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError

from repo2rlenv import ui
from repo2rlenv.cli_args import OneLineParser, add_options, option, options_from
from repo2rlenv.cli_options import (
    BaseImageOption,
    ForceOption,
    HubRevision,
    JobsOption,
    JsonReport,
    LlmEndpoint,
    QuietOption,
    RuntimeOption,
)
from repo2rlenv.cli_paths import absolute_paths, input_problems, output_problems, write_report
from repo2rlenv.emit import Event, Skip, emit_all
from repo2rlenv.hub import SourceUnavailable
from repo2rlenv.runtime import Runtime
from smoldataenvs.grader import DEFAULT_ATOL, DEFAULT_RTOL
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import NotebookFlags, NotebookOptions, notebook_options
from smoldataenvs.reproduce import Reproducer

EXIT_OK, EXIT_EMPTY, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 130
PROG = "python -m smoldataenvs"
DESCRIPTION = (
    "Turn Jupyter notebooks with saved outputs into data-analysis question tasks (Harbor "
    "format): one task per reproducible short answer."
)


class Options(
    HubRevision,
    NotebookFlags,
    JobsOption,
    BaseImageOption,
    LlmEndpoint,
    ForceOption,
    JsonReport,
    RuntimeOption,
    QuietOption,
):
    dataset: str = option(
        ..., "a notebook, a folder of notebooks, or a Hub dataset id", metavar="PATH|HUB_ID"
    )
    reproduce: bool = option(
        True,
        "emit without re-running references in Docker (labelled so)",
        flags=("--no-reproduce",),
    )
    atol: float = option(DEFAULT_ATOL, "absolute tolerance", ge=0)
    rtol: float = option(DEFAULT_RTOL, "relative tolerance", ge=0)
    out: Path = option(
        Path("tasks_out"), "output folder; tasks go to DIR/qa/ (default tasks_out)", metavar="DIR"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog=PROG, description=DESCRIPTION)
    add_options(parser, Options)
    return parser


def options_from_command(options: Options) -> NotebookOptions:
    return notebook_options(
        options,
        reproduce=options.reproduce,
        atol=options.atol,
        rtol=options.rtol,
        base_image=options.base_image,
    )


def run(
    options: NotebookOptions,
    out: Path,
    *,
    force: bool,
    json_path: Path | None,
    quiet: bool,
    runtime: Runtime | None = None,
) -> int:
    """`runtime`: where references are re-run (None: the local Docker engine)."""
    skips: list[dict[str, str]] = []
    tasks: list[str] = []

    def record(event: Event) -> None:
        if isinstance(event, Skip):
            skips.append(
                {
                    "record_id": event.record_id,
                    "reason": event.reason,
                    "detail": event.detail,
                    "stage": event.stage,
                }
            )
        elif hasattr(event, "bundle"):
            tasks.append(event.bundle.task_id)

    with ui.record_progress("notebook", enabled=not quiet) as advance:
        reproducer = Reproducer(runtime) if runtime is not None and options.reproduce else None
        pipeline = NotebookPipeline(options, on_notebook=advance, reproducer=reproducer)
        if pipeline.reproducer is not None:
            pipeline.reproducer.check()
        report = emit_all(pipeline, out, on_event=record, overwrite=force)
    payload = {"yield": report.to_dict(), "tasks": tasks, "skips": skips}
    if json_path is None or not write_report(json_path, json.dumps(payload, indent=2) + "\n"):
        ui.yield_table(report, ui.err if json_path is not None else ui.out)
    else:
        ui.yield_table(report)
        ui.info(f"report written to {json_path}")
    tasks_there = report.emitted + report.unchanged  # a rerun's unchanged tasks count
    ui.info(f"{tasks_there} task(s) in {out / 'qa'}")
    return EXIT_OK if tasks_there else EXIT_EMPTY


def main(argv: list[str] | None = None) -> int:
    from repo2rlenv.bundle import BundleConflictError
    from repo2rlenv.runtime import RuntimeUnavailableError
    from repo2rlenv.runtime.registry import RuntimeSpecError, resolve_runtime
    from repo2rlenv.settings import load_settings

    args = options_from(absolute_paths(build_parser().parse_args(argv)), Options)
    problems = input_problems({"--data-dir": args.data_dir}) + output_problems(
        {"--out": args.out}, {"--json": args.json_path}
    )
    for problem in problems:
        ui.error(problem)
    if problems:
        return EXIT_SETUP
    try:
        options = options_from_command(args)
        # Resolved as every repo2rlenv command resolves it; checked by `run` when used.
        runtime = resolve_runtime(args.runtime, load_settings(), check=False)
        return run(
            options,
            args.out,
            force=args.force,
            json_path=args.json_path,
            quiet=args.quiet,
            runtime=runtime,
        )
    except RuntimeSpecError as exc:
        ui.error(str(exc))
    except ValidationError as exc:
        ui.error(f"invalid option: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}")
    except SourceUnavailable as exc:
        ui.error(str(exc))
    except RuntimeUnavailableError as exc:
        ui.error(f"{exc} (or pass --no-reproduce)")
    except BundleConflictError as exc:
        ui.error(f"{exc}")
    except KeyboardInterrupt:
        ui.error("interrupted; containers were removed")
        return EXIT_INTERRUPTED
    return EXIT_SETUP
