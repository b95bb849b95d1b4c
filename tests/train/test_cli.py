from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import train.cli
import train.launch.plan
from tests.train.synthetic import Spec
from train.cli import build_parser, main

OUTPUTS = {"split.json", "imbalance.json", "imbalance.png", "plan.json", "config.toml"}


@pytest.fixture(autouse=True)
def _no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default mode depends on the machine; these tests pin it to 'no GPU'."""
    monkeypatch.setattr(train.cli, "count_gpus", lambda: 0)


def test_help_documents_every_option() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "train", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for action in build_parser()._actions:
        assert action.help, action.option_strings
        for option in action.option_strings:
            assert option in text, option
    assert "--no-dry-run" in text


def test_dry_run_on_the_demo_tasks(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["--tasks", str(demo_tasks), "--out", str(out)]) == 0
    assert {p.name for p in out.iterdir()} == OUTPUTS
    split = json.loads((out / "split.json").read_text())
    assert sorted(split["train"]) == sorted(p.name for p in demo_tasks.iterdir())
    plan = json.loads((out / "plan.json").read_text())
    assert [t["harness"] for t in plan["trainers"]] == ["pi", "opencode", "hermes"]
    assert plan["server"]["max_loras"] == 3 * (4 + 2)
    captured = capsys.readouterr()
    assert "dry run (no GPU and no vLLM server)" in " ".join(captured.err.split())
    stdout = captured.out
    for heading in ("split", "tasks by kind", "resolved config", "plan", "trainers"):
        assert heading in stdout


def test_dry_run_on_the_skewed_set_is_reproducible(
    skewed_root: Path, skewed: list[Spec], tmp_path: Path
) -> None:
    args = ["--tasks", str(skewed_root), "--dry-run", "--only-verified", "--skip-invalid"]
    args += ["--seed", "4"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b")]) == 0
    for name in ("split.json", "imbalance.json", "plan.json", "config.toml"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    split = json.loads((tmp_path / "a" / "split.json").read_text())
    verified = [s for s in skewed if s.broken is None and s.status == "verified"]
    assert len(split["tasks"]) == len(verified)
    assert split["settings"]["seed"] == 4
    load = json.loads((tmp_path / "a" / "imbalance.json").read_text())["load"]
    assert len(load["invalid"]) == sum(1 for s in skewed if s.broken)
    assert load["found"] == len(skewed)
    assert load["loaded"] + sum(load["filtered"].values()) + len(load["invalid"]) == len(skewed)


def test_flags_reach_the_config(skewed_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = ["--tasks", str(skewed_root), "--out", str(out), "--preset", "lfm3-1.7b",
            "--skip-invalid",
            "--no-rebalance", "--group-by", "dataset", "--holdout-fraction", "0.1",
            "--set", "steps=7", "--set", "harnesses=['pi', 'hermes']"]  # fmt: skip
    assert main(argv) == 0
    config = (out / "config.toml").read_text()
    for line in ('preset = "lfm3-1.7b"', "steps = 7", "rebalance = false",
                 'group_by = "dataset"', "max_fraction = 0.1"):  # fmt: skip
        assert line in config
    plan = json.loads((out / "plan.json").read_text())
    assert [t["gpu"] for t in plan["trainers"]] == [1, 1]
    report = json.loads((out / "imbalance.json").read_text())
    assert set(report["sampling"]["weight_by_kind"].values()) == {1.0}


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    return " ".join(capsys.readouterr().err.split())


def _a_file(root: Path) -> Path:
    (root / "f").write_text("")
    return root / "f"


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        (lambda root: root / "absent", "no such folder"),
        (lambda root: root, "no usable task"),
        (_a_file, "not a folder"),
    ],
)
def test_no_tasks_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup, needle: str
) -> None:
    assert main(["--tasks", str(setup(tmp_path)), "--out", str(tmp_path / "o")]) == 2
    assert needle in _error(capsys)
    assert not (tmp_path / "o").exists()


def test_only_broken_or_unverified_tasks_is_exit_2(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--tasks", str(demo_tasks), "--only-verified", "--out", str(tmp_path)]
    assert main(argv) == 2
    assert "repo2rlenv validate --write-labels" in _error(capsys)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--set", "split.sed=3"], "split.sed"),
        (["--set", "steps"], "KEY=VALUE"),
        (["--holdout-fraction", "1.5"], "split.max_fraction"),
        (["--set", "gpus=1"], "vLLM server"),
    ],
)
def test_bad_config_is_exit_2(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra, needle
) -> None:
    assert main(["--tasks", str(demo_tasks), "--out", str(tmp_path / "o"), *extra]) == 2
    assert needle in _error(capsys)


def test_bad_config_file_is_exit_2(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("steps: many\n")
    assert main(["--tasks", str(demo_tasks), "--config", str(bad)]) == 2
    assert "steps" in _error(capsys)


def test_unknown_preset_is_a_usage_error(demo_tasks: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["--tasks", str(demo_tasks), "--preset", "gpt-9"])
    assert caught.value.code == 2


def test_a_real_run_without_server_or_gpu_says_what_it_needs(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    monkeypatch.setattr(train.launch.plan, "missing_packages", lambda names: list(names))
    assert main(["--tasks", str(demo_tasks), "--no-dry-run", "--out", str(tmp_path / "o")]) == 2
    message = _error(capsys)
    assert "vLLM server" in message
    assert "[train] extra" in message or "rlenv-harvest[train]" in message
    assert not (tmp_path / "o").exists()


def test_a_configured_server_turns_the_dry_run_off(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--tasks", str(demo_tasks), "--server-url", "http://127.0.0.1:9", "--out",
            str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    message = _error(capsys)
    assert "not part of this version" in message
    assert "vLLM server: set" not in message
    assert main([*argv, "--dry-run"]) == 0


def test_a_runtime_without_harness_trials_stops_the_run_before_it_starts(
    demo_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from repo2rlenv.runtime import registry

    class Hosted:
        name = "fake:cloud"
        harness_trials = False

        def check(self) -> None:
            pass

    monkeypatch.setitem(registry.RUNTIMES, "fake", lambda _option, _python: Hosted())
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("COLUMNS", "400")
    started = []
    monkeypatch.setattr("train.launch.run.run_training", lambda *a, **k: started.append(a))
    argv = ["--tasks", str(demo_tasks), "--preset", "tiny-cpu", "--out", str(tmp_path / "o")]
    assert main([*argv, "--runtime", "fake:cloud"]) == 2
    assert "run.runtime-unsupported" in capsys.readouterr().err
    assert main([*argv, "--set", "runtime=podman"]) == 2
    assert "unknown runtime 'podman'" in capsys.readouterr().err
    assert started == []
