"""`python -m train eval`: help, set-up errors (exit 2) and the report from a ledger."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from train.evaluate.cli import build_parser, main
from train.evaluate.ledger import Attempt, Ledger
from train.evaluate.plan import BASE, served_name


def _adapters(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / name).mkdir(parents=True)
        (root / name / "adapter_config.json").write_text("{}")
    return root


def test_help_through_python_m_train_documents_every_option() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "train", "eval", "--help"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for action in build_parser()._actions:
        for option in action.option_strings:
            assert option in text, option
    assert "Wilson" in text


def test_usage_errors_exit_2(demo_tasks: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--tasks", str(demo_tasks)])  # no --checkpoints, no --harness
    assert stop.value.code == 2
    adapters = _adapters(tmp_path / "a", ["pi-policy-v1"])
    common = ["--harness", "pi", "--out", str(tmp_path / "o")]
    assert main(["--tasks", str(tmp_path / "none"), "--checkpoints", str(adapters), *common]) == 2
    (tmp_path / "empty").mkdir()
    args = ["--tasks", str(demo_tasks), "--checkpoints", str(tmp_path / "empty"), *common]
    assert main(args) == 2
    args = ["--tasks", str(demo_tasks), "--checkpoints", str(adapters), *common]
    with pytest.raises(SystemExit) as stop:  # refused while the arguments are parsed
        main([*args, "-k", "0"])
    assert stop.value.code == 2
    assert main(args) == 2  # neither --server-url nor --base-model
    assert main([*args, "--server-url", "http://127.0.0.1:9"]) == 2  # nobody answers
    assert not (tmp_path / "o" / "eval.json").exists()


def test_report_only_writes_table_json_and_chart_from_the_ledger(
    demo_tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    adapters = _adapters(tmp_path / "a", ["pi-policy-v1", "pi-policy-v2"])
    tasks = sorted(p.name for p in demo_tasks.iterdir() if p.is_dir())
    out = tmp_path / "o"
    ledger = Ledger(out / "ledger.jsonl")
    solved = {BASE: 1, "pi-policy-v1": 2, "pi-policy-v2": 3}  # tasks solved, of 4, k=1
    for label, n in solved.items():
        model = "base" if label == BASE else served_name(label)
        for i, task in enumerate(tasks):
            ledger.append(
                Attempt(
                    checkpoint=label,
                    task_id=task,
                    attempt=0,
                    model=model,
                    status="scored",
                    verifier_score=1.0 if i < n else 0.0,
                    tool_calls=3,
                )
            )
    argv = ["--tasks", str(demo_tasks), "--checkpoints", str(adapters), "--harness", "pi",
            "-k", "1", "--out", str(out), "--report-only"]  # fmt: skip
    assert main(argv) == 0
    data = json.loads((out / "eval.json").read_text())
    rows = {r["label"]: r for r in data["checkpoints"]}
    for label, n in solved.items():
        assert rows[label]["pass_at_1"] == pytest.approx(n / len(tasks))
        assert rows[label]["tool_calls_per_solved"] == 3.0
    assert rows["pi-policy-v2"]["delta_vs_base"] == pytest.approx(2 / len(tasks))
    assert data["accounted"] == {"scored": 12, "failed": 0, "unscorable": 0, "missing": 0}
    assert (out / "eval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = capsys.readouterr().out
    assert "pi-policy-v2" in text and "pass@1" in text


def _split(path: Path, heldout: list[str], train: list[str]) -> Path:
    from train.data.split import SPLIT_FORMAT_VERSION

    path.write_text(json.dumps({"version": SPLIT_FORMAT_VERSION, "heldout": heldout,
                                "train": train}))  # fmt: skip
    return path


def test_split_evaluates_only_its_held_out_tasks(demo_tasks: Path, tmp_path: Path) -> None:
    adapters = _adapters(tmp_path / "a", ["pi-policy-v1"])
    tasks = sorted(p.name for p in demo_tasks.iterdir() if p.is_dir())
    split = _split(tmp_path / "split.json", [tasks[1], "not-here"], [tasks[0], *tasks[2:]])
    out = tmp_path / "o"
    argv = ["--tasks", str(demo_tasks), "--split", str(split), "--checkpoints", str(adapters),
            "--harness", "pi", "-k", "2", "--out", str(out), "--report-only"]  # fmt: skip
    assert main(argv) == 0
    data = json.loads((out / "eval.json").read_text())
    assert (data["tasks"], data["planned"]) == (1, 2 * 2)  # base + one checkpoint, k=2


@pytest.mark.parametrize(
    "content",
    ['{"version": 1, "heldout": ["nothing-matches"]}', '{"version": 99, "heldout": []}',
     '{"version": 1, "heldout": "x"}', "not json", None],
)  # fmt: skip
def test_a_bad_or_unmatched_split_is_a_setup_error(
    demo_tasks: Path, tmp_path: Path, content: str | None
) -> None:
    adapters = _adapters(tmp_path / "a", ["pi-policy-v1"])
    split = tmp_path / "split.json"
    if content is not None:
        split.write_text(content)
    argv = ["--tasks", str(demo_tasks), "--split", str(split), "--checkpoints", str(adapters),
            "--harness", "pi", "--out", str(tmp_path / "o"), "--report-only"]  # fmt: skip
    assert main(argv) == 2
    assert not (tmp_path / "o" / "eval.json").exists()


class _NoHarnessRuntime:
    """A backend that checks fine but cannot run harness trials (a hosted provider)."""

    name = "fake:cloud"
    harness_trials = False

    def check(self) -> None:
        pass


def test_a_runtime_without_harness_trials_is_a_setup_error(
    demo_tasks: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from repo2rlenv.runtime import registry

    monkeypatch.setitem(registry.RUNTIMES, "fake", lambda _option, _python: _NoHarnessRuntime())
    monkeypatch.setenv("REPO2RLENV_CONFIG", str(tmp_path / "settings.toml"))
    monkeypatch.setenv("COLUMNS", "400")
    adapters = _adapters(tmp_path / "a", ["pi-policy-v1"])
    args = ["--tasks", str(demo_tasks), "--checkpoints", str(adapters), "--harness", "pi",
            "--out", str(tmp_path / "o"), "--server-url", "http://127.0.0.1:9"]  # fmt: skip
    assert main([*args, "--runtime", "fake:cloud"]) == 2
    err = capsys.readouterr().err
    assert "eval.runtime-unsupported" in err and "fake:cloud" in err
    assert main([*args, "--runtime", "podman"]) == 2
    assert "unknown runtime 'podman'" in capsys.readouterr().err
    # The settings' runtime is the default, as for every repo2rlenv command.
    monkeypatch.setenv("REPO2RLENV_RUNTIME", "fake:cloud")
    assert main(args) == 2
    assert "eval.runtime-unsupported" in capsys.readouterr().err
    assert not (tmp_path / "o" / "eval.json").exists()
