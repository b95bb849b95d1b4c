"""`python -m train`: load and split the tasks, report their imbalance, show the plan.

Exit codes: 0 the plan was made (dry run) or the run finished, 1 a trainer failed,
2 usage or set-up error (no tasks, a bad config, or a real run that cannot start here),
130 interrupted. CPU presets (`tiny-cpu`) run for real here (train.launch.run); a GPU preset
without its GPUs says what it would need and stops, rather than pretending to train.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Literal

from repo2rlenv.cli_args import OneLineParser, add_options, option, options_from
from repo2rlenv.cli_options import RuntimeOption
from repo2rlenv.cli_paths import absolute_paths, output_problems
from repo2rlenv.ui import error, info, warn, written
from train import ui
from train.data.config import (
    PRESETS,
    ConfigError,
    TrainConfig,
    config_to_toml,
    parse_override,
    resolve_config,
)
from train.data.imbalance import ImbalanceReport, build_report
from train.data.split import Split, split_tasks, write_text_atomic
from train.data.tasks import LoadResult, load_tasks
from train.launch.plan import Plan, build_plan, count_gpus, training_blockers

EXIT_OK, EXIT_FAILED, EXIT_SETUP, EXIT_INTERRUPTED = 0, 1, 2, 130
DEFAULT_OUT = Path("tasks_out/train")


DESCRIPTION = (
    "Split a folder of Harbor tasks into train and held-out, report their imbalance (table, "
    "JSON, PNG chart) and show what a guarded GRPO run would start. Without a GPU and a "
    "vLLM server this is a dry run, except for CPU presets. Exit 0 when the plan was made "
    "or the run finished, 1 when a trainer failed, 2 on a usage or set-up error."
)
EPILOG = (
    "Settings resolve in this order, last wins: the preset, the --config file, --set "
    "overrides, then the dedicated flags. Presets: lfm2.5-24b-a2b (200 steps, 4 GPUs, token "
    "budget 131072), lfm3-1.7b (400 steps, 2 GPUs, 65536, three trainers on one GPU), "
    "twil-8b (300 steps, 4 GPUs, 12 sessions per trainer), tiny-cpu (2 steps on this "
    "machine's CPU: tiny offline model, vLLM CPU server, the pi harness)."
)


class TrainArgs(RuntimeOption):
    """The options of `python -m train`; the parser is generated from them."""

    tasks: Path = option(
        ..., "folder of Harbor task folders (searched recursively; ours or foreign)", metavar="DIR"
    )
    config: Path | None = option(
        None,
        "training config (.toml, .yaml or .yml); see the resolved config in the output",
        metavar="FILE",
    )
    preset: Literal[tuple(sorted(PRESETS))] | None = option(  # type: ignore[valid-type]
        None, "model set-up of the public recipe (default: the config's, else lfm2.5-24b-a2b)"
    )
    overrides: list[str] = option(
        [],
        "override any config key, e.g. --set steps=50 --set split.max_fraction=0.3 "
        "(repeatable; values are read as TOML, else as text)",
        flags=("--set",),
        metavar="KEY=VALUE",
    )
    out: Path = option(
        DEFAULT_OUT,
        "where split.json, imbalance.json, imbalance.png, config.toml and plan.json go",
        metavar="DIR",
    )
    only_verified: bool = option(
        False,
        "keep only tasks whose evaluation label is 'verified' (repo2rlenv validate --write-labels)",
    )
    skip_invalid: bool = option(
        False,
        "leave out task folders that cannot be read (no or a broken task.toml) and go on; by "
        "default they are listed and nothing starts",
    )
    rebalance: bool = option(
        True, "sample train tasks uniformly instead of with the kind-balancing weights"
    )
    seed: int | None = option(None, "split seed (split.seed, default 0)")
    group_by: Literal["record", "dataset"] | None = option(
        None,
        "keep each source record, or each whole dataset, on one side (split.group_by, "
        "default record)",
    )
    holdout_fraction: float | None = option(
        None,
        "most of a source group's tasks ever held out (split.max_fraction, default 0.25)",
        metavar="F",
        ge=0,
    )
    server_url: str | None = option(
        None, "base URL of a running vLLM server (server.url)", metavar="URL"
    )
    resume: bool = option(
        False,
        "continue each trainer from its latest checkpoint under --out (adapter versions "
        "keep counting)",
    )
    dry_run: bool | None = option(
        None,
        "print the split, report, config and plan, then exit (default: on when no GPU and no "
        "vLLM server is configured, off for CPU presets such as tiny-cpu, which train here; "
        "--no-dry-run asks for a real run)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m train", description=DESCRIPTION, epilog=EPILOG)
    add_options(parser, TrainArgs)
    return parser


def _overrides(args: TrainArgs) -> list[tuple[str, Any]]:
    pairs = [parse_override(text) for text in args.overrides]
    flags = {
        "split.seed": args.seed,
        "split.group_by": args.group_by,
        "split.max_fraction": args.holdout_fraction,
        "server.url": args.server_url,
        "runtime": args.runtime,
    }
    pairs += [(key, value) for key, value in flags.items() if value is not None]
    if not args.rebalance:
        pairs.append(("imbalance.rebalance", False))
    return pairs


def _real_run(config: TrainConfig, gpus: int) -> int:
    blockers = training_blockers(config, gpus)
    if blockers:
        error("a training run needs " + "; and ".join(blockers))
    error(
        "the guarded GRPO loop is not part of this version yet; "
        "`python -m train --tasks DIR --dry-run` shows the split, report and plan"
    )
    return EXIT_SETUP


def run(args: TrainArgs) -> int:
    try:
        config = resolve_config(args.config, args.preset, _overrides(args))
    except ConfigError as exc:
        error(str(exc))
        return EXIT_SETUP
    gpus = count_gpus()
    dry_run, why = args.dry_run, "--dry-run"
    if dry_run is None:
        dry_run, why = config.server.url is None and gpus == 0, "no GPU and no vLLM server"
        dry_run = dry_run and config.device != "cpu"
    if not dry_run and config.device != "cpu":
        return _real_run(config, gpus)
    try:
        loaded = load_tasks(args.tasks, only_verified=args.only_verified)
    except OSError as exc:
        error(f"{exc}; give the folder that holds the task folders")
        return EXIT_SETUP
    ui.load_summary(loaded)
    if loaded.invalid and not args.skip_invalid:
        error(
            f"{len(loaded.invalid)} task folder(s) under {args.tasks} cannot be used (listed "
            "above); fix them, or pass --skip-invalid to leave them out"
        )
        return EXIT_SETUP
    if not loaded.tasks:
        hint = "; label them with `repo2rlenv validate --write-labels`" if loaded.filtered else ""
        error(f"no usable task under {args.tasks} ({loaded.found} task folders found){hint}")
        return EXIT_SETUP
    split = split_tasks(loaded.tasks, config.split)
    report = build_report(split, config.imbalance)
    plan = build_plan(config, len(split.ids("train")), len(split.ids("heldout")),
                      report.kind_weights)  # fmt: skip
    ui.split_table(split)
    ui.imbalance_tables(report)
    toml_text = config_to_toml(config)
    ui.config_view(toml_text)
    ui.plan_tables(plan)
    try:
        paths = _write_outputs(args.out, split, report, plan, toml_text, loaded)
    except OSError as exc:
        error(f"cannot write to {args.out}: {exc}")
        return EXIT_SETUP
    written(paths)
    if not dry_run:
        return _train(config, split, loaded, args)
    info(f"dry run ({why}): nothing was started")
    return EXIT_OK


def _rollout_runtime(config: TrainConfig) -> str | None:
    """The runtime rollouts run on (the config's `runtime`, else repo2rlenv's settings,
    else docker), resolved and checked as every repo2rlenv command does it and able to
    run harness trials; its name, or None after a one-line error (exit 2)."""
    from train.harnesses.runtimes import RuntimeChoiceError, resolve_harness_runtime

    try:
        runtime, _ = resolve_harness_runtime(config.runtime, "run.runtime-unsupported")
    except RuntimeChoiceError as exc:
        error(str(exc))
        return None
    return runtime.name


def _train(config: TrainConfig, split: Split, loaded: LoadResult, args: TrainArgs) -> int:
    from train.launch.errors import FAILED_CODES, RunError
    from train.launch.run import run_training
    from train.rollout.scheduler import TaskRef

    runtime = _rollout_runtime(config)
    if runtime is None:
        return EXIT_SETUP
    config = config.model_copy(update={"runtime": runtime})
    train_ids = set(split.ids("train"))
    tasks = [
        TaskRef(task_id=task.task_id, task_dir=task.path)
        for task in loaded.tasks
        if task.task_id in train_ids
    ]
    try:
        result = run_training(config, tasks, args.out, resume=args.resume)
    except RunError as exc:
        error(str(exc))
        return EXIT_FAILED if str(exc).startswith(FAILED_CODES) else EXIT_SETUP
    for harness, steps in result.steps.items():
        info(
            f"{harness}: {steps} optimizer steps, adapter v{result.versions[harness]} "
            f"in {result.adapters[harness]}"
        )
    return EXIT_OK


def _write_outputs(
    out: Path,
    split: Split,
    report: ImbalanceReport,
    plan: Plan,
    toml_text: str,
    loaded: LoadResult,
) -> list[Path]:
    report_data = report.to_dict()
    report_data["load"] = {
        "found": loaded.found,
        "loaded": len(loaded.tasks),
        "invalid": [task.model_dump() for task in loaded.invalid],
        "filtered": dict(sorted(loaded.filtered.items())),
    }
    paths = [
        split.write(out / "split.json"),
        write_text_atomic(
            out / "imbalance.json", json.dumps(report_data, indent=2, sort_keys=True) + "\n"
        ),
        write_text_atomic(out / "config.toml", toml_text),
        write_text_atomic(
            out / "plan.json", json.dumps(plan.model_dump(mode="json"), indent=2) + "\n"
        ),
    ]
    try:
        from train.launch.plot import write_chart

        paths.append(write_chart(report, out / "imbalance.png"))
    except ImportError:
        warn("matplotlib is not installed: no chart (pip install matplotlib)")
    return paths


def main(argv: list[str] | None = None) -> int:
    args = options_from(absolute_paths(build_parser().parse_args(argv)), TrainArgs)
    problems = output_problems({"--out": args.out})
    for problem in problems:
        error(problem)
    if problems:
        return EXIT_SETUP
    try:
        return run(args)
    except ConfigError as exc:
        error(str(exc))
        return EXIT_SETUP
    except KeyboardInterrupt:
        error("interrupted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
