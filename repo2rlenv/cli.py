"""`repo2rlenv`: the command line. Parse, call, print; the work lives in the packages.

Exit codes: 0 success (all tasks valid), 1 some task invalid, 2 usage or set-up error
(bad arguments, no tasks found, no Docker engine, a source that cannot be read: the Hub
unreachable, an unknown dataset, revision or split, a folder with nothing readable; a
host tool missing or too old: pip without --uploaded-prior-to for --instances),
130 interrupted. Set-up errors are one line; `--debug` or REPO2RLENV_DEBUG=1 adds the
traceback (docs/failures.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

from repo2rlenv import __version__, ui
from repo2rlenv.cli_args import NON_NEGATIVE, POSITIVE, OneLineParser
from repo2rlenv.cli_paths import (
    Named,
    absolute_paths,
    input_problems,
    output_problems,
    write_report,
)

if TYPE_CHECKING:
    from repo2rlenv.runtime import Runtime
    from repo2rlenv.settings import Settings

EXIT_OK, EXIT_INVALID, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 130
DEBUG_ENV = "REPO2RLENV_DEBUG"


def _runtime(
    flag: str | None, settings: Settings, *, check: bool = True, advice: str = ""
) -> Runtime | None:
    """The runtime `--runtime`/the settings name, checked; None after a one-line error
    (the caller exits 2). One place for every command that runs trials."""
    from repo2rlenv.runtime.registry import (
        RuntimeSpecError,
        RuntimeUnavailableError,
        resolve_runtime,
    )

    try:
        return resolve_runtime(flag, settings, check=check)
    except RuntimeSpecError as exc:
        ui.error(str(exc))
    except RuntimeUnavailableError as exc:
        ui.error(f"{exc}{advice}")
    return None


def _outputs_writable(
    folders: dict[str, Path | None] | None = None,
    files: dict[str, Path | None] | None = None,
    inputs: tuple[Named, Named] = ({}, {}),
) -> bool:
    """Every output a command names can be written and every input folder or file it
    names is there (`inputs`: folders, files): else one line each (exit 2), before any
    work starts."""
    problems = input_problems(*inputs) + output_problems(folders, files)
    for problem in problems:
        ui.error(problem)
    return not problems


def _validate(args: argparse.Namespace) -> int:
    from repo2rlenv.bundle import find_task_dirs
    from repo2rlenv.settings import load_settings
    from repo2rlenv.validate import ResultCache, ValidateOptions, validate_tasks

    missing = [p for p in args.paths if not p.is_dir()]
    if missing:
        ui.error(f"not a folder: {', '.join(map(str, missing))}; give task folders or their parent")
        return EXIT_SETUP
    if not _outputs_writable({"--cache-dir": args.cache_dir}, {"--json": args.json}):
        return EXIT_SETUP
    task_dirs = find_task_dirs(args.paths, unconfigured=True)
    if not task_dirs:
        ui.error(f"no task.toml found under {', '.join(map(str, args.paths))}")
        return EXIT_SETUP
    if not _jobs_in_range(args.jobs):
        return EXIT_SETUP
    options = ValidateOptions(
        run=not args.no_run,
        reruns=args.reruns,
        jobs=args.jobs,
        use_cache=not args.no_cache,
        write_labels=args.write_labels,
        probes=not args.no_probes,
    )
    settings = load_settings()
    options.strict_secrets = args.strict_secrets or settings.strict_secrets
    runtime = _runtime(args.runtime, settings, check=options.run)
    if runtime is None:
        return EXIT_SETUP
    options.runtime = runtime.name
    if not options.run:
        runtime = None
    cache_root = args.cache_dir or settings.cache_dir
    cache = ResultCache(cache_root) if options.use_cache else None
    with ui.validate_progress(len(task_dirs), enabled=not args.quiet) as progress:
        report = validate_tasks(task_dirs, options, runtime, cache, progress)
    if args.json is not None and str(args.json) == "-":
        sys.stdout.write(report.to_json())
    else:
        ui.validation_table(report)
        if args.json is not None:
            args.json.write_text(report.to_json())
            ui.info(f"report written to {args.json}")
    return report.exit_code


def _jobs_in_range(jobs: int) -> bool:
    """`-j` of validate and mine: up to hundreds, for trials on a hosted sandbox provider
    (docs/harbor-runtime.md); outside the range, one line instead of a validation dump."""
    from repo2rlenv.validate.report import MAX_JOBS

    if 1 <= jobs <= MAX_JOBS:
        return True
    ui.error(f"-j must be between 1 and {MAX_JOBS} (got {jobs})")
    return False


def _mine(args: argparse.Namespace) -> int:
    """Sessions and notebooks in one run: each pipeline that finds input writes into OUT
    and prints its own yield table; the manifest covers both."""
    import json

    from repo2rlenv.emit import emit_all, installed_sources
    from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
    from repo2rlenv.settings import load_settings
    from repo2rlenv.source import resolve_source
    from repo2rlenv.validate import ResultCache

    if not _jobs_in_range(args.jobs):
        return EXIT_SETUP
    inputs = (
        {"--exclude": args.exclude, "--data-dir": getattr(args, "data_dir", None)},
        {"--repo-map": args.repo_map},
    )
    if not _outputs_writable(
        {"--out": args.out, "--repo-cache": args.repo_cache}, {"--json": args.json}, inputs
    ):
        return EXIT_SETUP
    source = resolve_source(args.dataset, args.revision)  # the one resolution; fast
    settings = load_settings()
    base_image = args.base_image or settings.base_image
    runtime = None
    if not args.no_validate:
        advice = " (or mine with --no-validate: tasks are then labelled unverified)"
        runtime = _runtime(args.runtime, settings, advice=advice)
        if runtime is None:
            return EXIT_SETUP
    from repo2rlenv.mining.instances import InstanceError

    try:
        sessions = SessionPipeline(
            MineOptions(
                dataset=args.dataset,
                split=args.split,
                revision=args.revision,
                limit=args.limit,
                streaming=args.streaming,
                jobs=args.jobs,
                validate_tasks=not args.no_validate,
                reruns=args.reruns,
                exclude=args.exclude,
                base_image=base_image,
                llm=args.llm,
                llm_model=args.llm_model,
                repo_map=args.repo_map,
                repo_cache=args.repo_cache,
                instances=args.instances,
                exclude_instances=args.exclude_instances,
                max_repo_files=args.max_repo_files,
                max_repo_bytes=args.max_repo_bytes,
                strict_secrets=args.strict_secrets or settings.strict_secrets,
            ),
            runtime,
            ResultCache(settings.cache_dir),
            source=source,
        )
    except InstanceError as exc:
        ui.error(str(exc))
        return EXIT_SETUP
    pipelines: list = [sessions]
    for plugin in installed_sources():
        found = plugin.pipeline(args, source=source, base_image=base_image, runtime=runtime)
        if found is not None:
            pipelines.append(found)
    reports = []
    # `--json -`: the report is standard output, so the tables go to stderr beside it.
    console = ui.err if args.json is not None and str(args.json) == "-" else ui.out
    for pipeline in pipelines:
        proven = not args.no_validate if pipeline is sessions else None
        with ui.mining_progress(enabled=not args.quiet, proven=proven) as on_event:
            report = emit_all(pipeline, args.out, on_event=on_event, overwrite=args.force)
        if report.records_read or (pipeline is sessions and len(pipelines) == 1):
            ui.yield_table(report, console)
        reports.append(report.to_dict())
    if args.json is not None:
        payload = reports[0] if len(reports) == 1 else {"pipelines": reports}
        if write_report(args.json, json.dumps(payload, indent=2, sort_keys=True) + "\n"):
            ui.info(f"yield report written to {args.json}")
    return EXIT_OK


def _setup(args: argparse.Namespace) -> int:
    from repo2rlenv.runtime.base_image import ensure_base_image
    from repo2rlenv.runtime.engine import EngineError, ensure_engine
    from repo2rlenv.settings import load_settings

    log: list[str] = []
    try:
        state = ensure_engine(log)
        ui.info(f"docker engine: {state}")
        if not args.skip_base_image:
            settings, action = ensure_base_image(load_settings(), log)
            ui.info(f"base image: {settings.base_image} ({action})")
    except EngineError as exc:
        ui.setup_log(log)
        ui.error(str(exc))
        return EXIT_SETUP
    ui.setup_log(log)
    return EXIT_OK


def _clean(args: argparse.Namespace) -> int:
    import docker
    from docker.errors import DockerException

    from repo2rlenv.runtime.cleanup import clean

    try:
        client = docker.from_env(timeout=60)
        client.ping()
    except (DockerException, OSError) as exc:
        ui.error(f"no Docker engine answers ({exc}); start one (repo2rlenv setup)")
        return EXIT_SETUP
    report = clean(client, dry_run=args.dry_run, build_cache=args.build_cache)
    ui.clean_summary(report, dry_run=args.dry_run)
    return EXIT_OK


def _examples(args: argparse.Namespace) -> int:
    from repo2rlenv.bundle import BundleConflictError, write_bundle
    from repo2rlenv.examples import example_bundles
    from repo2rlenv.settings import load_settings

    if not _outputs_writable({"DIR": args.out}):
        return EXIT_SETUP
    base_image = args.base_image or load_settings().base_image
    for bundle in example_bundles(base_image):
        try:
            outcome = write_bundle(bundle, args.out, overwrite=args.force)
        except BundleConflictError as exc:
            ui.error(str(exc))
            return EXIT_SETUP
        ui.info(f"{outcome.status:>9}  {outcome.path}")
    return EXIT_OK


def _difficulty(args: argparse.Namespace) -> int:
    from repo2rlenv.cli_paths import absolute
    from repo2rlenv.difficulty.command import DifficultyRequest, label_tasks
    from repo2rlenv.difficulty.measure import MeasureOptions, is_endpoint
    from repo2rlenv.settings import load_settings

    work_dir = args.work_dir if args.model is not None else None
    inputs = ({"--base-model": args.base_model}, {})
    if not _outputs_writable({"--work-dir": work_dir}, {"--json": args.json}, inputs):
        return EXIT_SETUP
    # Only attempts (--model) run trials; a name no runtime has is refused either way.
    runtime = _runtime(args.runtime, load_settings(), check=args.model is not None)
    if runtime is None:
        return EXIT_SETUP
    options = None
    if args.model is not None:
        model = args.model if is_endpoint(args.model) else str(absolute(Path(args.model)))
        options = MeasureOptions(
            model=model,  # an adapter folder goes to the vLLM server: absolute
            model_name=args.model_name,
            k=args.k,
            harness=args.harness,
            server_url=args.server_url,
            base_model=args.base_model,
            jobs=args.jobs,
            max_tokens=args.max_tokens,
            work_dir=args.work_dir,
            runtime=runtime.name,
        )
    request = DifficultyRequest(
        paths=args.paths, measure=options, json_path=args.json, dry_run=args.dry_run
    )
    return label_tasks(request)


def _add_runtime_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--runtime",
        metavar="NAME",
        help="where trials run: docker (the local engine) or harbor[:ENV] (Harbor's "
        "environment ENV: docker, daytona, modal, e2b, ...); default: the settings "
        "file's `runtime`, else docker (docs/harbor-runtime.md)",
    )


def build_parser() -> argparse.ArgumentParser:
    from repo2rlenv.emit import installed_sources

    parser = OneLineParser(
        prog="repo2rlenv",
        description="Turn published coding-agent sessions into verified Harbor tasks.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the traceback behind a one-line error (also {DEBUG_ENV}=1)",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    validate = commands.add_parser(
        "validate",
        help="prove tasks in real containers",
        description="Static checks on every task, then real trials in Docker: the reference "
        "must score 1.0, the untouched start state 0.0, and both must hold on reruns. "
        "Exit 0 when all tasks are valid, 1 when some are not, 2 on a set-up error.",
    )
    validate.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="task folders, or folders to search for task.toml",
    )
    validate.add_argument("--no-run", action="store_true", help="static checks only")
    validate.add_argument(
        "--strict-secrets",
        action="store_true",
        help="count secret-shaped text in files that are blobs of the anchored public "
        "commit as errors (default: warnings, secrets.public-checkout; settings "
        "strict_secrets)",
    )
    validate.add_argument(
        "--reruns",
        type=NON_NEGATIVE,
        default=2,
        metavar="N",
        help="extra reference and no-op runs that must agree (default 2)",
    )
    validate.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=2,
        metavar="N",
        help="tasks checked in parallel (default 2; up to 512 for hosted runtimes)",
    )
    validate.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the JSON report to FILE ('-' prints it instead of the table)",
    )
    validate.add_argument(
        "--write-labels",
        action="store_true",
        help="write the evaluation label into each task.toml (atomically; without times or "
        "a check date, so a task's bytes change only when its verdict does)",
    )
    validate.add_argument(
        "--no-probes",
        action="store_true",
        help="skip the forgery probes (conftest hook, sitecustomize, fake pytest, "
        "pre-written reward, overwritten tests); on by default with Docker",
    )
    validate.add_argument(
        "--no-cache", action="store_true", help="re-run trials even for unchanged tasks"
    )
    validate.add_argument("--cache-dir", type=Path, help="result cache folder")
    _add_runtime_argument(validate)
    validate.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    validate.set_defaults(handler=_validate)

    mine = commands.add_parser(
        "mine",
        help="mine published agent sessions into Harbor tasks",
        description="Reads a Hub dataset id or a local file/folder of sessions (ATIF, pi, "
        "Claude Code, Codex, opencode, Hermes, OpenAI-message rows), replays each session and "
        "writes repair/build/extend/qa tasks to OUT/<kind>/<task-id>/ plus OUT/manifest.jsonl. "
        "Jupyter notebooks in the source become data-analysis qa tasks (smoldataenvs, an "
        "installed source). "
        "Every task is proven in Docker unless --no-validate. Rerunning resumes: finished "
        "tasks are left as they are.",
    )
    mine.add_argument("--dataset", required=True, help="Hub dataset id, or a local file/folder")
    mine.add_argument("--split", default="train", help="dataset split (default train)")
    mine.add_argument("--revision", help="dataset revision (branch, tag or commit)")
    mine.add_argument(
        "--limit", type=POSITIVE, metavar="N", help="read at most N records (default: all)"
    )
    mine.add_argument("--streaming", action="store_true", help="stream a large Hub dataset")
    mine.add_argument(
        "--out",
        type=Path,
        default=Path("tasks_out"),
        metavar="DIR",
        help="output folder (default tasks_out)",
    )
    mine.add_argument("-j", "--jobs", type=int, default=2, help="records in parallel (default 2)")
    mine.add_argument(
        "--no-validate",
        action="store_true",
        help="skip the Docker oracle check (tasks stay unverified)",
    )
    mine.add_argument(
        "--reruns",
        type=NON_NEGATIVE,
        default=1,
        metavar="N",
        help="extra oracle runs that must agree (default 1)",
    )
    mine.add_argument(
        "--exclude",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="eval-set task folder: near-duplicates of its tasks are skipped",
    )
    mine.add_argument("--base-image", help="FROM image of the tasks (default: configured)")
    mine.add_argument(
        "--repo-map",
        type=Path,
        metavar="FILE",
        help="JSON/TOML mapping repository URLs to local paths or mirrors, for sessions "
        "that name the repository and commit they worked on",
    )
    mine.add_argument(
        "--repo-cache",
        type=Path,
        metavar="DIR",
        help="where repository mirrors are kept (default: the cache folder)",
    )
    mine.add_argument(
        "--max-repo-files",
        type=POSITIVE,
        metavar="N",
        help="largest repository checkout read, in text files (default: settings "
        "max_repo_files, 20000); a larger one is skipped as anchor.repo-too-large",
    )
    mine.add_argument(
        "--max-repo-bytes",
        type=POSITIVE,
        metavar="N",
        help="largest repository checkout read, in bytes (default: settings "
        "max_repo_bytes, 300000000)",
    )
    mine.add_argument(
        "--strict-secrets",
        action="store_true",
        help="refuse a task whose start state holds secret-shaped text even in files that "
        "are exactly the anchored public commit's blobs (default: exempt and reported; "
        "settings strict_secrets)",
    )
    mine.add_argument(
        "--instances",
        metavar="FILE|HUB_ID",
        help="SWE-bench-style instance table (instance_id, repo, base_commit...): joins "
        "each SWE-agent / mini-swe-agent / OpenHands run to its repository and commit",
    )
    mine.add_argument(
        "--exclude-instances",
        action="append",
        default=[],
        metavar="FILE|HUB_ID",
        help="instance table (e.g. an evaluation set): runs of its instances are skipped "
        "(instance.excluded)",
    )
    for source in installed_sources():
        source.add_arguments(mine)
    mine.add_argument(
        "--llm",
        metavar="URL",
        help="OpenAI-compatible base URL used to rephrase instructions (optional; "
        "a rewrite that drops a backticked name is discarded; answers are cached)",
    )
    mine.add_argument(
        "--llm-model", default="default", help="model name for --llm (default: 'default')"
    )
    mine.add_argument(
        "--json",
        type=Path,
        metavar="FILE",
        help="write the yield report as JSON ('-' prints it; the tables then go to stderr)",
    )
    mine.add_argument("--force", action="store_true", help="replace tasks whose content changed")
    _add_runtime_argument(mine)
    mine.add_argument("-q", "--quiet", action="store_true", help="no progress display")
    mine.add_argument(
        "--debug",
        action="store_true",
        default=argparse.SUPPRESS,
        help=f"show the traceback behind a one-line error (also {DEBUG_ENV}=1)",
    )
    mine.set_defaults(handler=_mine)

    setup = commands.add_parser(
        "setup",
        help="start a Docker engine and make the base image available",
        description="Installs and starts Docker when absent (root, apt), then pulls the "
        "configured base image or, offline, builds one from Debian packages.",
    )
    setup.add_argument(
        "--skip-base-image",
        action="store_true",
        help="only make sure a Docker engine runs; leave the base image as it is "
        "(default: pull or build it)",
    )
    setup.set_defaults(handler=_setup)

    clean_parser = commands.add_parser(
        "clean",
        help="remove the Docker images this toolkit built, and say how much it freed",
        description="Removes every image labelled rlenv-harvest (task environments, "
        "harness layers); an image a container still uses is kept and named. The next "
        "run rebuilds what it needs.",
    )
    clean_parser.add_argument(
        "--dry-run", action="store_true", help="list the images, remove nothing"
    )
    clean_parser.add_argument(
        "--build-cache",
        action="store_true",
        help="also prune the engine's unused build cache (all of it, not only ours: the "
        "engine does not record who made it; default: left alone)",
    )
    clean_parser.set_defaults(handler=_clean)

    examples = commands.add_parser(
        "examples",
        help="write the bundled example tasks (one per kind)",
        description="Writes the hand-made example tasks through the bundle writer.",
    )
    examples.add_argument(
        "out",
        type=Path,
        metavar="DIR",
        help="folder the example tasks are written into (created if absent), e.g. tasks_out",
    )
    examples.add_argument("--base-image", help="FROM image (default: the configured one)")
    examples.add_argument("--force", action="store_true", help="replace different tasks")
    examples.set_defaults(handler=_examples)

    difficulty = commands.add_parser(
        "difficulty",
        help="label task difficulty by solve rate (or a marked heuristic)",
        description="With --model, runs k attempts per task in a real harness and labels "
        "each task trivial/easy/medium/hard/unsolved by its solve rate; without, writes a "
        "heuristic label (reference change size, files touched, hidden tests) marked "
        "source=heuristic. Labels go into [metadata.repo2rlenv.difficulty] of task.toml.",
    )
    difficulty.add_argument(
        "paths",
        nargs="+",
        type=Path,
        metavar="DIR",
        help="task folders, or folders to search for task.toml",
    )
    difficulty.add_argument(
        "--model", help="OpenAI-compatible endpoint URL, or a peft adapter folder"
    )
    difficulty.add_argument("-k", type=POSITIVE, default=8, help="attempts per task (default 8)")
    difficulty.add_argument(
        "--harness",
        choices=("pi", "opencode", "hermes"),
        default="pi",
        help="agent harness the attempts run in (default pi)",
    )
    difficulty.add_argument(
        "--model-name", default="default", help="model name at the endpoint (default: 'default')"
    )
    difficulty.add_argument("--server-url", help="vLLM server (LoRA on) for an adapter --model")
    difficulty.add_argument("--base-model", type=Path, help="model folder to serve an adapter on")
    difficulty.add_argument(
        "-j", "--jobs", type=POSITIVE, default=2, help="attempts in flight (default 2)"
    )
    difficulty.add_argument(
        "--max-tokens", type=POSITIVE, default=1024, help="per model call (default 1024)"
    )
    difficulty.add_argument(
        "--work-dir",
        type=Path,
        default=Path("tasks_out/difficulty"),
        help="attempt ledgers (default tasks_out/difficulty)",
    )
    difficulty.add_argument(
        "--json", type=Path, metavar="FILE", help="labels as JSON ('-' prints them)"
    )
    difficulty.add_argument("--dry-run", action="store_true", help="show labels, write none")
    _add_runtime_argument(difficulty)
    difficulty.set_defaults(handler=_difficulty)
    return parser


def debugging(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get(DEBUG_ENV, "") not in ("", "0")


def main(argv: list[str] | None = None) -> int:
    from repo2rlenv.hosttools import HostToolError
    from repo2rlenv.hub import SourceUnavailable

    args = absolute_paths(build_parser().parse_args(argv))
    try:
        return args.handler(args)
    except (SourceUnavailable, HostToolError) as exc:
        if debugging(args):
            traceback.print_exc()
        ui.error(str(exc))
        return EXIT_SETUP
    except KeyboardInterrupt:
        ui.error("interrupted; containers were removed")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
