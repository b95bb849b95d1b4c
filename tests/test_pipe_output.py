"""Output sent to a pipe (CI logs, `| tee`) is as wide as its content: no task id folded
over lines, no header cut to "inva…"; `mine` says how far it got in plain lines."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SESSIONS = REPO / "repo2rlenv" / "examples" / "sessions"


def _piped(*argv: str, module: str = "repo2rlenv") -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ...` with stdout and stderr pipes and no COLUMNS: what CI sees."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    return subprocess.run(
        [sys.executable, "-m", module, *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=REPO,
        env=env,
    )


def test_piped_tables_keep_ids_whole_and_headers_uncut(tmp_path: Path) -> None:
    out = tmp_path / "out"
    report = tmp_path / "yield.json"
    mined = _piped("mine", "--no-validate", "--dataset", str(SESSIONS), "--out", str(out),
                   "--json", str(report))  # fmt: skip
    assert mined.returncode == 0, mined.stderr
    assert "…" not in mined.stdout
    yielded = json.loads(report.read_text())
    # A skip's example names its record: whole, on one line.
    cut = yielded["skip_examples"]["format.truncated"].split(": ", 1)[0]
    assert cut == "claude_code/textstats-truncated.jsonl"
    assert any(cut in row and "format.truncated" in row for row in mined.stdout.splitlines())

    validated = _piped("validate", "--no-run", str(out))
    assert validated.returncode == 0, validated.stderr
    assert "…" not in validated.stdout
    task_ids = [p.name for p in out.glob("*/*") if (p / "task.toml").is_file()]
    assert task_ids
    rows = validated.stdout.splitlines()
    for task_id in task_ids:  # each id whole in one row
        assert any(task_id in row for row in rows), task_id
    for header in ("invalid", "trials run", "infra errors (not run)", "wall time"):
        assert any(header in row for row in rows), header

    labelled = _piped("difficulty", str(out), "--dry-run")
    assert labelled.returncode == 0, labelled.stderr
    assert "…" not in labelled.stdout
    for task_id in task_ids:
        assert any(task_id in row for row in labelled.stdout.splitlines()), task_id

    planned = _piped("--tasks", str(out), "--dry-run", "--out", str(tmp_path / "t"),
                     module="train")  # fmt: skip
    assert planned.returncode == 0, planned.stderr
    assert "…" not in planned.stdout  # the token budget, the plan's columns

    # Progress off a terminal: plain lines with the final summary's levels, its last
    # line's numbers those of the report.
    line = re.compile(
        r"mining sessions: (\d+) records read \((\d+) skipped whole\) → (\d+) candidates"
        r" → (\d+) emitted, (\d+) unchanged, (\d+) skipped; (\d+) proven in a container"
    )
    progress = [m.groups() for m in map(line.match, mined.stderr.splitlines()) if m]
    assert progress, mined.stderr
    c = yielded["counts"]
    assert progress[-1] == tuple(
        str(c[level])
        for level in ("records_read", "records_skipped", "candidates", "emitted", "unchanged",
                      "candidates_skipped", "proven")
    )  # fmt: skip


def test_mining_progress_uses_the_summarys_levels_and_counts_oracle_refusals_apart(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Records skipped whole and candidates skipped are apart, as in `yield_summary`
    (the old line added them into one "skipped")."""
    from repo2rlenv.emit import RecordRead, Skip, YieldReport
    from repo2rlenv.ui import mining_progress

    report = YieldReport(pipeline="sessions")
    events = [
        RecordRead("a.jsonl"),
        Skip("a.jsonl", "oracle.run.reference-failed"),
        Skip("a.jsonl", "build.nothing-built"),
        RecordRead("b.jsonl"),
        Skip("b.jsonl", "format.truncated", stage="record"),
    ]
    with mining_progress(oracle=True) as on_progress:
        for event in events:
            report.count(event)
            on_progress(report)
    said = " ".join(capsys.readouterr().err.split())  # a COLUMNS in the environment folds it
    last = said[said.rindex("mining sessions:") :]
    assert last == (
        "mining sessions: 2 records read (1 skipped whole) → 2 candidates → 0 emitted, "
        "0 unchanged, 2 skipped; 0 proven in a container, 1 refused by the oracle (done)"
    )


NOTEBOOKS = REPO / "smoldataenvs" / "examples"


def _task_ids(*roots: Path) -> list[str]:
    return sorted(p.parent.name for root in roots for p in root.rglob("task.toml"))


def test_every_demo_command_piped_through_cat_cuts_no_id(tmp_path: Path) -> None:
    """The CI step of issue 29: each command of the demo, its output sent to a pipe (as
    `| cat` does), prints no line cut with "…" (on stdout or stderr) and every task id
    whole on one line where it lists tasks. `validate` runs with `--no-run`: its table
    with trials is the same table (`ui.validation_table`), and trials need Docker and
    minutes of image builds; `clean --dry-run` runs when a Docker engine answers."""
    out, examples, notebooks = tmp_path / "demo", tmp_path / "examples", tmp_path / "nb"
    runs = {
        "examples": _piped("examples", str(examples)),
        "mine sessions": _piped(
            "mine", "--no-validate", "--dataset", str(SESSIONS), "--out", str(out)
        ),
        "mine notebooks": _piped(
            "mine", "--no-validate", "--dataset", str(NOTEBOOKS), "--out", str(out)
        ),
        "smoldataenvs": _piped(
            "--dataset",
            str(NOTEBOOKS),
            "--out",
            str(notebooks),
            "--no-validate",
            module="smoldataenvs",
        ),
    }
    ids = _task_ids(out, examples)  # the notebooks' tasks are in `out` too
    assert len(ids) >= 10 and len(set(ids)) == len(ids)
    assert {p.parent.name for p in (out / "qa").rglob("task.toml")} & set(_task_ids(notebooks))
    runs["validate"] = _piped("validate", "--no-run", str(out), str(examples))
    runs["difficulty"] = _piped("difficulty", "--dry-run", str(out), str(examples))
    runs["train plan"] = _piped("--tasks", str(out), "--dry-run", "--out", str(tmp_path / "t"),
                                module="train")  # fmt: skip
    engine = (
        shutil.which("docker")
        and subprocess.run(
            ["docker", "info"], capture_output=True, timeout=30, check=False
        ).returncode
        == 0
    )
    if engine:
        runs["clean"] = _piped("clean", "--dry-run")
    for name, run in runs.items():
        assert run.returncode == 0, (name, run.stderr)
        for line in (run.stdout + run.stderr).splitlines():
            assert "…" not in line, (name, line)
    for task_id in _task_ids(examples):
        assert any(task_id in row for row in runs["examples"].stderr.splitlines()), task_id
    for name in ("validate", "difficulty"):
        rows = runs[name].stdout.splitlines()
        for task_id in ids:
            assert any(task_id in row for row in rows), (name, task_id)
    mined = runs["mine sessions"].stdout.splitlines()
    assert any("claude_code/textstats-truncated.jsonl" in row for row in mined)
