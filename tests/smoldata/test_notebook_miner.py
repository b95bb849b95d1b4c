"""The notebook pipeline end to end without Docker: the sample notebooks become tasks
through `emit_all`, every skipped cell has a reason, output is deterministic, the
hygiene rules hold, and each task's own reference and grader agree."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repo2rlenv.bundle import find_task_dirs, read_task_dir
from repo2rlenv.emit import Draft, Skip, emit_all
from repo2rlenv.manifest import read_manifest
from repo2rlenv.validate.checks import run_static
from smoldataenvs import NotebookOptions, NotebookPipeline, is_notebook_source
from smoldataenvs.__main__ import main
from tests.conftest import needs_samples
from tests.smoldata.helpers import NOTEBOOKS, code_cell, result, write_notebook

BASE = "example/base:1"


def options(dataset: Path, **extra) -> NotebookOptions:
    return NotebookOptions(dataset=str(dataset), reproduce=False, base_image=BASE, **extra)


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list, object]:
    out = tmp_path_factory.mktemp("tasks")
    events: list = []
    report = emit_all(NotebookPipeline(options(NOTEBOOKS)), out, on_event=events.append)
    return out, events, report


@needs_samples
def test_tasks_come_from_at_least_four_sample_notebooks(sample_run) -> None:
    """Four: the rest refuse for stated reasons (Python 2, unseeded randomness, steps a
    question cannot state such as in-place sorts)."""
    out, events, report = sample_run
    drafts = [e.bundle for e in events if isinstance(e, Draft)]
    notebooks = {b.config.metadata.model_extra["smoldataenvs"]["notebook"] for b in drafts}
    assert len(notebooks) >= 4
    assert report.emitted == len(drafts) == len(find_task_dirs([out / "qa"]))
    assert report.records_read == 8
    assert {row.kind for row in read_manifest(out)} == {"qa"}
    assert {row.generator for row in read_manifest(out)} == {"smoldataenvs"}


@needs_samples
def test_every_skipped_cell_has_a_reason_and_the_yield_counts_them(sample_run) -> None:
    _, events, report = sample_run
    skips = [e for e in events if isinstance(e, Skip)]
    assert all(s.reason and "." in s.reason for s in skips)
    cell_skips = {s.record_id for s in skips if s.stage == "candidate"}
    assert all("#cell-" in record for record in cell_skips)
    assert report.candidates == len(cell_skips) + report.emitted
    reasons = report.to_dict()["skipped"]
    for expected in (
        "notebook.python2",
        "output.plot",
        "output.table",
        "code.random-unseeded",
        "cell.magic",
        "cell.shell",
        "answer.boolean",
    ):
        assert reasons.get(expected, 0) >= 1, expected


@needs_samples
def test_emitted_tasks_pass_the_static_checks_and_record_provenance(sample_run) -> None:
    out, _, _ = sample_run
    for task in find_task_dirs([out]):
        tree = read_task_dir(task)
        assert [f.rule_id for f in run_static(tree) if f.severity == "error"] == [], task
        block = tree.config.metadata.repo2rlenv
        assert block.kind == "qa" and block.generator == "smoldataenvs"
        assert block.source.format == "ipynb" and "#cell-" in block.source.record_id
        assert block.source.license in {"MIT", "BSD-3-Clause"}
        statuses = {c.rule_id: c.status for c in block.checks}
        assert statuses == {"smoldata.api": "passed", "smoldata.reproduce": "skipped"}
        extra = tree.config.metadata.model_extra["smoldataenvs"]
        for item in extra["data_files"]:
            assert len(item["sha256"]) == 64
            assert f"environment/workspace/{item['path']}" in tree.files
        assert tree.files["tests/check.py"] == tree.files["solution/grader.py"]


def test_at_most_k_tasks_per_source_dataset(tmp_path: Path) -> None:
    """Six answerable cells over one CSV file: one dataset, so K of them are kept and
    the rest are counted as capped."""
    (tmp_path / "cities.csv").write_text("city,people\nOslo,700000\nBergen,285000\n")
    cells = [code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')")]
    answers = {"sum": "985000", "mean": "492500.0", "max": "700000", "min": "285000"}
    answers |= {"median": "492500.0", "count": "2"}
    cells += [code_cell(f"cities['people'].{m}()", [result(v)]) for m, v in answers.items()]
    write_notebook(tmp_path / "cities.ipynb", cells)
    events = list(NotebookPipeline(options(tmp_path, max_per_dataset=4)).events())
    assert sum(isinstance(e, Draft) for e in events) == 4
    capped = [e.record_id for e in events if isinstance(e, Skip)]
    assert capped == ["cities.ipynb#cell-5", "cities.ipynb#cell-6"]
    assert {e.reason for e in events if isinstance(e, Skip)} == {"hygiene.max-per-dataset"}
    strict = list(NotebookPipeline(options(tmp_path, max_per_dataset=1)).events())
    assert sum(isinstance(e, Draft) for e in strict) == 1
    # The default (10, SmolDataEnvs' scale of about 11 per dataset) keeps all six.
    assert NotebookOptions(dataset=str(tmp_path)).max_per_dataset == 10
    default = list(NotebookPipeline(options(tmp_path)).events())
    assert sum(isinstance(e, Draft) for e in default) == 6


@needs_samples
def test_runs_are_deterministic_and_resume_as_unchanged(sample_run, tmp_path: Path) -> None:
    out, _, first = sample_run
    again = tmp_path / "again"
    second = emit_all(NotebookPipeline(options(NOTEBOOKS)), again)
    assert (out / "manifest.jsonl").read_bytes() == (again / "manifest.jsonl").read_bytes()
    third = emit_all(NotebookPipeline(options(NOTEBOOKS)), again)
    assert second.emitted == first.emitted == third.unchanged and third.emitted == 0


def test_duplicate_questions_collapse(tmp_path: Path) -> None:
    (tmp_path / "cities.csv").write_text("city,people\nOslo,700000\nBergen,285000\n")
    load = code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')")
    total = code_cell("cities['people'].sum()", [result("985000")])
    write_notebook(tmp_path / "twice.ipynb", [load, total, total])
    events = list(NotebookPipeline(options(tmp_path)).events())
    assert [e.reason for e in events if isinstance(e, Skip)] == ["hygiene.duplicate"]
    assert sum(isinstance(e, Draft) for e in events) == 1


def test_a_row_count_asked_as_len_and_as_shape_is_one_question(tmp_path: Path) -> None:
    """The pandas book counts duplicate rows as `df[df.duplicated()].shape[0]` and again
    by showing `.head()` of them (counted as `len()`): worded apart, the same question."""
    (tmp_path / "cities.csv").write_text("city,people\nOslo,7\nOslo,7\nBergen,2\nOslo,7\n")
    load = code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')")
    shape = code_cell("cities[cities.duplicated()].shape[0]", [result("2")])
    length = code_cell("len(cities[cities.duplicated()])", [result("2")])
    write_notebook(tmp_path / "count.ipynb", [load, shape, length])
    events = list(NotebookPipeline(options(tmp_path)).events())
    assert [e.reason for e in events if isinstance(e, Skip)] == ["hygiene.duplicate"]
    assert sum(isinstance(e, Draft) for e in events) == 1


@needs_samples
def test_the_reference_and_grader_agree_when_run_here(sample_run, tmp_path: Path) -> None:
    """solve.py + reference.py on the workspace data, then check.py on its answer, on
    this machine's Python (the container re-run is the Docker test's job)."""
    out, _, _ = sample_run
    task = next(t for t in find_task_dirs([out]) if "euro12" in t.name and "-c17-" in t.name)
    workspace = tmp_path / "workspace"
    shutil.copytree(task / "environment" / "workspace", workspace)
    solution = tmp_path / "solution"
    shutil.copytree(task / "solution", solution)
    spec = json.loads((solution / "spec.json").read_text())
    (solution / "spec.json").write_text(json.dumps({**spec, "answer_path": "answer.txt"}))
    solved = subprocess.run(
        [sys.executable, str(solution / "solve.py")],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert solved.returncode == 0, solved.stderr
    assert (workspace / "answer.txt").read_text() == "7\n"
    tests = tmp_path / "tests"
    shutil.copytree(task / "tests", tests)
    check = (
        (tests / "check.py")
        .read_text()
        .replace("/workspace/answer.txt", str(workspace / "answer.txt"))
    )
    (tests / "check.py").write_text(check)
    graded = subprocess.run([sys.executable, "-I", str(tests / "check.py")], capture_output=True)
    assert graded.returncode == 0
    (workspace / "answer.txt").write_text("6\n")
    graded = subprocess.run([sys.executable, "-I", str(tests / "check.py")], capture_output=True)
    assert graded.returncode == 1


@needs_samples
def test_is_notebook_source(tmp_path: Path) -> None:
    assert is_notebook_source(NOTEBOOKS)
    assert is_notebook_source(NOTEBOOKS / "agconti_kaggle-titanic" / "Titanic.ipynb")
    assert not is_notebook_source(tmp_path)
    assert not is_notebook_source(tmp_path / "missing")
    assert not is_notebook_source("owner/name")  # no Hub probe unless asked


@needs_samples
def test_cli_json_report_lists_every_skip(tmp_path: Path, capsys) -> None:
    """`python -m smoldataenvs` is `repo2rlenv mine --only notebooks`: its report is
    mine's, of the notebooks' pipeline alone, and `--atol/--rtol` (now notebook options
    of `mine`) reach every task's expected answer."""
    out = tmp_path / "out"
    args = ["--dataset", str(NOTEBOOKS), "--out", str(out), "--no-validate"]
    code = main([*args, "--base-image", BASE, "--atol", "0.25", "--rtol", "0", "--json", "-", "-q"])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert payload["pipeline"] == "smoldataenvs" and payload["emitted"] >= 5
    assert sorted(payload["skip_examples"]) == sorted(payload["skipped"])
    assert all(reason for reason in payload["skipped"])
    expected = [json.loads(t.read_text()) for t in (out / "qa").glob("*/tests/expected.json")]
    assert len(expected) == payload["emitted"]
    assert {(e["atol"], e["rtol"]) for e in expected} == {(0.25, 0.0)}
    assert not (out / "repair").exists()  # no session pipeline ran


def test_cli_usage_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["--dataset", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 2
    args = ["--dataset", str(NOTEBOOKS), "--no-validate", "--max-per-dataset", "0", "-q"]
    with pytest.raises(SystemExit) as stop:  # refused while the arguments are parsed
        main([*args, "--out", str(tmp_path)])
    assert stop.value.code == 2
    # a folder with nothing readable is the one `source.empty` error `mine` gives too
    # (issue 33: one resolution, one set of errors; it was exit 1, "no tasks")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--dataset", str(empty), "--out", str(tmp_path / "o"), "--no-validate", "-q"]) == 2
    capsys.readouterr()
    # the former command's switch is refused, naming its replacement, before any work
    assert main(["--dataset", str(NOTEBOOKS), "--out", str(tmp_path / "r"), "--no-reproduce"]) == 2
    assert "--no-reproduce is now --no-validate" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_hub_dataset_is_read_at_the_commit_it_was_resolved_to(
    tmp_path: Path, monkeypatch
) -> None:
    """The remote path is the local walk over the files of the pinned commit, each
    fetched once with `hf_hub_download` (no second look-up of the dataset); the dataset
    id and that commit become the tasks' provenance."""
    import huggingface_hub

    from repo2rlenv.hub import HUB_TIMEOUT_S
    from repo2rlenv.source import Source

    commit = "a" * 40
    snapshot = tmp_path / "snapshots" / commit
    (snapshot / "nb").mkdir(parents=True)
    (snapshot / "nb" / "cities.csv").write_text("city,people\nOslo,700000\nBergen,285000\n")
    write_notebook(
        snapshot / "nb" / "cities.ipynb",
        [
            code_cell("import pandas as pd\ncities = pd.read_csv('cities.csv')"),
            code_cell("cities['people'].sum()", [result("985000")]),
        ],
    )
    calls = []

    def fake_download(repo_id, filename, **kwargs):
        calls.append((repo_id, filename, kwargs))
        return str(snapshot / filename)

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    files = ("nb/cities.csv", "nb/cities.ipynb")
    source = Source("someone/notebooks", "hub", "someone/notebooks", commit, files=files)
    hub = NotebookOptions(dataset="someone/notebooks", reproduce=False, base_image=BASE)
    events = NotebookPipeline(hub, source=source).events()
    [draft] = [e for e in events if isinstance(e, Draft)]
    asked = {"repo_type": "dataset", "revision": commit, "etag_timeout": HUB_TIMEOUT_S}
    assert sorted(calls) == [("someone/notebooks", name, asked) for name in files]
    source = draft.bundle.config.metadata.repo2rlenv.source
    assert (source.dataset, source.revision) == ("someone/notebooks", commit)
    assert source.record_id == "nb/cities.ipynb#cell-1"
