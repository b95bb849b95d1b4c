"""Every user error on every command: one line naming the fix, exit 2, before any work.

Each case runs the command's own `main` in-process (as `python -m ...` would) with one
bad input: an output path that is a file, a `--json` in a folder that does not exist, a
number out of range, a flag the command does not have. An exception escaping `main` is
the traceback a user would see; a second line on stderr is a usage block burying the
one that matters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from repo2rlenv.cli import main as repo2rlenv_main
from smoldataenvs.__main__ import main as smoldataenvs_main
from train.cli import main as train_main

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO / "repo2rlenv" / "examples" / "sessions"
NOTEBOOKS = REPO / "smoldataenvs" / "examples"

MAINS: dict[str, Callable[[list[str]], int]] = {
    "repo2rlenv": repo2rlenv_main,
    "smoldataenvs": smoldataenvs_main,
    "train": train_main,
}

# {tasks}: a folder of tasks; {file}: an existing file; {nodir}: a folder that does not
# exist; the flag each error line must name.
# fmt: off
CASES: list[tuple[str, list[str], str]] = [
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--no-validate", "--out", "{file}"],
     "--out"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--no-validate", "--out", "{tmp}/o",
                    "--json", "{nodir}/x.json"], "--json"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--reruns", "-1"], "--reruns"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--limit", "-3"], "--limit"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--limit", "0"], "--limit"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--max-repo-files", "-1"],
     "--max-repo-files"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--no-probes"], "repo2rlenv mine --help"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--no-reproduce"], "repo2rlenv mine --help"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--no-validate", "--only", "nope"],
     "--only"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--no-validate", "--only", "notebooks"],
     "--only"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--exclude", "{nodir}"], "--exclude"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--repo-map", "{nodir}/m.json"],
     "--repo-map"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--data-dir", "{nodir}"], "--data-dir"),
    ("repo2rlenv", ["mine", "--dataset", "{sessions}", "--repo-cache", "{file}"], "--repo-cache"),
    ("repo2rlenv", ["validate", "--no-run", "{tasks}", "--cache-dir", "{file}"], "--cache-dir"),
    ("repo2rlenv", ["validate", "--no-run", "{tasks}", "--json", "{nodir}/x.json"], "--json"),
    ("repo2rlenv", ["validate", "--no-run", "{tasks}", "--json", "{tasks}"], "--json"),
    ("repo2rlenv", ["validate", "{tasks}", "--reruns", "-1"], "--reruns"),
    ("repo2rlenv", ["examples", "{file}"], "DIR"),
    ("repo2rlenv", ["difficulty", "{tasks}", "--dry-run", "--json", "{nodir}/x.json"], "--json"),
    ("repo2rlenv", ["difficulty", "{tasks}", "-k", "0"], "-k"),
    ("repo2rlenv", ["difficulty", "{tasks}", "--max-tokens", "-5"], "--max-tokens"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--no-validate", "--out", "{file}"], "--out"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--no-validate", "--out", "{tmp}/o",
                      "--json", "{nodir}/x.json"], "--json"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--data-dir", "{nodir}"], "--data-dir"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--atol", "-1"], "--atol"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "-j", "0"], "-j"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--max-per-dataset", "0"], "--max-per-dataset"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--no-such-flag"], "repo2rlenv mine --help"),
    ("smoldataenvs", ["--dataset", "{notebooks}", "--no-reproduce"], "--no-validate"),
    ("smoldataenvs", ["--dataset", "{sessions}", "--no-validate", "--out", "{tmp}/o"],
     "--only notebooks"),
    ("train", ["--tasks", "{tasks}", "--out", "{file}"], "--out"),
    ("train", ["--tasks", "{tasks}", "--holdout-fraction", "-1"], "--holdout-fraction"),
    ("train", ["--tasks", "{tasks}", "--config", "{nodir}/c.toml"], "c.toml"),
    ("train", ["--tasks", "{nodir}"], "missing"),
    ("train", ["--tasks", "{tasks}", "--no-such-flag"], "python -m train --help"),
]
# fmt: on


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tasks") / "tasks"
    assert repo2rlenv_main(["examples", str(out)]) == 0
    return out


@pytest.mark.parametrize(("command", "argv", "names"), CASES, ids=lambda v: str(v)[:40])
def test_a_user_error_is_one_line_and_exit_2_before_any_work(
    command: str,
    argv: list[str],
    names: str,
    tasks: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("not a folder\n")
    where = {
        "tasks": str(tasks),
        "file": str(tmp_path / "file"),
        "nodir": str(tmp_path / "missing"),
        "tmp": str(tmp_path),
        "sessions": str(SESSIONS),
        "notebooks": str(NOTEBOOKS),
    }
    args = [arg.format(**where) for arg in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    try:
        code = MAINS[command](args)
    except SystemExit as exc:  # argparse's own refusal
        code = exc.code
    assert code == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0] and names in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing was written


def test_a_folder_without_task_toml_is_an_invalid_line_in_validate(
    tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _root_with_a_broken_task(tasks, tmp_path)
    report = tmp_path / "report.json"
    assert repo2rlenv_main(["validate", "--no-run", str(root), "--json", str(report)]) == 1
    data = json.loads(report.read_text())
    broken = [t for t in data["tasks"] if t["task_id"] == "broken-task"]
    assert len(broken) == 1
    assert "task.config-missing" in {f["rule_id"] for f in broken[0]["findings"]}
    assert len(data["tasks"]) == 2  # the train/ outputs are no task, and no error
    assert "broken-task" in capsys.readouterr().out


def test_train_lists_a_folder_without_task_toml_and_refuses_without_skip(
    tasks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _root_with_a_broken_task(tasks, tmp_path)
    argv = ["--tasks", str(root), "--dry-run", "--out", str(tmp_path / "out")]
    assert train_main(argv) == 2
    captured = capsys.readouterr()
    assert "broken-task" in captured.out and "task.config-missing" in captured.out
    assert "--skip-invalid" in captured.err
    assert not (tmp_path / "out").exists()
    assert train_main([*argv, "--skip-invalid"]) == 0
    load = json.loads((tmp_path / "out" / "imbalance.json").read_text())["load"]
    assert [t["reason"] for t in load["invalid"]] == ["task.config-missing"]
    assert load["loaded"] == 1


def _root_with_a_broken_task(tasks: Path, tmp_path: Path) -> Path:
    """One valid example task, one with its task.toml gone, and a folder of other files."""
    import shutil

    root = tmp_path / "root"
    good = next(p for p in sorted(tasks.iterdir()) if p.is_dir())
    shutil.copytree(good, root / good.name)
    shutil.copytree(good, root / "broken-task")
    (root / "broken-task" / "task.toml").unlink()
    (root / "train").mkdir()
    (root / "train" / "split.json").write_text("{}\n")
    return root


@pytest.mark.parametrize("command", ["mine", "difficulty"])
def test_json_dash_is_stdout_not_a_file_named_dash(
    command: str,
    tasks: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    if command == "mine":
        argv = ["mine", "-q", "--no-validate", "--dataset", str(SESSIONS), "--out", "o"]
    else:
        argv = ["difficulty", str(tasks), "--dry-run"]
    assert repo2rlenv_main([*argv, "--json", "-"]) == 0
    payload = json.loads(capsys.readouterr().out)  # stdout holds the report and only it
    assert payload
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("inside", ["o/yield.json", "o/reports/yield.json"])
def test_a_report_inside_the_output_folder_it_creates_is_written(
    inside: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--out o --json o/yield.json` on a fresh machine (as `make demo` runs it): `o` does
    not exist yet, mine creates it, so the report's folder is no user error."""
    monkeypatch.chdir(tmp_path)
    argv = ["mine", "-q", "--no-validate", "--dataset", str(SESSIONS), "--out", "o"]
    assert repo2rlenv_main([*argv, "--json", inside]) == 0
    report = json.loads((tmp_path / inside).read_text())
    assert report["emitted"] > 0
    assert not list(tmp_path.rglob("*.partial"))


def test_a_report_is_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails before its end (a full disk, a kill) leaves the earlier report
    as it was, not a cut one that reads as a short report."""
    import os

    from repo2rlenv import cli_paths

    report = tmp_path / "yield.json"
    report.write_text('{"emitted": 6}\n')

    def interrupted(src: object, dst: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(OSError, match="No space"):
        cli_paths.write_report(report, '{"emitted": 7, "records": [')
    assert report.read_text() == '{"emitted": 6}\n'
