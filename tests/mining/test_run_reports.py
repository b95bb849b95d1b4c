"""Evaluation reports published beside runs: read as the run's own verdict, recorded in
the task's provenance, cross-checked against the oracle, counted as reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip, emit_all
from repo2rlenv.formats.swe_reports import read_report
from repo2rlenv.mining.run_reports import RunReports
from tests.anchors.test_anchors import repo  # noqa: F401 (fixture)
from tests.mining.test_instance_repair import SUBMISSION, TEST_PATCH
from tests.mining.test_instances import _pipeline, _row, _run, _table

DATA = Path(__file__).resolve().parents[1] / "data" / "swe"
SUMMARY = DATA / "reports" / "deepseek__deepseek-chat.deepseek_chat_dev.json"
INSTANCE_REPORT = DATA / "reports" / "logs" / "pylint-dev__astroid-1333" / "report.json"


def test_the_real_run_summary_gives_every_instance_its_verdict():
    verdicts = {v.instance_id: v for v in read_report(json.loads(SUMMARY.read_text()))}
    assert len(verdicts) == 23
    assert sum(v.resolved for v in verdicts.values()) == 8
    assert verdicts["marshmallow-code__marshmallow-1359"].resolved
    assert not verdicts["pydicom__pydicom-1413"].resolved
    assert {v.shape for v in verdicts.values()} == {"swebench-run-summary"}


def test_the_real_harness_report_gives_its_instance_verdict():
    [verdict] = read_report(json.loads(INSTANCE_REPORT.read_text()))
    assert verdict.instance_id == "pylint-dev__astroid-1333"
    assert verdict.resolved is False and verdict.shape == "swebench-instance-report"


def test_an_unkeyed_harness_report_takes_its_instance_from_its_folder():
    """gruckion/mini-swe-agent publishes `logs/<instance>/report.json` as the inner
    object alone (no instance id as key); it was `format.unknown`."""
    flat = {
        "patch_is_None": False,
        "patch_exists": True,
        "patch_successfully_applied": True,
        "resolved": True,
        "tests_status": {"FAIL_TO_PASS": {"success": ["test_issue_11617"], "failure": []}},
    }
    [verdict] = read_report(flat, "swebench_results/logs/sympy__sympy-11618/report.json")
    assert verdict.instance_id == "sympy__sympy-11618" and verdict.resolved
    assert read_report(flat, "logs/report.json") is None  # no instance named
    assert read_report(flat, "logs/sympy__sympy-11618/other.json") is None
    assert read_report({**flat, "resolved": "yes"}, "logs/sympy__sympy-11618/report.json") is None


@pytest.mark.parametrize(
    "record",
    [
        # preds.json: a map of predictions, no verdict
        {"example__calc-1": {"model_patch": "diff", "instance_id": "example__calc-1"}},
        # swe-bench/experiments results.json: resolved ids only, the rest unknown
        {"resolved": ["example__calc-1"], "no_generation": [], "no_logs": []},
        {"example__calc-1": {"resolved": "yes", "tests_status": {}}},
        {"not an id": {"resolved": True, "tests_status": {}}},
        _run(),
        [],
    ],
)
def test_other_json_is_no_report(record):
    assert read_report(record) is None


def test_an_id_listed_as_both_is_unresolved():
    both = {"resolved_ids": ["a__b-1"], "unresolved_ids": ["a__b-1"]}
    assert [v.resolved for v in read_report(both)] == [False]


def test_a_run_takes_the_summary_named_after_its_run_folder():
    """mini-swe-agent publishes a run and its rerun; each summary is named after its
    run id, which is the folder the run's trajectories sit in."""
    reports = RunReports()
    for run_id, resolved in (("dev", False), ("dev_rerun", True)):
        key = "resolved_ids" if resolved else "unresolved_ids"
        record = {"resolved_ids": [], "unresolved_ids": [], key: ["a__b-1"]}
        reports.add(f"model.{run_id}.json", read_report(record))
    found = reports.lookup("output/dev_rerun/a__b-1/a__b-1.traj.json", "a__b-1").report
    assert found.resolved and found.file == "model.dev_rerun.json"
    found = reports.lookup("output/dev/a__b-1/a__b-1.traj.json", "a__b-1").report
    assert not found.resolved and found.file == "model.dev.json"


def test_the_report_in_the_runs_own_folder_wins_and_equals_that_disagree_give_none():
    resolved = {"a__b-1": {"resolved": True, "tests_status": {}}}
    unresolved = {"a__b-1": {"resolved": False, "tests_status": {}}}
    reports = RunReports()
    reports.add("exp1/logs/a__b-1/report.json", read_report(resolved))
    reports.add("exp2/logs/a__b-1/report.json", read_report(unresolved))
    assert reports.lookup("exp2/trajs/a__b-1.traj.json", "a__b-1").report.resolved is False
    assert reports.lookup("exp1/trajs/a__b-1.traj.json", "a__b-1").report.resolved is True
    both = reports.lookup("other/a__b-1.traj.json", "a__b-1")
    assert both.report is None and len(both.conflicting) == 2
    assert reports.lookup("exp1/trajs/a__b-1.traj.json", "c__d-2").report is None


def _folder(tmp_path: Path, report: dict | None) -> Path:
    runs = tmp_path / "runs"
    (runs / "trajs").mkdir(parents=True)
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = SUBMISSION
    (runs / "trajs" / "example__calc-1.traj.json").write_text(json.dumps(run))
    if report is not None:
        (runs / "logs" / "example__calc-1").mkdir(parents=True)
        (runs / "logs" / "example__calc-1" / "report.json").write_text(json.dumps(report))
    return runs


def _mine(tmp_path: Path, repo_fixture, report: dict | None, checked=None, monkeypatch=None):
    path, commit = repo_fixture
    fields = {"test_patch": TEST_PATCH, "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]'}
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    pipeline = _pipeline(
        tmp_path,
        path,
        dataset=str(_folder(tmp_path, report)),
        instances=str(table),
        kinds=["instance-repair"],
    )
    if checked is not None:
        monkeypatch.setattr(pipeline.task_check, "check", checked)
    return emit_all(pipeline, tmp_path / "out")


def _harness_report(resolved: bool) -> dict:
    status = {"success": [], "failure": []}
    return {
        "example__calc-1": {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": resolved,
            "tests_status": {"FAIL_TO_PASS": status, "PASS_TO_PASS": status},
        }
    }


def test_a_report_beside_the_run_is_consumed_and_its_verdict_recorded(repo, tmp_path):  # noqa: F811
    report = _mine(tmp_path, repo, _harness_report(True)).to_dict()
    assert report["reports_read"] == 1 and report["records_read"] == 2
    assert "format.unknown" not in report["skipped"]
    by_record = {r["record_id"]: r for r in report["records"]}
    assert by_record["logs/example__calc-1/report.json"]["format"] == "swe-report"
    assert by_record["logs/example__calc-1/report.json"]["reasons"] == []
    [task] = by_record["trajs/example__calc-1.traj.json"]["tasks"]
    [toml] = (tmp_path / "out").rglob(f"{task}/task.toml")
    from repo2rlenv.bundle.toml_io import parse_config

    written = parse_config(toml.read_text()).metadata.repo2rlenv.swe.report
    assert written.resolved is True
    assert written.file == "logs/example__calc-1/report.json"
    assert written.shape == "swebench-instance-report"


def test_a_run_its_report_calls_unresolved_gives_no_task(repo, tmp_path):  # noqa: F811
    report = _mine(tmp_path, repo, _harness_report(False))
    assert report.emitted == 0
    assert report.skipped["report.unresolved"] == 1
    assert not report.warnings  # without an oracle there is nothing to disagree with


def test_a_proven_reference_of_an_unresolved_run_is_a_disagreement(repo, tmp_path, monkeypatch):  # noqa: F811
    """With the oracle on, a reference it proves for a run its report calls unresolved
    still gives no task, and the disagreement is counted with its code."""

    def proven(bundle, root, record_id, kind, fmt):
        labelled = bundle.model_copy(deep=True)
        labelled.config.metadata.repo2rlenv.evaluation.status = "verified"
        return Draft(labelled)

    report = _mine(tmp_path, repo, _harness_report(False), proven, monkeypatch)
    assert report.emitted == 0 and report.skipped["report.unresolved"] == 1
    assert report.warnings["report.disagrees-with-oracle"] == 1
    [entry] = [r for r in report.to_dict()["records"] if r["record_id"].startswith("trajs/")]
    assert entry["warnings"][0]["code"] == "report.disagrees-with-oracle"


def test_a_resolved_run_the_oracle_refuses_is_a_disagreement(repo, tmp_path, monkeypatch):  # noqa: F811
    def refused(bundle, root, record_id, kind, fmt):
        return Skip(record_id, "oracle.run.reference-failed", "reward 0", kind=kind)

    report = _mine(tmp_path, repo, _harness_report(True), refused, monkeypatch)
    assert report.emitted == 0 and report.skipped["oracle.run.reference-failed"] == 1
    assert report.warnings["report.disagrees-with-oracle"] == 1


def test_no_report_changes_nothing(repo, tmp_path):  # noqa: F811
    report = _mine(tmp_path, repo, None)
    assert report.emitted == 1 and report.reports_read == 0 and not report.warnings


MINI_1359 = DATA / "mini-swe-agent" / "marshmallow-code__marshmallow-1359.traj.json"
MIRROR = DATA / "repos" / "marshmallow-code+marshmallow.git"


@pytest.mark.skipif(not MIRROR.exists(), reason="no marshmallow mirror in tests/data")
def test_the_real_run_summary_speaks_for_the_real_run(tmp_path, monkeypatch):
    """The real mini-swe-agent run of marshmallow-1359 beside its run's real summary
    (as the repository publishes them: `output/<run>/` and `<model>.<run>.json`): the
    summary is consumed as a report (it was `format.unknown`), and the task records
    that the run resolved its instance, and from which file."""
    monkeypatch.setattr(
        "repo2rlenv.kinds.instance_wheels.fetch_with_test_files", lambda *a, **k: {}
    )
    monkeypatch.setattr("repo2rlenv.kinds.instance_wheels.spec_for", lambda *_: None)
    runs = tmp_path / "runs"
    folder = runs / "output" / "deepseek_chat_dev" / "marshmallow-code__marshmallow-1359"
    folder.mkdir(parents=True)
    shutil.copy(MINI_1359, folder / MINI_1359.name)
    shutil.copy(SUMMARY, runs / SUMMARY.name)
    mapping = tmp_path / "repos.json"
    mapping.write_text(json.dumps({"https://github.com/marshmallow-code/marshmallow": str(MIRROR)}))
    pipeline = _pipeline(
        tmp_path,
        MIRROR,
        url="https://github.com/marshmallow-code/marshmallow",
        dataset=str(runs),
        instances=str(DATA / "instances" / "marshmallow-1359.jsonl"),
        kinds=["instance-repair"],
    )
    drafts = [e for e in pipeline.events() if isinstance(e, Draft)]
    [draft] = drafts
    report = draft.bundle.config.metadata.repo2rlenv.swe.report
    assert report.resolved is True
    assert report.file == SUMMARY.name and report.shape == "swebench-run-summary"


def _task_with_report(tmp_path: Path, repo_fixture, resolved: bool) -> Path:
    from repo2rlenv.bundle import write_bundle
    from schemas.provenance import RunReport
    from tests.mining.test_instance_repair import _events

    path, commit = repo_fixture
    [draft] = _events(tmp_path, path, commit)
    bundle = draft.bundle.model_copy(deep=True)
    bundle.config.metadata.repo2rlenv.swe.report = RunReport(
        resolved=resolved, file="logs/example__calc-1/report.json", shape="swebench-instance-report"
    )
    return write_bundle(bundle, tmp_path / "out").path


def test_validate_never_proves_a_task_its_run_report_calls_unresolved(repo, tmp_path):  # noqa: F811
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    task = _task_with_report(tmp_path, repo, resolved=False)
    report = validate_one(task, ValidateOptions(run=False), None, None, SilentProgress())
    assert "report.unresolved" in {f.rule_id for f in report.errors}
    assert report.label.status == "needs_repair"
    (tmp_path / "b").mkdir()
    resolved = _task_with_report(tmp_path / "b", repo, resolved=True)
    report = validate_one(resolved, ValidateOptions(run=False), None, None, SilentProgress())
    assert not [f for f in report.findings if f.rule_id.startswith("report.")]


def test_a_refused_reference_of_a_resolved_run_is_a_warning(repo, tmp_path):  # noqa: F811
    from repo2rlenv.bundle import read_task_dir
    from repo2rlenv.validate.run_report import report_findings

    tree = read_task_dir(_task_with_report(tmp_path, repo, resolved=True))
    [finding] = report_findings(tree, {"run.reference-failed"}, dynamic_ran=True)
    assert finding.rule_id == "report.disagrees-with-oracle" and finding.severity == "warning"
    assert report_findings(tree, set(), dynamic_ran=True) == []
    assert report_findings(tree, {"run.reference-failed"}, dynamic_ran=False) == []
