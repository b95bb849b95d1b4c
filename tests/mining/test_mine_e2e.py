"""`repo2rlenv mine` as a user runs it: bundled examples, real samples, Hub-format
folders, determinism and resumption."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repo2rlenv.cli import main
from repo2rlenv.examples.session_formats import SESSIONS_DIR
from repo2rlenv.yield_counts import YieldCounts
from tests.conftest import DEMO_OUT, SAMPLES, needs_samples


def mine(*args: str, out: Path, tmp: Path) -> dict:
    report = tmp / f"yield-{len(list(tmp.glob('yield-*')))}.json"
    assert main(["mine", "-q", "--out", str(out), "--json", str(report), *args]) == 0
    return json.loads(report.read_text())


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_examples_yield_all_kinds_and_explain_skips(tmp_path):
    report = mine(
        "--dataset", str(SESSIONS_DIR), "--no-validate", out=tmp_path / "out", tmp=tmp_path
    )
    assert report["emitted_by_kind"] == {"build": 2, "extend": 1, "qa": 1, "repair": 2}
    assert report["records_read"] == 9
    assert {
        "parsed.compacted",
        "parsed.no-tool-calls",
        "build.no-passing-tests",
        "format.truncated",
    } <= set(report["skipped"])
    assert report["skip_examples"]["parsed.compacted"].startswith("pi/stock-compacted.jsonl:")
    manifest = (tmp_path / "out" / "manifest.jsonl").read_text().splitlines()
    assert len(manifest) == 6
    assert {json.loads(line)["path"].split("/")[0] for line in manifest} == {
        "build",
        "extend",
        "qa",
        "repair",
    }


def test_mining_twice_gives_identical_bytes(tmp_path):
    mine("--dataset", str(SESSIONS_DIR), "--no-validate", out=tmp_path / "a", tmp=tmp_path)
    mine("--dataset", str(SESSIONS_DIR), "--no-validate", out=tmp_path / "b", tmp=tmp_path)
    again = mine("--dataset", str(SESSIONS_DIR), "--no-validate", out=tmp_path / "a", tmp=tmp_path)
    assert tree_bytes(tmp_path / "a") == tree_bytes(tmp_path / "b")
    # a rerun writes nothing: its six tasks are unchanged, none emitted (not "6 and 6")
    assert (again["emitted"], again["unchanged"]) == (0, 6)


KILLER = textwrap.dedent("""
    import os, signal, sys
    import repo2rlenv.emit as pipeline
    real = pipeline.write_bundle
    count = {"n": 0}
    def write_then_die(*args, **kwargs):
        outcome = real(*args, **kwargs)
        count["n"] += 1
        if count["n"] == int(sys.argv[1]):
            os.kill(os.getpid(), signal.SIGKILL)
        return outcome
    pipeline.write_bundle = write_then_die
    from repo2rlenv.cli import main
    main(["mine", "-q", "--no-validate", "-j", "1", "--dataset", sys.argv[2], "--out", sys.argv[3]])
""")


def test_killed_run_resumes_to_the_same_output(tmp_path):
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, "3", str(SESSIONS_DIR), str(tmp_path / "resumed")],
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL
    assert len(list((tmp_path / "resumed").glob("*/*/task.toml"))) == 3
    mine("--dataset", str(SESSIONS_DIR), "--no-validate", out=tmp_path / "resumed", tmp=tmp_path)
    mine("--dataset", str(SESSIONS_DIR), "--no-validate", out=tmp_path / "clean", tmp=tmp_path)
    assert tree_bytes(tmp_path / "resumed") == tree_bytes(tmp_path / "clean")


@needs_samples
def test_every_real_sample_is_mined_or_skipped_with_a_reason(tmp_path):
    payload = mine("--dataset", str(SAMPLES), "--no-validate", out=tmp_path / "out", tmp=tmp_path)
    sessions, notebooks = payload["pipelines"]
    assert sessions["pipeline"] == "sessions" and sessions["records_read"] >= 20
    assert notebooks["records_read"] == 8 and notebooks["emitted"] >= 5
    for report in (sessions, notebooks):
        assert report["emitted"] + sum(report["skipped"].values()) >= report["records_read"]
        assert not YieldCounts.model_validate(report["counts"]).mismatches(), report["counts"]
        for reason, example in report["skip_examples"].items():
            assert "." in reason and example, reason


def test_local_hub_format_dataset(tmp_path):
    import datasets

    rows = [
        {"id": p.stem, "path": p.name, "content": p.read_text()}
        for p in sorted(SESSIONS_DIR.rglob("*.jsonl"))
    ]
    datasets.Dataset.from_list(rows).save_to_disk(str(tmp_path / "hub"))
    report = mine(
        "--dataset", str(tmp_path / "hub"), "--no-validate", out=tmp_path / "out", tmp=tmp_path
    )
    assert report["records_read"] == len(rows)
    assert report["emitted_by_kind"].get("repair", 0) >= 1
    assert report["emitted_by_kind"].get("qa", 0) == 1


def test_adversarial_files_are_skipped_with_reasons(tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "binary.jsonl").write_bytes(os.urandom(4096))
    (bad / "empty.jsonl").write_text("")
    (bad / "types.json").write_text(json.dumps({"steps": "not a list", "schema_version": 3}))
    good = (SESSIONS_DIR / "pi" / "stock.jsonl").read_text()
    (bad / "cut.jsonl").write_text(good[: len(good) // 2])
    (bad / "escape.jsonl").write_text(good.replace("stock.py", "../../../../etc/stock.py"))
    report = mine("--dataset", str(bad), "--no-validate", out=tmp_path / "out", tmp=tmp_path)
    assert report["records_read"] == 5
    assert report["emitted"] == 0
    assert sum(report["skipped"].values()) >= 5
    assert not (tmp_path / "etc").exists()


@pytest.mark.docker
@pytest.mark.slow
def test_mined_examples_pass_the_oracle_in_docker(docker_ready, tmp_path, capsys):
    """The bundled sessions mined with the oracle on give 6 tasks, each proven, and
    `validate` verifies all 6. Under CI (RLENV_DEMO_OUT) `make demo` has just done exactly
    this (its mine writes `mine-sessions.json`, its validate `validation.json`), so the
    demo's reports are checked instead of mining and validating the same tasks twice."""
    if DEMO_OUT:
        demo = Path(DEMO_OUT)
        report = json.loads((demo / "mine-sessions.json").read_text())
        validated = json.loads((demo / "validation.json").read_text())
    else:
        out = tmp_path / "out"
        report = mine(
            "--dataset", str(SESSIONS_DIR), "--base-image", docker_ready, out=out, tmp=tmp_path
        )
        capsys.readouterr()
        assert main(["validate", "-q", "--json", "-", str(out)]) == 0
        validated = json.loads(capsys.readouterr().out)
    tasks = {task for record in report["records"] for task in record["tasks"]}
    assert len(tasks) == 6 == report["emitted"] + report["unchanged"]
    assert not any(reason.startswith("oracle.") for reason in report["skipped"])
    # each proven in a container, on a rerun too (`make train-demo` runs the demo again:
    # then all 6 are unchanged, and proven again)
    assert (report["counts"]["proven"], report["counts"]["unverified"]) == (6, 0)
    labels = {t["task_id"]: t["label"]["status"] for t in validated["tasks"]}
    assert {task: labels.get(task) for task in tasks} == dict.fromkeys(tasks, "verified")


def test_tasks_of_an_eval_set_are_skipped_as_such_not_as_duplicates(tmp_path):
    """`--exclude` names tasks never to emit again; each is skipped `novel.in-eval-set`
    even though it also repeats a task seen before (the eval set is the stronger reason)."""
    sessions = tmp_path / "sessions"
    shutil.copytree(SESSIONS_DIR, sessions)
    shutil.copy(sessions / "opencode" / "roman.json", sessions / "opencode" / "roman-copy.json")
    first = mine("--dataset", str(sessions), "--no-validate", out=tmp_path / "a", tmp=tmp_path)
    again = mine(
        *("--dataset", str(sessions), "--no-validate", "--exclude", str(tmp_path / "a")),
        out=tmp_path / "b",
        tmp=tmp_path,
    )
    assert again["emitted"] == 0
    repeated = first["skipped"]["novel.duplicate"]  # a repeat of an eval task: eval reason
    assert again["skipped"]["novel.in-eval-set"] == first["emitted"] + repeated
    assert "novel.duplicate" not in again["skipped"]
