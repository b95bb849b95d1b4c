"""The tiny-cpu preset and the real-run hookup of `python -m train` (the run itself is
replaced by a recorder here; the real one needs vLLM, Docker and a harness)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

import train.launch.run
from train.cli import main
from train.data.config import TINY_MODEL, ConfigError, resolve_config
from train.launch.errors import RunError
from train.launch.plan import build_plan
from train.launch.run import RunResult, run_training
from train.launch.services import resolve_model
from train.rollout.scheduler import TaskRef


def test_tiny_cpu_preset_is_a_cpu_run_of_two_steps() -> None:
    config = resolve_config(preset="tiny-cpu")
    assert (config.device, config.gpus, config.steps, config.harnesses) == ("cpu", 0, 2, ["pi"])
    assert config.model == TINY_MODEL
    assert config.token_budget >= (config.server.max_model_len or 0)  # no row is too long
    plan = build_plan(config, 3, 1, {})
    assert plan.server.max_loras == 1 * (config.max_staleness + 2)
    assert "--tensor-parallel-size" not in plan.server.command
    assert [t.gpu for t in plan.trainers] == [-1] and plan.server.gpus == []
    with pytest.raises(ConfigError, match="vLLM server"):
        resolve_config(preset="lfm3-1.7b", overrides=[("gpus", 0)])


def test_non_tiny_models_are_used_as_named(tmp_path: Path) -> None:
    config = resolve_config(preset="tiny-cpu", overrides=[("model", "org/model")])
    assert resolve_model(config, tmp_path) == "org/model"
    assert not (tmp_path / "model").exists()


def test_a_run_without_tasks_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"run\.no-tasks"):
        run_training(resolve_config(preset="tiny-cpu"), [], tmp_path)


def test_tiny_cpu_dry_run_flag_is_honoured(demo_tasks: Path, tmp_path: Path) -> None:
    argv = ["--tasks", str(demo_tasks), "--preset", "tiny-cpu", "--out", str(tmp_path), "--dry-run"]
    assert main(argv) == 0
    assert (tmp_path / "plan.json").is_file()


def test_tiny_cpu_runs_for_real_on_the_train_split(
    demo_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple] = []

    def record(config, tasks, out, *, resume=False):  # type: ignore[no-untyped-def]
        calls.append((config.preset, tasks, out, resume))
        return RunResult(steps={"pi": 2}, versions={"pi": 3}, adapters={"pi": out / "pi"})

    monkeypatch.setattr(train.launch.run, "run_training", record)
    argv = ["--tasks", str(demo_tasks), "--preset", "tiny-cpu", "--out", str(tmp_path), "--resume"]
    assert main(argv) == 0
    [(preset, tasks, out, resume)] = calls
    assert (preset, out, resume) == ("tiny-cpu", tmp_path, True)
    assert tasks and all((task.task_dir / "task.toml").is_file() for task in tasks)
    assert (tmp_path / "split.json").is_file()


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("run.trainer-failed: pi: boom", 1),
        ("run.trainer-failed: pi: scheduler.no-progress: 8 rollouts failed", 1),
        ("run.server-died: gone", 1),
        ("run.server-failed: no", 2),
    ],
)
def test_run_errors_map_to_exit_codes(
    demo_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, message: str, code: int
) -> None:
    def fail(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise RunError(message)

    monkeypatch.setattr(train.launch.run, "run_training", fail)
    argv = ["--tasks", str(demo_tasks), "--preset", "tiny-cpu", "--out", str(tmp_path)]
    assert main(argv) == code


def test_trainer_process_reports_a_failure_in_its_outcome(tmp_path: Path) -> None:
    from train.grpo.trainer_process import OUTCOME, TrainerOutcome, TrainerSpec
    from train.grpo.trainer_process import main as trainer_main
    from train.rollout.contract import GuardEndpoint

    spec = TrainerSpec(
        harness="no-such-harness",
        config=resolve_config(preset="tiny-cpu"),
        tasks=[TaskRef(task_id="t", task_dir=tmp_path)],
        server_url="http://127.0.0.1:9",
        model="unused",
        guard=GuardEndpoint(
            admin_url="http://127.0.0.1:9", container_url="http://h:9", log_dir=tmp_path / "guard"
        ),
        home=tmp_path / "home",
        run_id="r1",
    )
    spec.home.mkdir()
    path = tmp_path / "spec.json"
    path.write_text(spec.model_dump_json())
    assert TrainerSpec.model_validate_json(path.read_text()) == spec
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert trainer_main([str(path)]) == 1
    finally:  # the trainer's process-wide handlers must not outlive it in pytest's process
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    outcome = TrainerOutcome.model_validate_json((spec.home / OUTCOME).read_text())
    assert outcome.harness == "no-such-harness" and "no-such-harness" in (outcome.error or "")
