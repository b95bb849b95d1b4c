"""`python -m smoldataenvs`: mine notebooks into data-analysis question tasks.

Exit codes: 0 at least one task emitted, 1 none, 2 usage or set-up error (dataset not
found, no Docker engine while reproduction is on), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from pydantic import ValidationError

from repo2rlenv import ui
from repo2rlenv.cli_args import POSITIVE, OneLineParser, float_at_least
from repo2rlenv.cli_paths import absolute_paths, input_problems, output_problems, write_report
from repo2rlenv.emit import Event, Skip, emit_all
from repo2rlenv.runtime import Runtime
from smoldataenvs.notebook_miner import NotebookPipeline
from smoldataenvs.options import NotebookOptions, add_notebook_arguments, options_from_args
from smoldataenvs.reproduce import Reproducer
from smoldataenvs.sources import SourceError

EXIT_OK, EXIT_EMPTY, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The notebook options, shared with `repo2rlenv mine`."""
    parser.add_argument(
        "--dataset",
        required=True,
        metavar="PATH|HUB_ID",
        help="a notebook, a folder of notebooks, or a Hub dataset id",
    )
    parser.add_argument("--revision", help="Hub revision (branch, tag or commit)")
    add_notebook_arguments(parser)
    parser.add_argument(
        "--no-reproduce",
        action="store_true",
        help="emit without re-running references in Docker (labelled so)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=POSITIVE,
        default=2,
        metavar="N",
        help="reproduction trials in parallel (default 2)",
    )
    parser.add_argument(
        "--atol", type=float_at_least(0), default=1e-3, help="absolute tolerance (default 1e-3)"
    )
    parser.add_argument(
        "--rtol", type=float_at_least(0), default=1e-3, help="relative tolerance (default 1e-3)"
    )
    parser.add_argument("--base-image", help="FROM image (default: the configured one)")
    parser.add_argument("--llm", metavar="URL", help="OpenAI-compatible base URL to rephrase")
    parser.add_argument("--llm-model", help="model name at --llm (default: the first served)")


def options_from(args: argparse.Namespace) -> NotebookOptions:
    return options_from_args(
        args,
        reproduce=not args.no_reproduce,
        atol=args.atol,
        rtol=args.rtol,
        base_image=args.base_image,
        llm_model=args.llm_model,
    )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m smoldataenvs",
        description="Turn Jupyter notebooks with saved outputs into data-analysis question "
        "tasks (Harbor format): one task per reproducible short answer.",
    )
    add_arguments(parser)
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("tasks_out"),
        metavar="DIR",
        help="output folder; tasks go to DIR/qa/ (default tasks_out)",
    )
    parser.add_argument("--force", action="store_true", help="replace different tasks")
    parser.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the yield and every skip as JSON ('-' = stdout)",
    )
    parser.add_argument(
        "--runtime",
        metavar="NAME",
        help="where references are re-run: docker or harbor[:ENV], as `repo2rlenv "
        "validate --runtime`; default: the settings file's `runtime`, else docker",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    return parser


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

    args = absolute_paths(build_parser().parse_args(argv))
    problems = input_problems({"--data-dir": args.data_dir}) + output_problems(
        {"--out": args.out}, {"--json": args.json}
    )
    for problem in problems:
        ui.error(problem)
    if problems:
        return EXIT_SETUP
    try:
        options = options_from(args)
        # Resolved as every repo2rlenv command resolves it; checked by `run` when used.
        runtime = resolve_runtime(args.runtime, load_settings(), check=False)
        return run(
            options,
            args.out,
            force=args.force,
            json_path=args.json,
            quiet=args.quiet,
            runtime=runtime,
        )
    except RuntimeSpecError as exc:
        ui.error(str(exc))
    except ValidationError as exc:
        ui.error(f"invalid option: {exc.errors()[0]['loc'][0]}: {exc.errors()[0]['msg']}")
    except SourceError as exc:
        ui.error(str(exc))
    except RuntimeUnavailableError as exc:
        ui.error(f"{exc} (or pass --no-reproduce)")
    except BundleConflictError as exc:
        ui.error(f"{exc}")
    except KeyboardInterrupt:
        ui.error("interrupted; containers were removed")
        return EXIT_INTERRUPTED
    return EXIT_SETUP
