"""`mine --decontaminate-against` / `--drop-contaminated` and `repo2rlenv decontam` as a
user runs them, on the bundled example sessions: a second mine checked against the
first run's tasks finds every task again; a table that cannot be read stops the run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.cli import main
from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.manifest import read_manifest

pytestmark = pytest.mark.timeout(600)

REPO = Path(__file__).resolve().parents[2]


def _mine(tmp: Path, out: str, *extra: str) -> tuple[int, dict]:
    report = tmp / f"{out}.json"
    code = main(
        ["mine", "-q", "--no-validate", "--dataset", str(SESSIONS_DIR),
         "--out", str(tmp / out), "--json", str(report), *extra]
    )  # fmt: skip
    return code, json.loads(report.read_text()) if report.exists() else {}


@pytest.fixture(scope="module")
def first(tmp_path_factory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("first")
    code, report = _mine(tmp, "a")
    assert code == 0 and report["emitted"] > 0
    return tmp / "a", report


def test_mine_marks_or_drops_the_tasks_of_a_checked_table(first, tmp_path):
    tasks, report = first
    code, marked = _mine(tmp_path, "b", "--decontaminate-against", str(tasks))
    assert code == 0 and marked["emitted"] == report["emitted"]
    summary = marked["decontamination"]
    assert summary["checked_against"] == [str(tasks)]
    assert summary["contaminated"] == summary["tasks"] == report["emitted"]
    for task_dir in find_task_dirs([tmp_path / "b"]):
        block = read_task_dir(task_dir).config.metadata.repo2rlenv.decontamination
        assert block.contaminated and block.matches, task_dir
    # the verdict is in the manifest too; a mine that checked nothing says nothing
    assert {row.contaminated for row in read_manifest(tmp_path / "b")} == {True}
    assert {row.contaminated for row in read_manifest(tasks)} == {None}
    code, dropped = _mine(
        tmp_path, "c", "--decontaminate-against", str(tasks), "--drop-contaminated"
    )
    assert code == 0 and dropped["emitted"] == 0
    refused = {k: v for k, v in dropped["skipped"].items() if k.startswith("decontam.")}
    assert sum(refused.values()) == report["emitted"] == dropped["decontamination"]["dropped"]


def test_mine_refuses_a_table_it_cannot_read(tmp_path, capsys):
    code, _ = _mine(tmp_path, "d", "--decontaminate-against", str(tmp_path / "no.jsonl"))
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "decontam.table-unavailable" in err[0]
    code, _ = _mine(tmp_path, "e", "--drop-contaminated")
    assert code == 2 and not (tmp_path / "e").exists()


def test_decontam_command_reports_and_writes_labels(first, tmp_path):
    tasks, _ = first
    unrelated = tmp_path / "bench.jsonl"
    unrelated.write_text(json.dumps({
        "instance_id": "a__b-1", "repo": "a/b", "base_commit": "1" * 40,
        "problem_statement": "A statement no example session resembles at all. " * 5,
    }) + "\n")  # fmt: skip
    report = tmp_path / "r.json"
    assert main(["decontam", str(tasks), "--against", str(unrelated), "--json", str(report)]) == 0
    assert json.loads(report.read_text())["summary"]["contaminated"] == 0
    copy = tmp_path / "copy"
    import shutil

    shutil.copytree(tasks, copy)
    before = {d.name: read_task_dir(d).content_hash for d in find_task_dirs([copy])}
    args = ["decontam", str(copy), "--against", str(tasks), "--write-labels", "--json", str(report)]
    assert main(args) == 1
    assert json.loads(report.read_text())["summary"]["contaminated"] == len(before)
    for task_dir in find_task_dirs([copy]):
        tree = read_task_dir(task_dir)
        assert tree.config.metadata.repo2rlenv.decontamination.contaminated
        assert tree.content_hash == before[task_dir.name]  # a label, not a new task
    assert {row.contaminated for row in read_manifest(copy)} == {True}  # rebuilt with it
    assert main(["decontam", str(copy)]) == 2


def _mine_offline(tmp: Path, *extra: str) -> subprocess.CompletedProcess:
    """`mine` in a child process with the Hub at a loopback port that refuses."""
    with socket.socket() as sock:  # bound, then closed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "REPO2RLENV"))}
    environ.update(
        HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_HOME=str(tmp / "hf"), PYTHONPATH=str(REPO)
    )
    return subprocess.run(
        [sys.executable, "-m", "repo2rlenv", "mine", "-q", "--no-validate",
         "--dataset", str(SESSIONS_DIR), "--out", str(tmp / "out"), *extra],
        cwd=tmp, env=environ, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_a_named_table_on_an_unreachable_hub_stops_and_default_says_what_it_skipped(tmp_path):
    done = _mine_offline(tmp_path, "--decontaminate-against", "swe-bench-verified")
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("error: decontam.table-unavailable: swe-bench-verified: hub.")
    assert not (tmp_path / "out").exists()
    done = _mine_offline(tmp_path, "--decontaminate-against", "default")
    assert done.returncode == 0, done.stderr
    assert "checked against nothing" in done.stdout
    for task_dir in find_task_dirs([tmp_path / "out"]):  # nothing checked, nothing claimed
        assert read_task_dir(task_dir).config.metadata.repo2rlenv.decontamination is None
    for name in ("swe-bench", "swe-bench-lite", "swe-bench-verified", "swe-bench-multilingual",
                 "swe-rebench-leaderboard"):  # fmt: skip
        assert f"not checked: {name} (" in done.stdout, done.stdout
