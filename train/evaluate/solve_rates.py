"""The solver behind `repo2rlenv difficulty --model`: a one-model evaluation.

Registered in the entry-point group `rlenv_harvest.solvers`, which
`repo2rlenv.difficulty.measure` looks up: the task core finds the rollout stack there
instead of importing a layer above it.
"""

from __future__ import annotations

from pathlib import Path

from repo2rlenv.difficulty.measure import MeasureError, MeasureOptions, is_endpoint, ledger_name
from repo2rlenv.runtime.registry import RuntimeSpecError, make_runtime
from train.evaluate.ledger import Ledger
from train.evaluate.live import LiveOptions, LiveUnavailable, evaluate_live
from train.evaluate.plan import CheckpointError, EvalPlan, EvalTask, find_checkpoints
from train.evaluate.report import build_report
from train.harnesses.runtimes import RuntimeUnsupportedError, require_harness_trials


def measure(task_dirs: dict[str, Path], options: MeasureOptions) -> dict[str, tuple[int, int]]:
    """task id -> (solved, scored) over `k` attempts each; resumable through the ledger
    in `work_dir`."""
    try:
        require_harness_trials(make_runtime(options.runtime), "difficulty.runtime-unsupported")
    except (RuntimeSpecError, RuntimeUnsupportedError) as exc:
        raise MeasureError(str(exc)) from exc
    endpoint = is_endpoint(options.model)
    try:
        checkpoints = [] if endpoint else find_checkpoints([Path(options.model)])
    except CheckpointError as exc:
        raise MeasureError(f"difficulty.bad-model: {exc}") from exc
    if len(checkpoints) > 1:
        raise MeasureError(f"difficulty.bad-model: {options.model} holds several adapters")
    plan = EvalPlan(
        harness=options.harness,  # type: ignore[arg-type]
        k=options.k,
        base_model=options.model_name,
        include_base=endpoint,
        checkpoints=checkpoints,
        tasks=[EvalTask(task_id=t, task_dir=d) for t, d in sorted(task_dirs.items())],
        slots=max(1, options.slots),
    )
    live = LiveOptions(
        server_url=options.model.rstrip("/").removesuffix("/v1")
        if endpoint
        else options.server_url,
        base_model=options.base_model,
        served_model_name=options.model_name,
        slots=plan.slots,
        jobs=options.jobs,
        retries=options.retries,
        max_tokens=options.max_tokens,
        work_dir=options.work_dir,
        runtime=options.runtime,
    )
    ledger = Ledger(options.work_dir / f"{ledger_name(options)}.jsonl")
    try:
        evaluate_live(plan, ledger, live)
    except LiveUnavailable as exc:
        raise MeasureError(str(exc)) from exc
    report = build_report(plan, ledger.load())
    row = report.checkpoints[0]
    return {task: (pair[0], pair[1]) for task, pair in row.solved_by_task.items()}
