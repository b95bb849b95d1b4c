"""The evaluator with doubles for the server's adapter slots and the harness runner:
waves never exceed the slots, every attempt is accounted for, and a stopped evaluation
resumes without repeating an attempt and reports the same bytes."""

from __future__ import annotations

import hashlib
import itertools
import threading
from pathlib import Path

import pytest

from train.evaluate import Evaluator, Ledger, build_report, find_checkpoints, plan_waves
from train.evaluate.ledger import Attempt
from train.evaluate.plan import BASE, CheckpointError, EvalPlan, EvalTask
from train.rollout.contract import Rollout, RolloutRequest


class FakeSlots:
    """Refuses to load past its capacity, like vLLM past --max-loras."""

    def __init__(self, capacity: int, broken: frozenset[str] = frozenset()) -> None:
        self.capacity, self.broken = capacity, broken
        self.live: dict[str, Path] = {}
        self.events: list[tuple[str, str]] = []
        self.peak = 0

    def load(self, name: str, path: Path) -> None:
        if name in self.broken:
            raise RuntimeError(f"bad adapter {name}")
        if len(self.live) >= self.capacity:
            raise RuntimeError("no free adapter slot")
        self.live[name] = path
        self.events.append(("load", name))
        self.peak = max(self.peak, len(self.live))

    def unload(self, name: str) -> None:
        self.live.pop(name)
        self.events.append(("unload", name))

    def loaded(self) -> list[str]:
        return sorted(self.live)


def _outcome(model: str, task_id: str, attempt: int) -> int:
    return int(hashlib.sha256(f"{model}|{task_id}|{attempt}".encode()).hexdigest(), 16)


class FakeRunner:
    """Deterministic outcomes from (model, task, attempt); some fail, some are unscorable.
    `stop_after` raises KeyboardInterrupt on that call, like a kill mid-evaluation."""

    def __init__(self, slots: FakeSlots | None = None, stop_after: int | None = None) -> None:
        self.slots, self.stop_after = slots, stop_after
        self.calls: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()

    def factory(self, model: str):
        def run(request: RolloutRequest) -> Rollout:
            with self.lock:
                if self.stop_after is not None and len(self.calls) >= self.stop_after:
                    raise KeyboardInterrupt
                self.calls.append((model, request.task_id, request.attempt))
            assert request.adapter == model
            if self.slots is not None and model != "tiny":
                assert model in self.slots.live, f"{model} used while not loaded"
            roll = _outcome(model, request.task_id, request.attempt)
            if roll % 13 == 0:
                return Rollout(request=request, status="unscorable", error="verifier.error")
            if roll % 11 == 0:
                return Rollout(request=request, status="failed", error="container.crashed")
            if roll % 17 == 0:
                raise RuntimeError("runner bug")
            score = 1.0 if roll % 3 else 0.5
            return Rollout(
                request=request,
                status="scored",
                verifier_score=score,
                tool_calls=roll % 7,
                blocked_calls=1 if roll % 19 == 0 else 0,
            )

        return run


def _adapters(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "adapter_config.json").write_text("{}")
    return root


def _plan(tmp_path: Path, checkpoints: int = 5, tasks: int = 4, k: int = 3, slots: int = 2):
    root = _adapters(tmp_path / "adapters", [f"pi-policy-v{i}" for i in range(1, checkpoints + 1)])
    return EvalPlan(
        harness="pi",
        k=k,
        base_model="tiny",
        checkpoints=find_checkpoints([root]),
        tasks=[EvalTask(task_id=f"task-{i}", task_dir=tmp_path / f"t{i}") for i in range(tasks)],
        slots=slots,
    )


@pytest.mark.parametrize(("count", "slots"), list(itertools.product(range(12), range(1, 6))))
def test_waves_never_exceed_slots_and_cover_every_checkpoint(
    tmp_path: Path, count: int, slots: int
) -> None:
    plan = _plan(tmp_path, checkpoints=max(count, 1), slots=slots)
    checkpoints = plan.checkpoints[:count]
    waves = plan_waves(checkpoints, slots)
    assert all(1 <= len(w) <= slots for w in waves)
    assert [c for w in waves for c in w] == checkpoints
    assert len(waves) == -(-count // slots)


def test_plan_waves_rejects_zero_slots() -> None:
    with pytest.raises(ValueError):
        plan_waves([], 0)


def test_checkpoints_are_ordered_naturally_and_clashing_names_widened(tmp_path: Path) -> None:
    root = _adapters(tmp_path / "run", ["pi/adapters/pi-policy-v10", "pi/adapters/pi-policy-v2"])
    other = _adapters(tmp_path / "other", ["pi-policy-v2"])
    found = find_checkpoints([root, other / "pi-policy-v2"])
    labels = [c.label for c in found]
    assert labels == ["adapters/pi-policy-v2", "other/pi-policy-v2", "pi-policy-v10"]
    assert len({c.adapter for c in found}) == 3
    assert all(c.adapter.startswith("eval-") and "/" not in c.adapter for c in found)
    single = find_checkpoints([root])
    assert [c.label for c in single] == ["pi-policy-v2", "pi-policy-v10"]
    with pytest.raises(CheckpointError):
        find_checkpoints([tmp_path / "missing"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match=r"adapter_config\.json"):
        find_checkpoints([tmp_path / "empty"])


def test_evaluator_loads_in_waves_and_accounts_for_every_attempt(tmp_path: Path) -> None:
    plan = _plan(tmp_path, checkpoints=5, slots=2)
    slots = FakeSlots(capacity=2)
    runner = FakeRunner(slots)
    summary = Evaluator(slots, runner.factory, plan, Ledger(tmp_path / "l.jsonl"), jobs=3).run()
    assert slots.peak <= 2 and not slots.live
    loads = [name for event, name in slots.events if event == "load"]
    assert sorted(loads) == sorted(c.adapter for c in plan.checkpoints)  # each loaded once
    assert summary.waves == [["pi-policy-v1", "pi-policy-v2"], ["pi-policy-v3", "pi-policy-v4"],
                             ["pi-policy-v5"]]  # fmt: skip
    attempts = Ledger(tmp_path / "l.jsonl").load()
    assert len(attempts) == plan.total_attempts == summary.ran
    report = build_report(plan, attempts)
    for row in report.checkpoints:
        assert row.scored + row.failed + row.unscorable + row.missing == row.planned
        mine = [a for a in attempts.values() if a.checkpoint == row.label]
        scored = [a for a in mine if a.status == "scored"]
        solved = [
            a for a in scored if a.verifier_score == 1.0 and a.blocked_calls == 0
        ]  # the definition, counted independently of Attempt.solved
        assert (row.scored, row.solved) == (len(scored), len(solved))
        assert row.missing == 0
    assert sum(report.accounted.values()) == plan.total_attempts
    assert report.accounted["failed"] > 0 and report.accounted["unscorable"] > 0


def test_failed_attempts_are_retried_then_counted(tmp_path: Path) -> None:
    plan = _plan(tmp_path, checkpoints=1, tasks=6, k=4, slots=1)
    runner = FakeRunner()
    Evaluator(FakeSlots(1), runner.factory, plan, Ledger(tmp_path / "l.jsonl"), retries=2).run()
    failed = [a for a in Ledger(tmp_path / "l.jsonl").load().values() if a.status == "failed"]
    assert failed
    for a in failed:  # a failing (model, task, attempt) was tried 1 + retries times
        assert runner.calls.count((a.model, a.task_id, a.attempt)) == 3
    crashed = [a for a in failed if a.error and a.error.startswith("runner.crashed")]
    assert crashed, "a runner that raises is counted as failed, not a crash of the run"


def test_a_broken_adapter_leaves_its_attempts_missing_and_the_rest_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, checkpoints=3, slots=2)
    broken = plan.checkpoints[1].adapter
    slots = FakeSlots(2, broken=frozenset({broken}))
    summary = Evaluator(slots, FakeRunner(slots).factory, plan, Ledger(tmp_path / "l")).run()
    report = build_report(plan, Ledger(tmp_path / "l").load(), summary.load_errors)
    row = report.row(plan.checkpoints[1].label)
    assert row.missing == row.planned and row.load_error and "bad adapter" in row.load_error
    assert report.row(plan.checkpoints[2].label).missing == 0
    assert not slots.live


@pytest.mark.parametrize("jobs", [1, 3])
def test_resume_after_a_kill_repeats_nothing_and_reports_the_same_bytes(
    tmp_path: Path, jobs: int
) -> None:
    plan = _plan(tmp_path, checkpoints=4, tasks=3, k=2, slots=3)
    whole = FakeRunner()
    Evaluator(FakeSlots(3), whole.factory, plan, Ledger(tmp_path / "whole.jsonl")).run()
    expected = build_report(plan, Ledger(tmp_path / "whole.jsonl").load()).to_json()

    ledger = Ledger(tmp_path / "resumed.jsonl")
    for stop in (7, 5, 11):  # killed three times at different points
        slots = FakeSlots(3)
        runner = FakeRunner(stop_after=stop)
        with pytest.raises(KeyboardInterrupt):
            Evaluator(slots, runner.factory, plan, ledger, jobs=jobs).run()
        assert not slots.live, "a stopped wave unloads its adapters"
    with ledger.path.open("a") as handle:
        handle.write('{"checkpoint": "base", "task_id": "task-0", "att')  # cut by a kill
    runner = FakeRunner()
    done_before = ledger.load()
    summary = Evaluator(FakeSlots(3), runner.factory, plan, ledger, jobs=jobs).run()
    labels = {c.adapter: c.label for c in plan.checkpoints} | {"tiny": BASE}
    rerun = {(labels[m], t, a) for m, t, a in runner.calls}
    assert not rerun & set(done_before), "an attempt already in the ledger ran again"
    assert summary.resumed == len(done_before) and summary.ran == len(rerun)
    assert len(done_before) + len(rerun) == plan.total_attempts
    assert build_report(plan, ledger.load()).to_json() == expected


@pytest.mark.parametrize("jobs", [1, 3])
def test_every_call_of_a_killed_run_is_in_the_ledger_exactly_once(
    tmp_path: Path, jobs: int
) -> None:
    plan = _plan(tmp_path, checkpoints=2, tasks=3, k=2, slots=1)
    ledger = Ledger(tmp_path / "l.jsonl")
    runner = FakeRunner(stop_after=9)
    with pytest.raises(KeyboardInterrupt):
        Evaluator(FakeSlots(1), runner.factory, plan, ledger, jobs=jobs, retries=0).run()
    lines = ledger.path.read_text().splitlines()
    assert len(lines) == len(runner.calls) == 9
    keys = [Attempt.model_validate_json(line).key for line in lines]
    assert len(set(keys)) == len(keys)


def test_report_ignores_attempts_outside_the_plan(tmp_path: Path) -> None:
    plan = _plan(tmp_path, checkpoints=1, tasks=2, k=2, slots=1)
    Evaluator(FakeSlots(1), FakeRunner().factory, plan, Ledger(tmp_path / "l")).run()
    attempts = Ledger(tmp_path / "l").load()
    smaller = plan.model_copy(update={"k": 1})
    report = build_report(smaller, attempts)
    assert report.planned == smaller.total_attempts == sum(report.accounted.values())


def test_change_against_base_is_the_difference_of_pass_rates(tmp_path: Path) -> None:
    plan = _plan(tmp_path, checkpoints=2, tasks=5, k=4, slots=2)
    Evaluator(FakeSlots(2), FakeRunner().factory, plan, Ledger(tmp_path / "l"), jobs=2).run()
    report = build_report(plan, Ledger(tmp_path / "l").load())
    base = report.row(BASE)
    assert base.delta_vs_base is None
    for row in report.checkpoints[1:]:
        assert row.delta_vs_base == pytest.approx(
            row.solved / row.scored - base.solved / base.scored, abs=1e-6
        )
        assert row.delta_ci_low <= row.delta_vs_base <= row.delta_ci_high


def test_a_server_that_stops_answering_leaves_attempts_missing_not_a_crash(
    tmp_path: Path,
) -> None:
    class DeadSlots(FakeSlots):
        def loaded(self) -> list[str]:
            raise ConnectionError("no server")

        def load(self, name: str, path: Path) -> None:
            raise ConnectionError("no server")

    plan = _plan(tmp_path, checkpoints=2, tasks=2, k=1, slots=2)
    summary = Evaluator(DeadSlots(2), FakeRunner().factory, plan, Ledger(tmp_path / "l")).run()
    report = build_report(plan, Ledger(tmp_path / "l").load(), summary.load_errors)
    assert report.row(BASE).missing == 0
    assert [report.row(c.label).missing for c in plan.checkpoints] == [2, 2]
    assert sum(report.accounted.values()) == plan.total_attempts


def test_a_rerun_with_every_attempt_in_the_ledger_starts_no_server(tmp_path: Path) -> None:
    """Neither `--server-url` nor `--base-model`: any attempt left to run needs a server and
    stops with `eval.no-server`; a finished ledger reports without one."""
    from train.evaluate.live import LiveOptions, LiveUnavailable, evaluate_live

    plan = _plan(tmp_path, checkpoints=2, tasks=2, k=2, slots=1)
    ledger = Ledger(tmp_path / "l.jsonl")
    Evaluator(FakeSlots(1), FakeRunner().factory, plan, ledger, retries=0).run()
    lines = ledger.path.read_text().splitlines()
    assert len(lines) == plan.total_attempts
    options = LiveOptions(work_dir=tmp_path / "eval")
    summary = evaluate_live(plan, ledger, options)
    assert (summary.ran, summary.resumed) == (0, plan.total_attempts)

    ledger.path.write_text("\n".join(lines[:-1]) + "\n")  # one attempt left
    with pytest.raises(LiveUnavailable, match=r"eval\.no-server"):
        evaluate_live(plan, ledger, options)
