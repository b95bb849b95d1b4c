"""One harness's trainer in its own process: `python -m train.grpo.trainer_process SPEC.json`.

Each trainer gets a process, not a thread: accelerate keeps its gradient-accumulation
state in a per-process singleton, so two trainers in one process would skip each
other's optimizer steps, and a process also keeps one trainer's Python work from
holding the others' GIL. The run (train.launch.run) writes the spec, starts the process and
reads back `outcome.json`; steps reach it through `metrics.jsonl`. SIGTERM and SIGINT
both end the run cleanly: the worker stops, the scheduler waits for its rollouts, and
every rollout's runner removes its container.
"""

from __future__ import annotations

import argparse
import json
import signal
import threading
import traceback
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from train.data.config import TrainConfig
from train.data.split import write_text_atomic
from train.rollout.contract import GuardEndpoint
from train.rollout.scheduler import TaskRef

SPEC, OUTCOME = "trainer-spec.json", "outcome.json"


class TrainerSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    harness: str
    config: TrainConfig
    tasks: list[TaskRef]
    server_url: str
    model: str
    guard: GuardEndpoint | None = None
    """None only where the caller hands build_trainer its own runner (train.device_check)."""
    home: Path
    run_id: str
    resume: bool = False
    stale_after_s: float = 3600.0


class TrainerOutcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    harness: str
    steps: int = 0
    version: int = 0
    adapters: Path
    error: str | None = None
    killed: bool = False
    """True when the run killed the trainer after its grace and wrote this on its behalf."""


def build_trainer(
    spec: TrainerSpec, runner: Any = None, slots: Any = None
):  # -> train.grpo.trainer.HarnessTrainer
    """The harness's trainer; `runner` and `slots` replace the harness runner and the
    server's adapter client (the device check's completion runner and recording slots)."""
    from train.data.failures import FAILURES
    from train.grpo.metrics import MetricsLog
    from train.grpo.trainer import HarnessTrainer
    from train.grpo.trl_compat import (
        grpo_config,
        lora_config,
        placeholder_dataset,
        to_rollout_sample,
    )
    from train.grpo.worker import RolloutWorker, WorkerSettings
    from train.rollout.scheduler import Scheduler, SchedulerOptions
    from train.serving.adapters import AdapterClient

    config, home = spec.config, spec.home
    if runner is None:
        from repo2rlenv.settings import load_settings
        from train.harnesses import RunnerOptions, build_runner
        from train.harnesses.runtimes import owned_runtime

        if spec.guard is None:
            raise ValueError("trainer spec without a guard needs a runner")
        # The run resolved and checked the runtime (train.cli); here it is only built.
        runtime = owned_runtime(config.runtime or "docker", load_settings().harbor_python)
        runner = build_runner(
            spec.harness, guard=spec.guard, reward=config.reward,
            work_dir=home / "rollouts",
            options=RunnerOptions(context_window=config.server.max_model_len or 16384),
            runtime=runtime,
        )  # fmt: skip
    scheduler = Scheduler(runner, spec.tasks, SchedulerOptions(
        harness=spec.harness, sessions=config.sessions_per_trainer,
        rollouts_per_task=config.rollouts_per_task, max_staleness=config.max_staleness,
        seed=config.seed, run_id=spec.run_id, failures_path=home / FAILURES,
    ))  # fmt: skip
    worker = RolloutWorker(
        scheduler,
        WorkerSettings(micro_batches=config.micro_batches_per_step,
                       token_budget=config.token_budget, max_staleness=config.max_staleness,
                       smoke_baseline=config.smoke_baseline),
        to_rollout_sample,
    )  # fmt: skip
    args = grpo_config(
        config, output_dir=home / "trainer", server_url=spec.server_url,
        micro_batch_tokens=config.token_budget,
        save_steps=max(1, min(50, config.steps // 4)), stale_after_s=spec.stale_after_s,
    )  # fmt: skip
    return HarnessTrainer(
        harness=spec.harness, slots=slots or AdapterClient(spec.server_url),
        adapters_dir=home / "adapters", rollout_worker=worker,
        metrics_log=MetricsLog(home / "metrics.jsonl"), model=spec.model, args=args,
        train_dataset=placeholder_dataset(), peft_config=lora_config(config.lora),
    )  # fmt: skip


def train_one(spec: TrainerSpec, runner: Any = None, slots: Any = None) -> TrainerOutcome:
    from train.grpo.trainer import latest_checkpoint

    trainer = build_trainer(spec, runner, slots)
    checkpoint = latest_checkpoint(spec.home / "trainer") if spec.resume else None
    trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    return TrainerOutcome(
        harness=spec.harness,
        steps=trainer.state.global_step,
        version=trainer.model_version,
        adapters=trainer.adapters_dir,
    )


def _interrupt(signum: int, frame: object) -> None:
    """The first SIGINT or SIGTERM stops the trainer; later ones are ignored. Ctrl-C in a
    terminal reaches this process and the run (train.launch.run), which then sends SIGTERM at
    once: a second KeyboardInterrupt would cut the stop short (inside a lock's wait it
    even breaks the lock) and leave the rollouts' threads to die with their work."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # The rollouts' containers go first (on a thread: a signal handler must not wait on
    # the locks the interrupted code may hold), so the stop below waits for seconds.
    threading.Thread(target=_abort_rollouts, name="abort-rollouts", daemon=True).start()
    raise KeyboardInterrupt


def _abort_rollouts() -> None:
    try:
        from train.harnesses.runtimes import abort_owned_runtimes

        abort_owned_runtimes()
    except Exception:  # best effort: the run's sweep removes what is left
        traceback.print_exc()


def error_line(exc: BaseException) -> str:
    """The trainer's error for the run: a scheduler's reason-coded stop (raised in the
    rollout worker's thread and re-raised by TRL's health check, wrapped on the way) as
    it is, anything else with its type."""
    from train.rollout.scheduler import SchedulerError

    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, SchedulerError):
            return str(cause)
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return f"{type(exc).__name__}: {exc}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m train.grpo.trainer_process")
    parser.add_argument("spec", type=Path)
    spec = TrainerSpec.model_validate_json(parser.parse_args(argv).spec.read_text())
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGINT, _interrupt)
    code = 0
    try:
        outcome = train_one(spec)
    except KeyboardInterrupt:
        outcome, code = TrainerOutcome(harness=spec.harness, adapters=spec.home / "adapters",
                                       error="run.interrupted"), 130  # fmt: skip
    except Exception as exc:
        traceback.print_exc()
        error = error_line(exc)[:2000]
        outcome, code = TrainerOutcome(harness=spec.harness, adapters=spec.home / "adapters",
                                       error=error), 1  # fmt: skip
    write_text_atomic(spec.home / OUTCOME, json.dumps(outcome.model_dump(mode="json")) + "\n")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
