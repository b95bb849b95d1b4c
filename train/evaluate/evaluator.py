"""Runs the plan: the base model once, then each wave of adapters (load, run, unload).

Everything outside is injected: the server's adapter slots, a factory that gives a
rollout runner for a served model name, and the ledger. Unit tests pass doubles; the
real run passes `train.serving.adapters.AdapterClient` and the harness runner.
"""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from train.evaluate.ledger import Attempt, AttemptKey, Ledger
from train.evaluate.plan import BASE, Checkpoint, EvalPlan, EvalTask, plan_waves
from train.rollout.contract import AdapterSlots, Rollout, RolloutRequest, RolloutRunner

RunnerFactory = Callable[[str], RolloutRunner]
"""Served model name (an adapter, or the base model) -> a runner for rollouts on it."""


@dataclass
class RunSummary:
    ran: int = 0
    """Attempts run (and appended to the ledger) by this call."""
    resumed: int = 0
    """Attempts of the plan already in the ledger when it started."""
    load_errors: dict[str, str] = field(default_factory=dict)
    """Checkpoint label -> why its adapter could not be loaded (its attempts are missing)."""
    unload_errors: dict[str, str] = field(default_factory=dict)
    waves: list[list[str]] = field(default_factory=list)
    """Labels loaded together, wave by wave, as this call ran them."""


@dataclass(frozen=True)
class _Job:
    label: str
    model: str
    task: EvalTask
    task_index: int
    attempt: int


def is_planned(plan: EvalPlan, key: AttemptKey) -> bool:
    label, task_id, attempt = key
    return (
        label in plan.labels and attempt < plan.k and any(t.task_id == task_id for t in plan.tasks)
    )


def planned_in_ledger(plan: EvalPlan, done: dict[AttemptKey, Attempt]) -> int:
    """Attempts of the plan the ledger already holds: when it is all of them, a rerun has
    nothing to run, and starting a model server for it would only cost its start-up."""
    return sum(1 for key in done if is_planned(plan, key))


class Evaluator:
    def __init__(
        self,
        slots: AdapterSlots,
        runner_factory: RunnerFactory,
        plan: EvalPlan,
        ledger: Ledger,
        *,
        jobs: int = 1,
        retries: int = 1,
        on_attempt: Callable[[Attempt], None] | None = None,
    ) -> None:
        if jobs < 1 or retries < 0:
            raise ValueError("jobs must be >= 1 and retries >= 0")
        self.slots, self.factory, self.plan, self.ledger = slots, runner_factory, plan, ledger
        self.jobs, self.retries, self.on_attempt = jobs, retries, on_attempt
        self._runners: dict[str, RolloutRunner] = {}
        self._tag = uuid.uuid4().hex[:8]
        """Per run: guard session logs of a killed run are never read as this run's."""

    def run(self) -> RunSummary:
        """Blocking. KeyboardInterrupt stops new attempts, unloads the wave's adapters and
        propagates; finished attempts are already in the ledger."""
        done = self.ledger.load()
        summary = RunSummary(resumed=planned_in_ledger(self.plan, done))
        if self.plan.include_base:
            summary.ran += self._run_jobs(list(self._jobs(BASE, self.plan.base_model, done)))
        for wave in plan_waves(self.plan.checkpoints, self.plan.slots):
            pending = [c for c in wave if next(self._jobs(c.label, c.adapter, done), None)]
            if pending:
                self._run_wave(pending, done, summary)
        return summary

    def _run_wave(
        self, wave: list[Checkpoint], done: dict[AttemptKey, Attempt], summary: RunSummary
    ) -> None:
        loaded: list[Checkpoint] = []
        try:
            try:
                present = set(self.slots.loaded())
            except Exception:  # the loads below fail with the reason, one per adapter
                present = set()
            for checkpoint in wave:
                try:
                    if checkpoint.adapter not in present:
                        self.slots.load(checkpoint.adapter, checkpoint.path)
                except Exception as exc:  # a broken adapter must not stop the others
                    summary.load_errors[checkpoint.label] = f"{type(exc).__name__}: {exc}"
                    continue
                loaded.append(checkpoint)
            summary.waves.append([c.label for c in loaded])
            jobs = [j for c in loaded for j in self._jobs(c.label, c.adapter, done)]
            order = {c.label: i for i, c in enumerate(loaded)}
            jobs.sort(key=lambda j: (j.attempt, j.task_index, order[j.label]))
            summary.ran += self._run_jobs(jobs)
        finally:
            for checkpoint in loaded:
                try:
                    self.slots.unload(checkpoint.adapter)
                except Exception as exc:
                    summary.unload_errors[checkpoint.label] = f"{type(exc).__name__}: {exc}"

    def _jobs(self, label: str, model: str, done: dict[AttemptKey, Attempt]) -> Iterator[_Job]:
        """Attempt-major order: every task gets its first attempt before any its second,
        so a stopped run has spread its work evenly."""
        for attempt in range(self.plan.k):
            for index, task in enumerate(self.plan.tasks):
                if (label, task.task_id, attempt) not in done:
                    yield _Job(label, model, task, index, attempt)

    def _run_jobs(self, jobs: list[_Job]) -> int:
        if not jobs:
            return 0
        ran = 0
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            queue = iter(jobs)
            running: set[Future[Attempt]] = set()
            try:
                for job in queue:
                    running.add(pool.submit(self._attempt, job))
                    if len(running) >= self.jobs:
                        finished, running = wait(running, return_when=FIRST_COMPLETED)
                        ran += self._record(finished)
                finished, running = wait(running).done, set()
                ran += self._record(finished)
            except BaseException:
                # Ctrl-C (or a kill simulated by a runner): start nothing new, let the
                # attempts in flight finish, and keep every one that did.
                pool.shutdown(wait=True, cancel_futures=True)
                finished = {f for f in running if f.done() and not f.cancelled()}
                ran += self._record({f for f in finished if f.exception() is None})
                raise
        return ran

    def _record(self, finished: set[Future[Attempt]]) -> int:
        """Appends every attempt that finished, then re-raises a worker's exception."""
        failure: BaseException | None = None
        recorded = 0
        for future in finished:
            error = future.exception()
            if error is not None:
                failure = failure or error
                continue
            attempt = future.result()
            self.ledger.append(attempt)
            recorded += 1
            if self.on_attempt is not None:
                self.on_attempt(attempt)
        if failure is not None:
            raise failure
        return recorded

    def _runner(self, model: str) -> RolloutRunner:
        if model not in self._runners:
            self._runners[model] = self.factory(model)
        return self._runners[model]

    def _attempt(self, job: _Job) -> Attempt:
        rollout: Rollout | None = None
        for retry in range(self.retries + 1):
            request = RolloutRequest(
                task_id=job.task.task_id,
                task_dir=job.task.task_dir,
                harness=self.plan.harness,
                adapter=job.model,
                model_version=0,
                group_id=job.task_index,
                attempt=job.attempt,
                session_id=_session_id(job, retry, self._tag),
                seed=job.attempt,
            )
            try:
                rollout = self._runner(job.model)(request)
            except Exception as exc:  # runners should not raise; count it, never crash
                rollout = Rollout(
                    request=request, status="failed", error=f"runner.crashed: {exc!r}"[:500]
                )
            if rollout.status != "failed":
                break
        assert rollout is not None
        return Attempt.from_rollout(job.label, rollout)


def _session_id(job: _Job, retry: int, tag: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", job.model)[:72]
    # Unguessable: the id sits in the harness's base URL inside the container.
    return f"{name}.t{job.task_index}.a{job.attempt}.r{retry}.{tag}-{secrets.token_urlsafe(12)}"
