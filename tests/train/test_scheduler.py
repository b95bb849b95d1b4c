"""The scheduler with runner doubles: groups complete, stale groups drop, failures retry
and never crash it, adapters stay per harness, and it stops without leaking threads."""

from __future__ import annotations

import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.train.rollout_fakes import FakeRunner
from train.data.config import resolve_config
from train.rollout.contract import Group
from train.rollout.scheduler import Scheduler, SchedulerError, SchedulerOptions, TaskRef

TASKS = [TaskRef(task_id=f"task-{n}", task_dir=Path(f"/tasks/task-{n}")) for n in range(5)]
WAIT = 30.0
"""Generous: only reached when the scheduler is broken, never a timing assertion."""


def make(runner: FakeRunner, **options: object) -> Scheduler:
    defaults: dict[str, object] = {"harness": "pi", "sessions": 4, "rollouts_per_task": 3}
    return Scheduler(runner, TASKS, SchedulerOptions(**{**defaults, **options}))


def drain(scheduler: Scheduler, count: int) -> list[Group]:
    groups = []
    for _ in range(count):
        group = scheduler.next_group(timeout=WAIT)
        assert group is not None, scheduler.stats()
        groups.append(group)
    return groups


def test_groups_complete_with_every_rollout_scored() -> None:
    runner = FakeRunner()
    scheduler = make(runner)
    scheduler.start()
    groups = drain(scheduler, 4)
    scheduler.stop()
    for group in groups:
        assert sorted(r.request.attempt for r in group.rollouts) == [0, 1, 2]
        assert all(r.status == "scored" for r in group.rollouts)
        assert {r.request.task_id for r in group.rollouts} == {group.task_id}
        assert {r.request.group_id for r in group.rollouts} == {group.group_id}
    assert len({g.group_id for g in groups}) == 4
    sessions = [r.session_id for r in runner.requests]
    assert len(set(sessions)) == len(sessions)
    assert runner.peak <= 4
    stats = scheduler.stats()
    assert stats.groups_done == 4 and stats.failed == 0 and stats.in_flight == 0


def test_group_waits_for_its_last_rollout() -> None:
    last, others = threading.Event(), threading.Event()

    def gate(req):
        if req.group_id > 0:
            return others
        return last if req.attempt == 2 else None

    runner = FakeRunner(gate=gate)
    scheduler = make(runner, sessions=3)
    scheduler.start()
    for _ in range(3):
        assert runner.started.acquire(timeout=WAIT)
    assert scheduler.next_group(timeout=0.2) is None
    last.set()
    group = scheduler.next_group(timeout=WAIT)
    others.set()
    scheduler.stop()
    assert group is not None and group.group_id == 0 and len(group.scored) == 3


def test_task_order_is_seeded_and_cycles_through_every_task() -> None:
    def order(seed: int) -> list[str]:
        scheduler = make(FakeRunner(), seed=seed, sessions=1)
        scheduler.start()
        groups = drain(scheduler, 2 * len(TASKS))
        scheduler.stop()
        return [g.task_id for g in sorted(groups, key=lambda g: g.group_id)]

    first = order(7)
    assert first == order(7)
    names = sorted(t.task_id for t in TASKS)
    assert sorted(first[: len(TASKS)]) == names and sorted(first[len(TASKS) :]) == names


def wait_until(check) -> None:
    deadline = time.monotonic() + WAIT
    while not check():
        assert time.monotonic() < deadline, "scheduler never got there"
        time.sleep(0.005)


def test_stale_group_is_dropped_and_counted() -> None:
    hold, others = threading.Event(), threading.Event()
    runner = FakeRunner(gate=lambda r: hold if r.group_id == 0 else others)
    scheduler = make(runner, sessions=3, max_staleness=4)
    scheduler.start()
    for _ in range(3):
        assert runner.started.acquire(timeout=WAIT)
    scheduler.set_version(5)
    hold.set()
    wait_until(lambda: scheduler.stats().dropped_stale == 1)
    others.set()
    group = scheduler.next_group(timeout=WAIT)
    scheduler.stop()
    assert group is not None and group.group_id != 0
    assert group.first_version == 5
    assert {r.request.adapter for r in group.rollouts} == {"pi-policy-v5"}
    assert scheduler.stats().dropped_stale == 1


def test_ready_limit_holds_new_groups_back_until_the_trainer_takes_some() -> None:
    first, later = threading.Event(), threading.Event()
    runner = FakeRunner(gate=lambda r: later if r.group_id >= 4 else first)
    scheduler = make(runner, sessions=4, rollouts_per_task=1, max_ready_groups=1)
    scheduler.start()
    for _ in range(4):
        assert runner.started.acquire(timeout=WAIT)
    first.set()
    wait_until(lambda: scheduler.stats().scored == 4 and scheduler.stats().in_flight == 0)
    assert len(runner.requests) == 4  # four groups ready: no worker opens another
    drain(scheduler, 4)
    # the next rollouts block, so reaching 4 in flight needs every idle worker woken
    wait_until(lambda: scheduler.stats().in_flight == 4)
    assert {r.group_id for r in runner.requests} == set(range(8))
    later.set()
    scheduler.stop()


def test_group_within_staleness_is_kept() -> None:
    hold, others = threading.Event(), threading.Event()
    runner = FakeRunner(gate=lambda r: hold if r.group_id == 0 else others)
    scheduler = make(runner, sessions=3, max_staleness=4)
    scheduler.start()
    for _ in range(3):
        assert runner.started.acquire(timeout=WAIT)
    scheduler.set_version(4)
    hold.set()
    group = scheduler.next_group(timeout=WAIT)
    others.set()
    scheduler.stop()
    assert group is not None and group.group_id == 0 and group.first_version == 0
    assert scheduler.stats().dropped_stale == 0


def test_unstarted_rollouts_of_a_stale_group_never_start() -> None:
    hold = threading.Event()
    runner = FakeRunner(gate=lambda r: hold if r.group_id == 0 else None)
    scheduler = make(runner, sessions=1, max_staleness=1)
    scheduler.start()
    assert runner.started.acquire(timeout=WAIT)
    scheduler.set_version(2)
    hold.set()
    group = scheduler.next_group(timeout=WAIT)
    scheduler.stop()
    assert group is not None and group.group_id == 1
    assert [(r.group_id, r.attempt) for r in runner.requests if r.group_id == 0] == [(0, 0)]
    assert scheduler.stats().dropped_stale == 1


def test_failed_rollouts_retry_then_become_unscorable() -> None:
    def decide(req, tries):  # in group 0, attempt 1 always fails, attempt 2 fails once
        if req.group_id == 0 and (req.attempt == 1 or (req.attempt == 2 and tries == 0)):
            return ("failed", 0.0, 0)
        return ("scored", 1.0, 0)

    runner = FakeRunner(decide=decide)
    scheduler = make(runner, sessions=1, max_retries=2)
    scheduler.start()
    (group,) = drain(scheduler, 1)
    scheduler.stop()
    by_attempt = {r.request.attempt: r for r in group.rollouts}
    assert by_attempt[0].status == "scored"
    assert by_attempt[1].status == "unscorable" and by_attempt[1].error
    assert by_attempt[2].status == "scored"
    tries = Counter(r.attempt for r in runner.requests if r.group_id == 0)
    assert tries == {0: 1, 1: 3, 2: 2}
    stats = scheduler.stats()
    assert (stats.failed, stats.retried, stats.unscorable) == (4, 3, 1)
    sessions = [r.session_id for r in runner.requests]
    assert len(set(sessions)) == len(sessions)


def test_runner_that_raises_counts_as_failed_and_never_crashes() -> None:
    def decide(req, tries):
        if req.attempt == 0:
            raise RuntimeError("docker went away")
        return ("scored", 0.5, 0)

    scheduler = make(FakeRunner(decide=decide), sessions=2, max_retries=1)
    scheduler.start()
    groups = drain(scheduler, 2)
    scheduler.stop()
    for group in groups:
        broken = next(r for r in group.rollouts if r.request.attempt == 0)
        assert broken.status == "unscorable"
        assert broken.error and broken.error.startswith("runner.raised: RuntimeError")
        assert len(group.scored) == 2
    stats = scheduler.stats()
    assert stats.runner_errors >= 4 and stats.unscorable >= 2


def test_requests_name_the_version_current_at_start() -> None:
    runner = FakeRunner()
    scheduler = make(runner, sessions=2)
    scheduler.start()
    seen = []
    for version in range(1, 4):
        seen += drain(scheduler, 1)
        scheduler.set_version(version)
    # the groups drained so far may all have started before the changes (on a loaded
    # machine the scheduler's threads run ahead of this one): take groups until one
    # started after them
    deadline = time.monotonic() + WAIT
    while max(r.model_version for r in runner.requests) < 3:
        assert time.monotonic() < deadline, scheduler.stats()
        seen += drain(scheduler, 1)
    scheduler.stop()
    for req in runner.requests:
        assert req.adapter == f"pi-policy-v{req.model_version}"
    with pytest.raises(SchedulerError, match=r"scheduler\.version-backwards"):
        scheduler.set_version(1)


def test_two_harnesses_never_share_adapter_names() -> None:
    runner = FakeRunner()  # one server-like runner shared by both trainers
    schedulers = {h: make(runner, harness=h, sessions=3) for h in ("pi", "opencode")}
    groups: dict[str, list[Group]] = {h: [] for h in schedulers}

    def trainer(harness: str) -> None:
        scheduler = schedulers[harness]
        for version in range(1, 5):
            groups[harness] += drain(scheduler, 1)
            scheduler.set_version(version)

    for scheduler in schedulers.values():
        scheduler.start()
    threads = [threading.Thread(target=trainer, args=(h,)) for h in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    for scheduler in schedulers.values():
        scheduler.stop()
    for harness in schedulers:
        assert len(groups[harness]) == 4
        mine = [r for r in runner.requests if r.harness == harness]
        assert mine and all(re.fullmatch(rf"{harness}-policy-v\d+", r.adapter) for r in mine)
        for group in groups[harness]:
            assert all(r.request.harness == harness for r in group.rollouts)
    assert {r.harness for r in runner.requests} == {"pi", "opencode"}


def test_stop_leaves_no_threads_and_counts_abandoned() -> None:
    before = set(threading.enumerate())
    scheduler = make(FakeRunner(), sessions=3)
    scheduler.start()
    drain(scheduler, 2)
    scheduler.stop()
    assert set(threading.enumerate()) <= before
    assert scheduler.stats().abandoned == 0
    assert scheduler.stats().in_flight == 0

    hold = threading.Event()
    runner = FakeRunner(gate=lambda r: hold)
    stuck = make(runner, harness="hermes", sessions=2)
    stuck.start()
    for _ in range(2):
        assert runner.started.acquire(timeout=WAIT)
    stuck.stop(timeout=0.05)
    assert stuck.stats().abandoned == 2
    hold.set()
    stuck.stop(timeout=WAIT)
    assert stuck.stats().abandoned == 0
    assert stuck.next_group(timeout=0.01) is None


def test_bad_input_has_reason_codes() -> None:
    with pytest.raises(SchedulerError, match=r"scheduler\.no-tasks"):
        Scheduler(FakeRunner(), [], SchedulerOptions(harness="pi"))
    with pytest.raises(SchedulerError, match=r"scheduler\.duplicate-task"):
        Scheduler(FakeRunner(), [TASKS[0], TASKS[0]], SchedulerOptions(harness="pi"))


def test_options_follow_the_training_config() -> None:
    config = resolve_config(preset="twil-8b", overrides=[("rollouts_per_task", 4), ("seed", 9)])
    options = SchedulerOptions.from_config(config, "hermes", max_retries=0)
    assert (options.harness, options.sessions, options.rollouts_per_task) == ("hermes", 12, 4)
    assert (options.max_staleness, options.seed, options.max_retries) == (4, 9, 0)
    assert options.ready_limit == 2 * (12 // 4)
