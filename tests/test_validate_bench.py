"""benchmarks/validate_bench.py compares equal work: each baseline and our runtime run
the same trials per task (a fake runtime and a fake docker CLI record them here)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from benchmarks import validate_bench
from repo2rlenv.runtime import TrialRequest, TrialResult


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, bool]] = []
        self._lock = threading.Lock()

    def add(self, task: Path, solution: bool) -> None:
        with self._lock:
            self.calls.append((task.name, solution))


class _Runtime:
    def __init__(self, recorder: _Recorder) -> None:
        self.recorder = recorder

    def run_trial(self, tree: Path, image: str, request: TrialRequest) -> TrialResult:
        self.recorder.add(tree, request.apply_solution)
        reward = 1.0 if request.apply_solution else 0.0
        return TrialResult(label=request.label, status="ok", reward=reward)


@pytest.mark.parametrize(("reruns", "jobs"), [(2, 1), (0, 2)])
def test_our_runtime_and_the_bare_baseline_run_the_same_trials(
    monkeypatch: pytest.MonkeyPatch, reruns: int, jobs: int
) -> None:
    tasks = [Path("a"), Path("b"), Path("c")]
    bare, ours = _Recorder(), _Recorder()

    def bare_trial(task: Path, image: str, reference: bool) -> float:
        bare.add(task, reference)
        return 1.0 if reference else 0.0

    monkeypatch.setattr(validate_bench, "bare_trial", bare_trial)
    images = {t: "img" for t in tasks}
    ran_bare = validate_bench.bare_validate(tasks, images, reruns, jobs)
    trees = {t: t for t in tasks}
    ran_ours = validate_bench.runtime_trials(tasks, trees, images, _Runtime(ours), reruns, jobs)
    assert ran_bare == ran_ours == len(bare.calls) == len(ours.calls)
    assert sorted(bare.calls) == sorted(ours.calls)
    per_task = [s for t, s in sorted(ours.calls) if t == "a"]
    # reference + no-op, once and per rerun: Harbor's oracle + nop at reruns 0.
    assert sorted(per_task) == [False] * (reruns + 1) + [True] * (reruns + 1)
