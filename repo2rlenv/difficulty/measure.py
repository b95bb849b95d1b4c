"""Solve counts per task from real attempts: a one-model evaluation (train.evaluate).

`--model` is either an OpenAI-compatible endpoint URL (its model, `--model-name`, is
tried as served) or a peft adapter folder, loaded onto a vLLM server given by
`--server-url` or started from `--base-model`. train is imported here, lazily, so
`repo2rlenv` starts without torch, vLLM or the harness code.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field


class MeasureError(RuntimeError):
    """Set-up problem (no server, no harness); the message names what is missing."""


class MeasureOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    model_name: str = "default"
    k: int = Field(default=8, ge=1)
    harness: str = "pi"
    server_url: str | None = None
    base_model: Path | None = None
    slots: int = 1
    jobs: int = 2
    retries: int = 1
    max_tokens: int = Field(default=1024, ge=1)
    work_dir: Path = Path("tasks_out/difficulty")


def is_endpoint(model: str) -> bool:
    return model.startswith(("http://", "https://"))


def ledger_name(options: MeasureOptions) -> str:
    """One ledger per model tried, so attempts of one model never count for another."""
    who = f"{options.model}|{options.model_name}" if is_endpoint(options.model) else options.model
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", Path(options.model).name or "model").strip("-")
    return f"{slug[:40]}-{hashlib.sha256(who.encode()).hexdigest()[:10]}"


def measure(task_dirs: dict[str, Path], options: MeasureOptions) -> dict[str, tuple[int, int]]:
    """task id -> (solved, scored) over `k` attempts each; resumable through the ledger
    in `work_dir`."""
    try:
        from train.evaluate.ledger import Ledger
        from train.evaluate.live import LiveOptions, LiveUnavailable, evaluate_live
        from train.evaluate.plan import CheckpointError, EvalPlan, EvalTask, find_checkpoints
        from train.evaluate.report import build_report
    except ImportError as exc:
        raise MeasureError(f"difficulty.train-missing: the model path needs train ({exc})") from exc
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
    )
    ledger = Ledger(options.work_dir / f"{ledger_name(options)}.jsonl")
    try:
        evaluate_live(plan, ledger, live)
    except LiveUnavailable as exc:
        raise MeasureError(str(exc)) from exc
    report = build_report(plan, ledger.load())
    row = report.checkpoints[0]
    return {task: (pair[0], pair[1]) for task, pair in row.solved_by_task.items()}
