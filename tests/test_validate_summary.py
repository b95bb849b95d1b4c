"""Validate's totals and final line (trials, task failures by rule apart from
infrastructure errors and retries, wall time, cost), and `-j` in the hundreds with
readable progress: a fake runtime stands in for a hosted provider, so no engine runs."""

from __future__ import annotations

import io
import json
import shutil
import threading
from pathlib import Path

import pytest
from rich.console import Console
from rich.progress import Progress

from repo2rlenv import ui
from repo2rlenv.bundle import TaskTree, find_task_dirs
from repo2rlenv.cli import main
from repo2rlenv.runtime import TrialRequest, TrialResult, registry
from repo2rlenv.validate import ValidateOptions, validate_tasks
from repo2rlenv.validate.report import TaskReport


class FakeRuntime:
    """Scores the reference 1 and the rest 0, like a sound task on a provider; tasks
    named `outage*` lose every trial to the backend after two retries, `noprobe*` lose
    only their forgery probes, `slow*` fail the task's own way (verifier timeout);
    `cost` is charged per trial when set.
    `gate`, when set, holds every `prepare` until that many tasks are in flight."""

    def __init__(self, name: str = "fake:cloud", cost: float | None = None) -> None:
        self.name = name
        self.cost = cost
        self.gate: threading.Barrier | None = None
        self._lock = threading.Lock()
        self.in_flight = self.peak = 0

    def check(self) -> None: ...

    def environment_key(self, task: TaskTree) -> str:
        return "fake"

    def prepare(self, task: TaskTree) -> str:
        with self._lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        if self.gate is not None:
            self.gate.wait(timeout=60)
        with self._lock:
            self.in_flight -= 1
        return "image"

    def run_trial(self, task: TaskTree, image: str, request: TrialRequest) -> TrialResult:
        if task.name.startswith("outage"):
            return TrialResult(label=request.label, status="error", infra_retries=2)
        if task.name.startswith("noprobe") and request.label.startswith("probe."):
            return TrialResult(label=request.label, status="error", infra_retries=2)
        if task.name.startswith("slow") and request.label == "reference":
            return TrialResult(label=request.label, status="verifier-timeout")
        reward = 1.0 if request.apply_solution and not request.label.startswith("probe.") else 0.0
        return TrialResult(label=request.label, status="ok", reward=reward, cost_usd=self.cost)

    def abort(self) -> None: ...


def _copies(examples_dir: Path, tmp_path: Path, names: list[str]) -> list[Path]:
    source = find_task_dirs([examples_dir])[0]
    out = tmp_path / "many"
    for name in names:
        shutil.copytree(source, out / name)
    return [out / name for name in names]


def _options(jobs: int = 4, runtime: str = "fake:cloud") -> ValidateOptions:
    return ValidateOptions(reruns=0, probes=False, jobs=jobs, use_cache=False, runtime=runtime)


def test_summary_counts_task_failures_apart_from_infrastructure(examples_dir, tmp_path):
    dirs = _copies(examples_dir, tmp_path, ["good-a", "good-b", "slow-a", "outage-a"])
    report = validate_tasks(dirs, _options(), FakeRuntime())
    summary = report.summary()
    # slow-a's reference timed out: its no-op was skipped, not run; outage-a ran nothing
    assert summary["trials"] == 8 and summary["trials_run"] == 5
    assert summary["trials_skipped"] == 1
    assert summary["trial_failures"] == {"verifier-timeout": 1}
    assert summary["infra_errors"] == 2 and summary["infra_retries"] == 4
    assert summary["not_run"] == {"no-op": 1, "reference": 1}
    assert summary["cost_usd"] is None and summary["wall_s"] == report.wall_s
    assert summary["invalid"] == 2 and summary["invalid_by_infrastructure"] == 1
    assert summary["labels"] == {"needs_repair": 1, "unverified": 1, "verified": 2}
    line = report.final_line()
    assert line.startswith("4 tasks, 2 invalid (1 by infrastructure only); ")
    assert "task failures by rule: run.verifier-timeout 1;" in line  # run.error apart
    assert "5 trials run on fake:cloud, 1 skipped (task already refused);" in line
    assert "infrastructure: 2 trials not run (no-op 1, reference 1), 4 retries" in line
    assert "cost: not reported by fake:cloud" in line
    # a cached task's trials did not run now: neither counted as run nor as retried
    cached = report.tasks[3].model_copy(update={"cached": True})
    again = report.model_copy(update={"tasks": [*report.tasks[:3], cached]})
    assert again.summary()["trials_run"] == 5 and again.summary()["infra_retries"] == 0
    assert ", 2 cached;" in again.final_line()


def test_cost_is_summed_where_the_provider_reports_it(examples_dir, tmp_path):
    dirs = _copies(examples_dir, tmp_path, ["good-a", "good-b"])
    report = validate_tasks(dirs, _options(), FakeRuntime(cost=0.0125))
    assert report.summary()["cost_usd"] == pytest.approx(0.05)
    assert report.final_line().endswith("cost $0.0500")


def test_the_table_and_json_carry_the_totals(examples_dir, tmp_path, monkeypatch, capsys):
    _copies(examples_dir, tmp_path, ["good-a", "outage-a"])
    monkeypatch.setitem(registry.RUNTIMES, "fake", lambda option, _p: FakeRuntime(f"fake:{option}"))
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("COLUMNS", "400")
    args = ["validate", "-q", "--no-cache", "--no-probes", "--reruns", "0", "--runtime"]
    assert main([*args, "fake:cloud", "--json", "-", str(tmp_path / "many")]) == 1
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["infra_errors"], summary["infra_retries"], summary["cost_usd"]) == (2, 4, None)
    assert summary["not_run"] == {"no-op": 1, "reference": 1}
    assert "cost: not reported by fake:cloud" in summary["line"]
    console = Console(file=io.StringIO(), width=400, color_system=None)
    report = validate_tasks(
        find_task_dirs([tmp_path / "many"]), _options(runtime="fake:cloud"), FakeRuntime()
    )
    ui.validation_table(report, console)
    text = console.file.getvalue()
    assert "infra errors" in text and "retries" in text and "not reported" in text
    assert text.rstrip().splitlines()[-1] == report.final_line()


def test_jobs_in_the_hundreds_run_at_once_with_a_bounded_progress_display(examples_dir, tmp_path):
    """200 tasks at -j 200: every one is in flight at the same time (nothing caps the
    pool below -j), and the display never shows more than its few task bars."""
    jobs = 200
    dirs = _copies(examples_dir, tmp_path, [f"task-{i:03d}" for i in range(jobs)])
    runtime = FakeRuntime()
    runtime.gate = threading.Barrier(jobs)
    console = Console(file=io.StringIO(), width=120)
    progress = Progress(console=console)
    sink = ui.ValidateProgress(progress, total=jobs, max_bars=8)
    most = 0

    class Watch:
        def task_started(self, task_id: str, steps: int) -> None:
            sink.task_started(task_id, steps)
            _note()

        def step_done(self, task_id: str) -> None:
            sink.step_done(task_id)

        def task_done(self, report: TaskReport) -> None:
            sink.task_done(report)
            _note()

    def _note() -> None:
        nonlocal most
        most = max(most, len(progress.tasks))

    report = validate_tasks(dirs, _options(jobs=jobs), runtime, progress=Watch())
    assert runtime.peak == jobs
    assert report.summary()["valid"] == jobs and report.summary()["trials_run"] == 2 * jobs
    assert most <= 1 + 8  # the overall bar and at most eight task bars
    assert len(progress.tasks) == 1 and progress.tasks[0].completed == jobs
    assert progress.tasks[0].description == "[bold]validating"


def test_jobs_beyond_the_limit_are_one_line_errors(examples_dir, capsys):
    with pytest.raises(SystemExit) as stop:  # refused while the arguments are parsed
        main(["validate", "-q", "--no-run", "-j", "513", str(examples_dir)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "-j/--jobs: must be between 1 and 512 (got 513)" in err
    assert main(["validate", "-q", "--no-run", "-j", "300", str(examples_dir)]) == 0


def test_mine_takes_hosted_scale_jobs_and_refuses_beyond_in_one_line(tmp_path, capsys):
    """mine's oracle trials may run on a hosted provider too: -j in the hundreds is
    accepted (it was capped at 64, with a pydantic dump as the message)."""
    from repo2rlenv.mining.session_miner import MineOptions

    assert MineOptions(dataset="x", base_image="img:1", jobs=300).jobs == 300
    sessions = Path(__file__).resolve().parents[1] / "repo2rlenv" / "examples" / "sessions"
    args = ["mine", "--dataset", str(sessions), "--out", str(tmp_path / "out"), "--no-validate"]
    with pytest.raises(SystemExit) as stop:
        main([*args, "-j", "513"])
    assert stop.value.code == 2
    assert "-j/--jobs: must be between 1 and 512 (got 513)" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_probes_not_run_are_reported_apart_and_the_task_is_not_verified(
    examples_dir, tmp_path, monkeypatch, capsys
):
    """Every probe lost to the backend: the task is not `verified`, the probes are not
    `held`, and the table, the final line and the JSON say how many did not run."""
    _copies(examples_dir, tmp_path, ["good-a", "noprobe-a"])
    monkeypatch.setitem(registry.RUNTIMES, "fake", lambda option, _p: FakeRuntime(f"fake:{option}"))
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(tmp_path / "settings.toml"))
    args = [
        "validate",
        "-q",
        "--no-cache",
        "--reruns",
        "0",
        "--runtime",
        "fake:cloud",
        "--json",
        "-",
    ]
    assert main([*args, str(tmp_path / "many")]) == 1
    data = json.loads(capsys.readouterr().out)
    probes = len(data["tasks"][0]["trials"]) - 2
    assert data["summary"]["not_run"] == {"probe": probes}
    assert data["summary"]["labels"] == {"unverified": 1, "verified": 1}
    assert f"infrastructure: {probes} trials not run (probe {probes})" in data["summary"]["line"]
    lost = next(t for t in data["tasks"] if t["task_id"] == "noprobe-a")
    assert (lost["valid"], lost["not_run"], lost["label"]["status"]) == (
        False,
        {"probe": probes},
        "unverified",
    )
    options = ValidateOptions(reruns=0, jobs=2, use_cache=False, runtime="fake:cloud")
    report = validate_tasks(find_task_dirs([tmp_path / "many"]), options, FakeRuntime())
    console = Console(file=io.StringIO(), width=400, color_system=None)
    ui.validation_table(report, console)
    rows = {line.split()[1]: line for line in console.file.getvalue().splitlines() if "-a " in line}
    assert f"{probes} not run" in rows["noprobe-a"] and "held" not in rows["noprobe-a"]
    assert f"{probes}/{probes} held" in rows["good-a"]
    assert f"{probes} (probe {probes})" in console.file.getvalue()


def test_trials_skipped_after_a_refusal_are_counted_in_the_table_and_json(examples_dir, tmp_path):
    dirs = _copies(examples_dir, tmp_path, ["slow-a"])
    options = ValidateOptions(reruns=1, jobs=1, use_cache=False, runtime="fake:cloud")
    report = validate_tasks(dirs, options, FakeRuntime())
    total = len(report.tasks[0].trials)
    assert report.summary()["trials_skipped"] == total - 1
    assert report.summary()["infra_errors"] == 0  # skipped is not the backend's
    data = json.loads(report.to_json())
    assert data["tasks"][0]["skipped"] == total - 1
    assert {t["status"] for t in data["tasks"][0]["trials"][1:]} == {"skipped"}
    console = Console(file=io.StringIO(), width=400, color_system=None)
    ui.validation_table(report, console)
    probes = sum(t.label.startswith("probe.") for t in report.tasks[0].trials)
    row = next(line for line in console.file.getvalue().splitlines() if "slow-a" in line)
    assert f"{probes} skipped" in row and "held" not in row  # the probes column
    assert "— skipped" in row and "skipped skipped" in row  # ref and no-op columns
