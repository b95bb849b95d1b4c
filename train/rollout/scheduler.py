"""Keeps one trainer's harness sessions busy and hands out finished GRPO groups.

One scheduler serves one trainer (one harness, one adapter name). Worker threads, one
per session slot, each run one blocking rollout at a time, so at most `sessions`
rollouts are ever in flight. A task's group is opened lazily: every rollout asks for
the adapter of the version that is current *when it starts*, so a long group may span
versions; its `first_version` (the earliest start) decides staleness, as in the issue.

Failures never reach the trainer: a `failed` rollout (or a runner that raises) is
retried with a fresh session up to `max_retries` times and then becomes `unscorable`;
a group is handed out once every rollout is `scored` or `unscorable`. A group whose
first rollout started more than `max_staleness` versions before the current one is
dropped (its unstarted rollouts are never started) and counted. No new group opens
while `ready_limit` finished groups wait for the trainer: sessions that ran far ahead
of training would only produce stale groups.

Stopping: `stop()` starts nothing new and waits for in-flight rollouts to finish,
because each owns a container that only its runner can clean up; their results are
discarded. Rollouts still running after `stop`'s timeout are counted as abandoned and
left on daemon threads, which cannot keep the process alive.

A run that cannot make progress stops (train.data.failures): once the failures that a retry
does not cure reach the `no_progress` rule's limit, nothing new starts and `next_group`
raises `scheduler.no-progress` with the counts by reason, so the trainer ends with that
error instead of waiting for groups that will never come.
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from train.data.config import Harness, TrainConfig
from train.data.failures import FailureSummary, FailureTracker, NoProgressRule
from train.rollout.contract import Group, Rollout, RolloutRequest, RolloutRunner, adapter_name


class TaskRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str = Field(min_length=1)
    task_dir: Path


class SchedulerOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    harness: Harness
    sessions: int = Field(default=48, ge=1, description="Rollouts in flight at most.")
    rollouts_per_task: int = Field(default=8, ge=1, description="GRPO group size.")
    max_staleness: int = Field(default=4, ge=0)
    max_retries: int = Field(default=2, ge=0, description="Retries of a failed rollout.")
    max_ready_groups: int | None = Field(
        default=None,
        ge=1,
        description="Finished groups waiting for the trainer before no new group opens; "
        "None: twice the groups that fit in `sessions`.",
    )
    seed: int = 0
    run_id: str = Field(default="run", pattern=r"^[A-Za-z0-9_.-]{1,48}$")
    no_progress: NoProgressRule = Field(default_factory=NoProgressRule)
    failures_path: Path | None = Field(
        default=None, description="Where the failure counts are kept (train.data.failures)."
    )

    @classmethod
    def from_config(cls, config: TrainConfig, harness: Harness, **more: Any) -> SchedulerOptions:
        return cls(harness=harness, sessions=config.sessions_per_trainer,
                   rollouts_per_task=config.rollouts_per_task,
                   max_staleness=config.max_staleness, seed=config.seed, **more)  # fmt: skip

    @property
    def ready_limit(self) -> int:
        if self.max_ready_groups is not None:
            return self.max_ready_groups
        return 2 * max(1, self.sessions // self.rollouts_per_task)


class SchedulerStats(BaseModel):
    model_config = ConfigDict(extra="forbid")

    started: int = 0
    scored: int = 0
    failed: int = 0
    retried: int = 0
    unscorable: int = 0
    runner_errors: int = Field(default=0, description="Runner raised; counted in failed too.")
    dropped_stale: int = Field(default=0, description="Groups dropped for staleness.")
    groups_done: int = Field(default=0, description="Groups handed to the trainer.")
    in_flight: int = 0
    abandoned: int = Field(default=0, description="Rollouts still running after stop().")
    waiting_s: float = Field(default=0.0, description="Time next_group callers waited.")


@dataclass
class _Slot:
    attempt: int
    tries: int = 0
    result: Rollout | None = None


@dataclass
class _OpenGroup:
    group_id: int
    task: TaskRef
    slots: list[_Slot]
    first_version: int | None = None
    dropped: bool = False
    todo: deque[_Slot] = field(default_factory=deque)

    @property
    def complete(self) -> bool:
        return all(slot.result is not None for slot in self.slots)


class SchedulerError(Exception):
    """A scheduler that cannot work as configured; the message starts with a reason code."""


class Scheduler:
    """`GroupSource` for one trainer; see the module docstring for the rules."""

    def __init__(
        self, runner: RolloutRunner, tasks: Sequence[TaskRef], options: SchedulerOptions
    ) -> None:
        if not tasks:
            raise SchedulerError("scheduler.no-tasks: give at least one task")
        ids = [task.task_id for task in tasks]
        if len(set(ids)) != len(ids):
            raise SchedulerError("scheduler.duplicate-task: task ids must be unique")
        self.runner = runner
        self.options = options
        self._tasks = list(tasks)
        self._order: list[TaskRef] = []
        self._rng = random.Random(options.seed)
        self._lock = threading.Lock()
        self._work_cv = threading.Condition(self._lock)  # workers: room for a new group
        self._group_cv = threading.Condition(self._lock)  # trainers: a group is ready
        self._version = 0
        self._next_group_id = 0
        self._tries = 0
        self._open: list[_OpenGroup] = []
        self._ready: deque[_OpenGroup] = deque()
        self._stats = SchedulerStats()
        self._threads: list[threading.Thread] = []
        self._stopping = False
        self._failures = FailureTracker(options.no_progress, len(set(ids)), options.failures_path)
        self._no_progress: str | None = None

    # -- GroupSource ------------------------------------------------------------------
    def start(self) -> None:
        with self._lock:
            if self._threads:
                raise SchedulerError("scheduler.started: start() was already called")
            self._threads = [
                threading.Thread(
                    target=self._work, name=f"rollout-{self.options.harness}-{n}", daemon=True
                )
                for n in range(self.options.sessions)
            ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float | None = 60.0) -> None:
        with self._lock:
            self._stopping = True
            self._work_cv.notify_all()
            self._group_cv.notify_all()
        deadline = None if timeout is None else time.monotonic() + timeout
        for thread in self._threads:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            thread.join(left)
        with self._lock:
            self._stats.abandoned = sum(thread.is_alive() for thread in self._threads)

    def set_version(self, version: int) -> None:
        with self._lock:
            if version < self._version:
                raise SchedulerError(
                    f"scheduler.version-backwards: {version} after {self._version}"
                )
            self._version = version

    def next_group(self, timeout: float | None = None) -> Group | None:
        """The oldest finished, fresh group; None on timeout or after stop(). Raises
        `SchedulerError` (scheduler.no-progress) once the run cannot make progress."""
        began = time.monotonic()
        deadline = None if timeout is None else began + timeout
        with self._lock:
            try:
                while True:
                    while self._ready:
                        group = self._ready.popleft()
                        self._work_cv.notify()
                        if self._is_stale(group):
                            self._stats.dropped_stale += 1
                            continue
                        self._stats.groups_done += 1
                        return self._as_group(group)
                    if self._no_progress is not None:
                        raise SchedulerError(f"scheduler.no-progress: {self._no_progress}")
                    if self._stopping:
                        return None
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return None
                    self._group_cv.wait(left)
            finally:
                self._stats.waiting_s += time.monotonic() - began

    # -- observation --------------------------------------------------------------------
    @property
    def version(self) -> int:
        with self._lock:
            return self._version

    def stats(self) -> SchedulerStats:
        with self._lock:
            return self._stats.model_copy()

    def failures(self) -> FailureSummary:
        with self._lock:
            return self._failures.summary.model_copy(deep=True)

    # -- internals (called with the lock held unless named otherwise) ------------------
    def _is_stale(self, group: _OpenGroup) -> bool:
        first = group.first_version
        return first is not None and self._version - first > self.options.max_staleness

    def _next_task(self) -> TaskRef:
        if not self._order:
            self._order = list(self._tasks)
            self._rng.shuffle(self._order)
        return self._order.pop()

    def _open_group(self) -> _OpenGroup:
        slots = [_Slot(attempt=n) for n in range(self.options.rollouts_per_task)]
        group = _OpenGroup(self._next_group_id, self._next_task(), slots, todo=deque(slots))
        self._next_group_id += 1
        self._open.append(group)
        return group

    def _claim(self) -> tuple[_OpenGroup, _Slot] | None:
        for group in list(self._open):
            if group.todo and self._is_stale(group):  # never start what would be dropped
                group.dropped = True
                self._open.remove(group)
                self._stats.dropped_stale += 1
        for group in self._open:
            if group.todo:
                return group, group.todo.popleft()
        if len(self._ready) >= self.options.ready_limit:
            return None
        group = self._open_group()
        return group, group.todo.popleft()

    def _request(self, group: _OpenGroup, slot: _Slot) -> RolloutRequest:
        if group.first_version is None:
            group.first_version = self._version
        self._tries += 1
        harness = self.options.harness
        return RolloutRequest(
            task_id=group.task.task_id,
            task_dir=group.task.task_dir,
            harness=harness,
            adapter=adapter_name(harness, self._version),
            model_version=self._version,
            group_id=group.group_id,
            attempt=slot.attempt,
            # Unguessable: the id sits in the harness's base URL inside the container, and
            # the guard serves a session to whoever names it.
            session_id=f"{self.options.run_id}-{harness}-g{group.group_id}-a{slot.attempt}"
            f"-t{slot.tries}-{secrets.token_urlsafe(12)}",
            seed=self.options.seed * 1_000_003 + self._tries,
        )

    def _work(self) -> None:
        while True:
            with self._lock:
                claimed = None
                while not self._stopping and (claimed := self._claim()) is None:
                    self._work_cv.wait()
                if self._stopping or claimed is None:
                    return
                group, slot = claimed
                if group.todo or len(self._ready) < self.options.ready_limit:
                    self._work_cv.notify()  # more work than this worker: pass it on
                request = self._request(group, slot)
                self._stats.started += 1
                self._stats.in_flight += 1
            rollout = self._run(request)
            with self._lock:
                self._stats.in_flight -= 1
                if not self._stopping and self._record(group, slot, rollout):
                    self._group_cv.notify()

    def _run(self, request: RolloutRequest) -> Rollout:
        """Outside the lock: the runner blocks for the whole session."""
        started = time.time()
        try:
            rollout = self.runner(request)
            if rollout.request.session_id != request.session_id:
                raise ValueError(f"runner answered session {rollout.request.session_id}")
            return rollout
        except Exception as exc:  # a runner bug must not end the run
            return Rollout(
                request=request,
                status="failed",
                started_at=started,
                finished_at=time.time(),
                error=f"runner.raised: {type(exc).__name__}: {exc}"[:2000],
            )

    def _record(self, group: _OpenGroup, slot: _Slot, rollout: Rollout) -> bool:
        """Files a finished rollout; True when it completed a group for the trainer."""
        if rollout.error and rollout.error.startswith("runner.raised"):
            self._stats.runner_errors += 1
        stop = self._failures.record(group.task.task_id, rollout.status, rollout.error)
        if stop is not None and self._no_progress is None:
            self._no_progress = stop  # nothing new starts; the trainer gets the error
            self._stopping = True
            self._work_cv.notify_all()
            self._group_cv.notify_all()
            return False
        if group.dropped:
            return False
        if rollout.status == "failed":
            self._stats.failed += 1
            if slot.tries < self.options.max_retries:
                slot.tries += 1
                self._stats.retried += 1
                group.todo.append(slot)
                self._work_cv.notify()
                return False
            rollout = rollout.model_copy(update={"status": "unscorable"})
        if rollout.status == "scored":
            self._stats.scored += 1
        else:
            self._stats.unscorable += 1
        slot.result = rollout
        if not group.complete:
            return False
        self._open.remove(group)
        if self._is_stale(group):
            self._stats.dropped_stale += 1
            return False
        self._ready.append(group)
        return True

    def _as_group(self, group: _OpenGroup) -> Group:
        rollouts = [slot.result for slot in group.slots if slot.result is not None]
        return Group(
            group_id=group.group_id,
            task_id=group.task.task_id,
            harness=self.options.harness,
            first_version=group.first_version or 0,
            rollouts=rollouts,
        )
