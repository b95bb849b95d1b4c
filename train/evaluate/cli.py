"""`python -m train eval`: evaluate checkpoints against the base model on held-out tasks.

Exit codes: 0 the report was written (also when some attempts failed: the report counts
them), 2 usage or set-up error (no tasks, no adapter folder, no server or harness),
130 interrupted (finished attempts are in the ledger; rerun to continue).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Literal

from repo2rlenv.cli_args import OneLineParser, add_options, option, options_from
from repo2rlenv.cli_options import RuntimeOption
from repo2rlenv.cli_paths import absolute_paths
from repo2rlenv.runtime import Runtime
from repo2rlenv.ui import error, info, warn, written
from train.data.config import HARNESSES
from train.data.split import SplitFileError, read_heldout, write_text_atomic
from train.data.tasks import load_tasks
from train.evaluate.ledger import Ledger
from train.evaluate.plan import CheckpointError, EvalPlan, EvalTask, find_checkpoints
from train.evaluate.report import EvalReport, build_report
from train.rollout import ui

EXIT_OK, EXIT_SETUP, EXIT_INTERRUPTED = 0, 2, 130
DEFAULT_OUT = Path("tasks_out/eval")


DESCRIPTION = (
    "Serve the base model once and every checkpoint as a LoRA adapter on one vLLM server "
    "(in waves no larger than its adapter slots), run k attempts per task per checkpoint "
    "in a real harness, and report pass@1 with a 95% Wilson interval, tool calls per "
    "solved task, blocked calls and the change against the base model (table, eval.json, "
    "eval.png). Attempts go to a ledger: rerunning continues a stopped evaluation. Exit 0 "
    "report written, 2 set-up error, 130 interrupted."
)


class EvalArgs(RuntimeOption):
    """The options of `python -m train eval`; the parser is generated from them."""

    tasks: Path = option(..., "held-out task folders (searched recursively)", metavar="DIR")
    split: Path | None = option(
        None,
        "a split.json written by `python -m train`: evaluate only its held-out tasks "
        "(default: every task under --tasks)",
        metavar="FILE",
    )
    checkpoints: list[Path] = option(
        ...,
        "adapter folders (adapter_config.json), or folders holding them, e.g. <out>/pi/adapters",
        metavar="DIR",
        nargs="+",
    )
    harness: Literal[HARNESSES] = option(..., "agent harness the attempts run in")  # type: ignore[valid-type]
    k: int = option(4, "attempts per task per checkpoint", flags=("-k",), ge=1)
    out: Path = option(DEFAULT_OUT, "ledger.jsonl, eval.json and eval.png", metavar="DIR")
    base_model: Path | None = option(
        None,
        "model folder to start a vLLM server with (LoRA on); or give --server-url",
        metavar="DIR",
    )
    server_url: str | None = option(
        None, "a running vLLM server started with --enable-lora", metavar="URL"
    )
    served_model_name: str = option("base", "the base model's name on the server", metavar="NAME")
    slots: int = option(4, "adapters loaded at once, the server's --max-loras", ge=1)
    max_lora_rank: int = option(32, "the server's", metavar="R", ge=1)
    max_tokens: int = option(1024, "tokens per model call of the harness", ge=1)
    jobs: int = option(4, "attempts in flight", flags=("-j", "--jobs"), ge=1)
    retries: int = option(1, "reruns of a failed attempt before it counts as failed", ge=0)
    base: bool = option(True, "skip the base model (no change-vs-base column)")
    report_only: bool = option(False, "write the report from the ledger without running anything")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m train eval", description=DESCRIPTION)
    add_options(parser, EvalArgs)
    return parser


def _plan(args: EvalArgs) -> EvalPlan:
    loaded = load_tasks(args.tasks)
    tasks = loaded.tasks
    if args.split is not None:
        wanted = set(read_heldout(args.split))
        tasks = [t for t in tasks if t.task_id in wanted]
        absent = wanted - {t.task_id for t in tasks}
        if absent:
            warn(f"{len(absent)} held-out tasks of {args.split} are not under {args.tasks}")
        if not tasks:
            raise CheckpointError(f"no held-out task of {args.split} is under {args.tasks}")
    elif not tasks:
        raise CheckpointError(f"no usable task under {args.tasks} ({loaded.found} found)")
    return EvalPlan(
        harness=args.harness,
        k=args.k,
        base_model=args.served_model_name,
        include_base=args.base,
        checkpoints=find_checkpoints(args.checkpoints),
        tasks=[EvalTask(task_id=t.task_id, task_dir=t.path) for t in tasks],
        slots=args.slots,
    )


def write_report(report: EvalReport, out: Path) -> list[Path]:
    paths = [write_text_atomic(out / "eval.json", report.to_json())]
    try:
        from train.evaluate.plot import write_chart

        paths.append(write_chart(report, out / "eval.png"))
    except ImportError:
        warn("matplotlib is not installed: no chart (pip install matplotlib)")
    return paths


def _runtime(args: EvalArgs) -> tuple[Runtime, Path | None] | None:
    """The runtime `--runtime` (else the settings' `runtime`) names, resolved as every
    repo2rlenv command resolves it, checked unless only the report is written, and able
    to run harness trials; None after a one-line error (exit 2)."""
    from train.harnesses.runtimes import RuntimeChoiceError, resolve_harness_runtime

    try:
        runtime, settings = resolve_harness_runtime(
            args.runtime, "eval.runtime-unsupported", check=not args.report_only
        )
    except RuntimeChoiceError as exc:
        error(str(exc))
        return None
    return runtime, settings.harbor_python


def run(args: EvalArgs) -> int:
    try:
        plan = _plan(args)
    except (CheckpointError, SplitFileError, OSError) as exc:
        error(str(exc))
        return EXIT_SETUP
    resolved = _runtime(args)
    if resolved is None:
        return EXIT_SETUP
    runtime, harbor_python = resolved
    ledger = Ledger(args.out / "ledger.jsonl")
    load_errors: dict[str, str] = {}
    if not args.report_only:
        from train.evaluate.live import LiveOptions, LiveUnavailable, evaluate_live

        done = len(ledger.load())
        info(
            f"{plan.total_attempts} attempts planned: {len(plan.labels)} models × "
            f"{len(plan.tasks)} tasks × k={plan.k}; {done} in the ledger {ledger.path}"
        )
        live = options_from(
            args, LiveOptions, work_dir=args.out, runtime=runtime.name, harbor_python=harbor_python
        )
        counter = iter(range(done + 1, plan.total_attempts + 1))
        try:
            summary = evaluate_live(
                plan,
                ledger,
                live,
                on_attempt=lambda a: ui.eval_attempt_line(a, next(counter, 0), plan.total_attempts),
            )
        except LiveUnavailable as exc:
            error(str(exc))
            return EXIT_SETUP
        load_errors = summary.load_errors
        info(f"ran {summary.ran} attempts, {summary.resumed} were already in the ledger")
    report = build_report(plan, ledger.load(), load_errors, runtime=runtime.name)
    ui.eval_report_table(report)
    try:
        written(write_report(report, args.out))
    except OSError as exc:
        error(f"cannot write to {args.out}: {exc}")
        return EXIT_SETUP
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = options_from(absolute_paths(build_parser().parse_args(argv)), EvalArgs)
    try:
        return run(args)
    except KeyboardInterrupt:
        error("interrupted: finished attempts are in the ledger; rerun to continue")
        return EXIT_INTERRUPTED
