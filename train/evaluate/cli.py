"""`python -m train eval`: evaluate checkpoints against the base model on held-out tasks.

Exit codes: 0 the report was written (also when some attempts failed: the report counts
them), 2 usage or set-up error (no tasks, no adapter folder, no server or harness),
130 interrupted (finished attempts are in the ledger; rerun to continue).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from repo2rlenv.cli_args import OneLineParser
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


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m train eval",
        description="Serve the base model once and every checkpoint as a LoRA adapter on one "
        "vLLM server (in waves no larger than its adapter slots), run k attempts per task "
        "per checkpoint in a real harness, and report pass@1 with a 95% Wilson interval, "
        "tool calls per solved task, blocked calls and the change against the base model "
        "(table, eval.json, eval.png). Attempts go to a ledger: rerunning continues a "
        "stopped evaluation. Exit 0 report written, 2 set-up error, 130 interrupted.",
    )
    parser.add_argument(
        "--tasks",
        type=Path,
        required=True,
        metavar="DIR",
        help="held-out task folders (searched recursively)",
    )
    parser.add_argument(
        "--split",
        type=Path,
        metavar="FILE",
        help="a split.json written by `python -m train`: evaluate only its held-out tasks "
        "(default: every task under --tasks)",
    )
    parser.add_argument(
        "--checkpoints",
        type=Path,
        nargs="+",
        required=True,
        metavar="DIR",
        help="adapter folders (adapter_config.json), or folders holding them, e.g. "
        "<out>/pi/adapters",
    )
    parser.add_argument("--harness", choices=HARNESSES, required=True)
    parser.add_argument(
        "-k", type=int, default=4, metavar="N", help="attempts per task per checkpoint (default 4)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help="ledger.jsonl, eval.json and eval.png (default tasks_out/eval)",
    )
    parser.add_argument(
        "--base-model",
        type=Path,
        metavar="DIR",
        help="model folder to start a vLLM server with (LoRA on); or give --server-url",
    )
    parser.add_argument(
        "--server-url", metavar="URL", help="a running vLLM server started with --enable-lora"
    )
    parser.add_argument(
        "--served-model-name",
        default="base",
        metavar="NAME",
        help="the base model's name on the server (default base)",
    )
    parser.add_argument(
        "--slots",
        type=int,
        default=4,
        metavar="N",
        help="adapters loaded at once, the server's --max-loras (default 4)",
    )
    parser.add_argument(
        "--max-lora-rank", type=int, default=32, metavar="R", help="the server's (default 32)"
    )
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=1024,
        metavar="N",
        help="tokens per model call of the harness (default 1024)",
    )
    parser.add_argument(
        "-j", "--jobs", type=int, default=4, metavar="N", help="attempts in flight (default 4)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=1,
        metavar="N",
        help="reruns of a failed attempt before it counts as failed (1)",
    )
    parser.add_argument(
        "--no-base", action="store_true", help="skip the base model (no change-vs-base column)"
    )
    parser.add_argument(
        "--runtime",
        metavar="NAME",
        help="where the harness trials run: docker or harbor:docker (default: the settings "
        "file's runtime, else docker); docs/harbor-runtime.md",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="write the report from the ledger without running anything",
    )
    return parser


def _plan(args: argparse.Namespace) -> EvalPlan:
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
        include_base=not args.no_base,
        checkpoints=find_checkpoints(args.checkpoints),
        tasks=[EvalTask(task_id=t.task_id, task_dir=Path(t.path)) for t in tasks],
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


def _runtime(args: argparse.Namespace) -> Runtime | None:
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
    args.harbor_python = settings.harbor_python
    return runtime


def run(args: argparse.Namespace) -> int:
    if min(args.k, args.slots, args.jobs, args.max_tokens) < 1 or args.retries < 0:
        error("-k, --slots, --jobs and --max-tokens must be at least 1, --retries at least 0")
        return EXIT_SETUP
    try:
        plan = _plan(args)
    except (CheckpointError, SplitFileError, OSError) as exc:
        error(str(exc))
        return EXIT_SETUP
    runtime = _runtime(args)
    if runtime is None:
        return EXIT_SETUP
    ledger = Ledger(args.out / "ledger.jsonl")
    load_errors: dict[str, str] = {}
    if not args.report_only:
        from train.evaluate.live import LiveOptions, LiveUnavailable, evaluate_live

        done = len(ledger.load())
        info(
            f"{plan.total_attempts} attempts planned: {len(plan.labels)} models × "
            f"{len(plan.tasks)} tasks × k={plan.k}; {done} in the ledger {ledger.path}"
        )
        live = LiveOptions(
            server_url=args.server_url,
            base_model=args.base_model,
            served_model_name=args.served_model_name,
            slots=args.slots,
            max_lora_rank=args.max_lora_rank,
            max_tokens=args.max_tokens,
            jobs=args.jobs,
            retries=args.retries,
            work_dir=args.out,
            runtime=runtime.name,
            harbor_python=args.harbor_python,
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
    args = absolute_paths(build_parser().parse_args(argv))
    try:
        return run(args)
    except KeyboardInterrupt:
        error("interrupted: finished attempts are in the ledger; rerun to continue")
        return EXIT_INTERRUPTED
