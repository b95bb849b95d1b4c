"""The real run: model, vLLM server, guard, and one trainer per harness, stopped cleanly.

Order matters: the server comes first (trainers probe it when they are built), the
guard in front of it (harness containers reach only the guard, never vLLM), then one
process per harness (train.grpo.trainer_process: runner, scheduler, rollout worker, trainer).
A sync only loads and unloads that trainer's adapter names, so trainers sharing the
server never wait for each other. Steps are shown live as each trainer's metrics.jsonl
grows. Everything started is stopped in reverse order on the way out, Ctrl-C and
SIGTERM included; each rollout's container is removed by its runner.

A run that cannot make progress ends with exit 1 rather than waiting forever: a
trainer whose rollouts keep failing for a reason a retry does not cure stops itself
(train.data.failures), and a model server that stops answering stops the run here. When
stderr is not a terminal (a log file, CI) the live table is invisible, so every step
gets a line and the failure counts by reason are printed every `PROGRESS_EVERY_S`.
SIGINT or SIGTERM to this process alone stops everything within `STOP_BOUND_S`: the
trainers get `TRAINER_GRACE_S` to stop their rollouts, then are killed, and any
rollout container of the run still there is removed by its labels.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from train import ui
from train.data.config import TrainConfig
from train.data.failures import FAILURES, FailureSummary, read_failures
from train.data.split import write_text_atomic
from train.grpo.metrics import MetricsLog
from train.grpo.trainer_process import OUTCOME, SPEC, TrainerOutcome, TrainerSpec
from train.launch.errors import RunError
from train.launch.plan import gpu_layout
from train.launch.services import (
    ServerWatch,
    guarded,
    remove_run_containers,
    resolve_model,
    served,
    visible_gpus,
)
from train.rollout.scheduler import TaskRef

TRAINER_LOG = "trainer.log"
STALE_AFTER_S = 3600.0
"""How long a trainer waits for its first packed step before it calls the run stuck: a
group needs every one of its rollouts finished, each within the task's agent timeout."""
PROGRESS_EVERY_S = 30.0
"""How often failure counts are printed when stderr is not a terminal."""
STOP_BOUND_S = 30.0
"""From SIGINT/SIGTERM to exit, at most: the trainers' grace, the container sweep, the
server's stop."""
TRAINER_GRACE_S = 15.0


class RunResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    steps: dict[str, int]
    versions: dict[str, int]
    adapters: dict[str, Path]


def run_training(
    config: TrainConfig, tasks: list[TaskRef], out: Path, *, resume: bool = False
) -> RunResult:
    if not tasks:
        raise RunError("run.no-tasks: the train split is empty")
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    try:
        import train.grpo.trl_compat
        import train.harnesses  # noqa: F401  (imported for its ImportError)
    except ImportError as exc:
        raise RunError(f"run.missing-packages: {exc}; run `make train-deps`") from exc
    model = resolve_model(config, out)
    run_id = uuid.uuid4().hex[:8]
    with ExitStack() as stack:
        stack.enter_context(_sigterm_as_interrupt())
        url = stack.enter_context(served(config, model, out))
        guard = stack.enter_context(guarded(url, out))
        live = stack.enter_context(
            ui.LiveMetrics(f"{config.preset} ({', '.join(config.harnesses)})")
        )
        stack.callback(remove_run_containers, run_id)
        specs = [
            TrainerSpec(
                harness=harness,
                config=config,
                tasks=tasks,
                server_url=url,
                model=str(model),
                guard=guard,
                home=out / harness,
                run_id=run_id,
                resume=resume,
                stale_after_s=STALE_AFTER_S,
            )
            for harness in config.harnesses
        ]
        _, trainer_gpus = gpu_layout(config)
        try:
            outcomes = _train_all(specs, live, trainer_gpus, ServerWatch(url))
        finally:  # also when the server died or the run was interrupted
            _show_failures(specs)
    failed = [o for o in outcomes if o.error]
    if failed:
        raise RunError(
            f"run.trainer-failed: {failed[0].harness}: {failed[0].error} "
            f"(log: {out / failed[0].harness / TRAINER_LOG})"
        )
    return RunResult(
        steps={o.harness: o.steps for o in outcomes},
        versions={o.harness: o.version for o in outcomes},
        adapters={o.harness: o.adapters for o in outcomes},
    )


def _show_failures(specs: list[TrainerSpec]) -> None:
    for spec in specs:
        summary = read_failures(spec.home / FAILURES)
        if summary is not None and summary.failed:
            ui.failure_summary(spec.harness, summary)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """A kill (CI's timeout, `docker stop`) cleans up like Ctrl-C: vLLM runs in its own
    session and the rollouts' containers outlive a process that just dies. The first
    SIGINT or SIGTERM interrupts; later ones are ignored until the cleanup is done (a
    second KeyboardInterrupt would cut it short and leave the server running)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def trainer_env(gpu: int) -> dict[str, str]:
    """A trainer's environment: on a GPU run it sees only its own GPU (as cuda:0)."""
    env = dict(os.environ)
    if gpu >= 0:
        env["CUDA_VISIBLE_DEVICES"] = visible_gpus([gpu])[0]
    return env


def _train_all(
    specs: list[TrainerSpec],
    live: ui.LiveMetrics,
    gpus: dict[str, int] | None = None,
    watch: ServerWatch | None = None,
) -> list[TrainerOutcome]:
    """One process per trainer (train.grpo.trainer_process) on its planned GPU; their steps
    are shown as they land in each metrics.jsonl. Interrupted, or the server died: each
    trainer is asked to stop (it waits for its rollouts' containers), then killed if it
    does not within TRAINER_GRACE_S."""
    processes: dict[str, subprocess.Popen[bytes]] = {}
    shown = dict.fromkeys((s.harness for s in specs), 0)
    progress = FailureProgress(specs)
    try:
        for spec in specs:
            spec.home.mkdir(parents=True, exist_ok=True)
            (spec.home / OUTCOME).unlink(missing_ok=True)
            path = spec.home / SPEC
            path.write_text(spec.model_dump_json(indent=2))
            with (spec.home / TRAINER_LOG).open("ab") as log:
                processes[spec.harness] = subprocess.Popen(
                    [sys.executable, "-m", "train.grpo.trainer_process", str(path)],
                    stdout=log, stderr=subprocess.STDOUT,
                    env=trainer_env((gpus or {}).get(spec.harness, -1)),
                )  # fmt: skip
        while any(p.poll() is None for p in processes.values()):
            _show_steps(specs, shown, live)
            progress.tick()
            if watch is not None and watch.dead():
                _stop(processes, specs, "run.server-died")
                raise RunError(
                    f"run.server-died: the model server at {watch.url} stopped answering "
                    f"/health ({watch.misses} probes {watch.every_s:.0f}s apart); the "
                    "trainers were stopped"
                )
            time.sleep(1.0)
        _show_steps(specs, shown, live)
    except KeyboardInterrupt:
        _stop(processes, specs, "run.interrupted")
        raise
    return [_outcome(spec, processes[spec.harness].returncode) for spec in specs]


class FailureProgress:
    """Failure counts by reason, printed every PROGRESS_EVERY_S when stderr is not a
    terminal (where the live table is not seen), from each trainer's failures.json."""

    def __init__(self, specs: list[TrainerSpec], every_s: float = PROGRESS_EVERY_S) -> None:
        self.specs = specs
        self.every_s = every_s
        self.enabled = not ui.live_view()
        self._next = time.monotonic() + every_s

    def tick(self, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        if not self.enabled or now < self._next:
            return
        self._next = now + self.every_s
        for spec in self.specs:
            summary = read_failures(spec.home / FAILURES) or FailureSummary()
            ui.failure_counts(spec.harness, summary)


def _show_steps(specs: list[TrainerSpec], shown: dict[str, int], live: ui.LiveMetrics) -> None:
    for spec in specs:
        steps, _ = MetricsLog(spec.home / "metrics.jsonl").read()
        for metrics in steps[shown[spec.harness] :]:
            live.update(metrics)
            if not ui.live_view():
                ui.step_line(metrics)
        shown[spec.harness] = len(steps)


def _stop(
    processes: dict[str, subprocess.Popen[bytes]],
    specs: list[TrainerSpec],
    reason: str,
    grace_s: float = TRAINER_GRACE_S,
) -> None:
    """Asks every trainer to stop, kills the ones still running after `grace_s`, and
    records an outcome for each killed one: a trainer busy in a long step on a loaded
    machine may not reach its own `outcome.json`, and the run's record must still say
    why it ended."""
    for process in processes.values():
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    homes = {spec.harness: spec.home for spec in specs}
    for harness, process in processes.items():
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            _record_killed(harness, homes[harness], reason)


def _record_killed(harness: str, home: Path, reason: str) -> None:
    """The outcome of a trainer the run killed, unless it wrote its own first."""
    if (home / OUTCOME).exists():
        return
    steps, _ = MetricsLog(home / "metrics.jsonl").read()
    outcome = TrainerOutcome(harness=harness, steps=len(steps), adapters=home / "adapters",
                             error=reason, killed=True)  # fmt: skip
    write_text_atomic(home / OUTCOME, outcome.model_dump_json() + "\n")


def _outcome(spec: TrainerSpec, code: int | None) -> TrainerOutcome:
    try:
        return TrainerOutcome.model_validate_json((spec.home / OUTCOME).read_text())
    except (OSError, ValueError):
        return TrainerOutcome(harness=spec.harness, adapters=spec.home / "adapters",
                              error=f"the trainer process exited with {code}")  # fmt: skip
