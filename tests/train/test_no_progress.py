"""A run that cannot make progress stops and says why (issue 22): rollouts that all fail
for a reason a retry does not cure end the scheduler with `scheduler.no-progress` and
the counts by reason; one broken task among many, or failures a policy causes, do not;
a model server that stops answering mid-run ends the run too."""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest

from tests.train.rollout_fakes import FakeRunner, rollout
from train.data.failures import (
    FAILURES,
    FailureTracker,
    NoProgressRule,
    is_permanent,
    read_failures,
    reason_of,
)
from train.grpo.trainer_process import error_line
from train.grpo.worker import RolloutWorker, WorkerError, WorkerSettings
from train.launch.services import ServerWatch
from train.rollout.contract import Rollout, RolloutRequest
from train.rollout.scheduler import Scheduler, SchedulerError, SchedulerOptions, TaskRef

TASKS = [TaskRef(task_id=f"task-{n}", task_dir=Path(f"/tasks/task-{n}")) for n in range(5)]
UNREADABLE = "task.unreadable: task.toml is missing"
DEAD_SERVER = "guard.upstream-error: 2 model call(s) failed upstream (HTTP 502)"


class ErrorRunner(FakeRunner):
    """FakeRunner whose failed rollouts carry `error(req)` as a real runner's would."""

    def __init__(self, error, decide=None) -> None:
        super().__init__(decide=decide or (lambda req, n: ("failed", 0.0, 0)))
        self.error = error

    def __call__(self, req: RolloutRequest) -> Rollout:
        done = super().__call__(req)
        if done.status == "failed":
            return done.model_copy(update={"error": self.error(req)})
        return done


def scheduler(runner: FakeRunner, tmp_path: Path, **options: object) -> Scheduler:
    settings: dict[str, object] = {
        "harness": "pi", "sessions": 2, "rollouts_per_task": 2,
        "failures_path": tmp_path / FAILURES,
    }  # fmt: skip
    return Scheduler(runner, TASKS, SchedulerOptions(**{**settings, **options}))


def test_reason_codes_and_which_are_permanent() -> None:
    assert reason_of(UNREADABLE) == "task.unreadable"
    assert reason_of(None) == "rollout.failed"
    assert is_permanent("task.unreadable") and is_permanent("install.registry-unreachable")
    assert is_permanent("guard.upstream-error")
    assert not is_permanent("harness.crashed") and not is_permanent("verifier.error")
    assert not is_permanent("task.unreadable-ish")


def test_every_rollout_failing_stops_the_scheduler_with_the_reason_count(
    tmp_path: Path,
) -> None:
    runner = ErrorRunner(lambda req: UNREADABLE)
    sched = scheduler(runner, tmp_path)
    began = time.monotonic()
    sched.start()
    with pytest.raises(SchedulerError) as caught:
        for _ in range(50):  # groups of unscorable rollouts come out until the stop
            assert sched.next_group(timeout=30) is not None
    sched.stop()
    assert time.monotonic() - began < 10
    message = str(caught.value)
    assert message.startswith("scheduler.no-progress:"), message
    assert "before any rollout was scored" in message and "task.unreadable" in message
    summary = read_failures(tmp_path / FAILURES)
    assert summary is not None and summary.stopped
    assert summary.counts["task.unreadable"] == summary.failed >= 8
    assert summary.examples["task.unreadable"].endswith(UNREADABLE)
    assert summary.failed <= 3 * 6  # three tasks' groups (2 rollouts x 3 tries) at most
    assert len(runner.requests) <= summary.failed + 2  # only the 2 in flight after the stop


def test_the_stop_reaches_the_trainer_as_a_clean_error_line(tmp_path: Path) -> None:
    sched = scheduler(ErrorRunner(lambda req: UNREADABLE), tmp_path)
    worker = RolloutWorker(sched, WorkerSettings(poll_s=0.05), lambda row, marks: row)
    worker.start()
    deadline = time.monotonic() + 30
    with pytest.raises(WorkerError) as caught:
        while time.monotonic() < deadline:
            worker.check_health(3600)
            time.sleep(0.05)
    worker.stop()
    line = error_line(caught.value)
    assert line.startswith("scheduler.no-progress:") and "task.unreadable" in line


def test_one_broken_task_among_many_does_not_stop_the_run(tmp_path: Path) -> None:
    runner = ErrorRunner(
        lambda req: UNREADABLE,
        decide=lambda req, n: ("failed", 0.0, 0) if req.task_id == "task-0" else ("scored", 1.0, 0),
    )
    sched = scheduler(runner, tmp_path, max_retries=5)
    sched.start()
    groups = [sched.next_group(timeout=30) for _ in range(12)]
    sched.stop()
    assert all(g is not None for g in groups)
    summary = read_failures(tmp_path / FAILURES)
    assert summary is not None and summary.stopped is None
    assert summary.counts["task.unreadable"] >= 6  # task-0's group came round


def test_failures_a_policy_causes_never_stop_the_run(tmp_path: Path) -> None:
    runner = ErrorRunner(lambda req: "verifier.failed: tests did not pass")
    sched = scheduler(runner, tmp_path, max_retries=0)
    sched.start()
    groups = [sched.next_group(timeout=30) for _ in range(10)]
    sched.stop()
    assert all(g is not None and not g.scored for g in groups)
    summary = read_failures(tmp_path / FAILURES)
    assert summary is not None and summary.stopped is None and summary.failed >= 20


def test_a_server_that_dies_mid_run_stops_it_after_a_streak(tmp_path: Path) -> None:
    dead = threading.Event()

    def decide(req: RolloutRequest, tries: int):
        if len(runner.requests) > 12:
            dead.set()
        return ("failed", 0.0, 0) if dead.is_set() else ("scored", 1.0, 0)

    runner = ErrorRunner(lambda req: DEAD_SERVER, decide=decide)
    rule = NoProgressRule(first_failures=8, streak_failures=10, min_tasks=3)
    sched = scheduler(runner, tmp_path, no_progress=rule)
    sched.start()
    groups = []
    with pytest.raises(SchedulerError) as caught:
        for _ in range(100):
            group = sched.next_group(timeout=30)
            assert group is not None
            groups.append(group)
    sched.stop()
    assert groups, "the run trained before the server died"
    message = str(caught.value)
    assert "in a row" in message and "guard.upstream-error" in message, message


def test_tracker_needs_several_tasks_in_the_streak() -> None:
    tracker = FailureTracker(NoProgressRule(first_failures=2, min_tasks=3), tasks=10)
    assert all(tracker.record("a", "failed", UNREADABLE) is None for _ in range(20))
    assert tracker.record("b", "failed", UNREADABLE) is None
    assert tracker.record("c", "failed", UNREADABLE) is not None
    small = FailureTracker(NoProgressRule(first_failures=2, min_tasks=3), tasks=1)
    assert small.record("a", "failed", UNREADABLE) is None
    assert small.record("a", "failed", UNREADABLE) is not None  # the run's only task


def test_a_scored_rollout_resets_the_streak() -> None:
    tracker = FailureTracker(NoProgressRule(first_failures=3, streak_failures=3), tasks=3)
    for task in ("a", "b"):
        assert tracker.record(task, "failed", UNREADABLE) is None
    assert tracker.record("a", "scored", None) is None
    for task in ("a", "b"):
        assert tracker.record(task, "failed", UNREADABLE) is None
    assert tracker.record("c", "failed", UNREADABLE) is not None


class _Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


def test_server_watch_sees_a_real_server_die() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Health)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    watch = ServerWatch(f"http://127.0.0.1:{server.server_port}", every_s=0.0, misses=2)
    assert not watch.dead() and not watch.dead()
    server.shutdown()
    server.server_close()
    assert not watch.dead()  # one miss is not yet a death
    assert watch.dead()


def test_failure_summary_file_is_json_with_counts(tmp_path: Path) -> None:
    tracker = FailureTracker(NoProgressRule(), tasks=3, path=tmp_path / FAILURES)
    tracker.record("a", "failed", UNREADABLE)
    data = json.loads((tmp_path / FAILURES).read_text())
    assert data["counts"] == {"task.unreadable": 1} and data["failed"] == 1
    assert rollout  # the fakes' builder stays the one real runs are shaped like


def test_failure_counts_are_printed_while_the_run_goes_on_in_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from types import SimpleNamespace

    from train.launch.run import FailureProgress

    home = tmp_path / "pi"
    tracker = FailureTracker(NoProgressRule(), tasks=3, path=home / FAILURES)
    tracker.record("a", "failed", UNREADABLE)
    tracker.record("b", "scored", None)
    progress = FailureProgress([SimpleNamespace(harness="pi", home=home)], every_s=30.0)
    assert progress.enabled  # pytest's stderr is not a terminal, like a log file
    progress.tick(now=time.monotonic())
    assert capsys.readouterr().err == ""  # not yet: every 30 s
    progress.tick(now=time.monotonic() + 31)
    text = " ".join(capsys.readouterr().err.split())
    assert "pi: 1 rollouts scored, 1 failed (task.unreadable 1)" in text


class _Broken(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # vLLM's /health once its engine core died
        self.send_response(500)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


def test_a_server_answering_500_is_down_and_one_refusing_too() -> None:
    from train.launch.services import server_down

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Broken)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        assert server_down(url)
    finally:
        server.shutdown()
        server.server_close()
    assert server_down(url)  # nothing listens now: refused
