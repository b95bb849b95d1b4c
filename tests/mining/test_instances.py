"""SWE-style runs joined to their instance row: the row's repository and commit anchor
the run, excluded instances are dropped with a reason, and tasks name their instance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.formats import read_record
from repo2rlenv.hub import SourceUnavailable
from repo2rlenv.mining.instances import InstanceError, load_instance_ids, load_instances
from repo2rlenv.mining.session_miner import MineOptions, SessionPipeline
from tests.anchors.test_anchors import CALC_BUGGY, URL, repo  # noqa: F401 (fixture)

SHARED = Path(__file__).resolve().parents[3] / "shared" / "samples" / "swe"
FIXED = CALC_BUGGY.replace("a - b", "a + b")


def _row(instance_id: str, commit: str, **extra: object) -> dict:
    return {
        "instance_id": instance_id,
        "repo": "example/calc",
        "base_commit": commit,
        "problem_statement": "add subtracts",
        "test_patch": "",
        "patch": "",
        "FAIL_TO_PASS": json.dumps(["test_calc.py::test_add"]),
        "PASS_TO_PASS": "[]",
        "version": 1.0,
        "hints_text": "ignored column",
        **extra,
    }


def _table(tmp_path: Path, rows: list[dict], name: str = "instances.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _observation(output: str, code: int = 0) -> str:
    return f"<returncode>{code}</returncode>\n<output>\n{output}</output>"


def _run() -> dict:
    """A mini-swe-agent run in its published shape that fixes calc.add."""
    write = f"cd /testbed && cat > calc.py <<'EOF'\n{FIXED}EOF"
    return {
        "trajectory_format": "mini-swe-agent-1",
        "info": {"exit_status": "Submitted", "submission": "diff", "mini_version": "1.9.0"},
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "<pr_description>\nadd subtracts\n</pr_description>"},
            {"role": "assistant", "content": "```bash\ncd /testbed && python -m pytest -q\n```"},
            {"role": "user", "content": _observation("F.\n1 failed, 1 passed in 0.01s\n", 1)},
            {"role": "assistant", "content": f"```bash\n{write}\n```"},
            {"role": "user", "content": _observation("")},
            {"role": "assistant", "content": "```bash\ncd /testbed && python -m pytest -q\n```"},
            {"role": "user", "content": _observation("..\n2 passed in 0.01s\n")},
        ],
    }


def _pipeline(
    tmp_path: Path, repo_path: Path, url: str = URL, **options: object
) -> SessionPipeline:
    """The session miner without Docker, with `url` served from the local `repo_path`;
    `options` add to or replace the defaults (dataset "runs", no validation, a fake
    base image)."""
    mapping = tmp_path / "repos.json"
    mapping.write_text(json.dumps({url: str(repo_path)}))
    defaults: dict = {
        "dataset": "runs",
        "validate_tasks": False,
        "base_image": "img:1",
        "repo_map": mapping,
        "repo_cache": tmp_path / "cache",
    }
    return SessionPipeline(MineOptions(**(defaults | options)), runtime=None)


def test_table_rows_are_validated_and_test_lists_decoded(tmp_path):
    good = _row("example__calc-1", "b" * 40)
    bad = _row("example__calc-2", "not-a-sha")
    table = load_instances(str(_table(tmp_path, [good, bad])))
    assert list(table.instances) == ["example__calc-1"]
    instance = table.instances["example__calc-1"]
    assert instance.FAIL_TO_PASS == ("test_calc.py::test_add",) and instance.version == "1.0"
    assert "example__calc-2" in table.refused
    with pytest.raises(InstanceError):
        load_instances(str(_table(tmp_path, [bad], "only-bad.jsonl")))
    # a path that does not exist is no Hub id either: the one line `--dataset` gives
    with pytest.raises(SourceUnavailable, match=r"^source\.not-found: instance table"):
        load_instances(str(tmp_path / "missing" / "table.csv"))


def test_run_is_anchored_by_its_instance_row(repo, tmp_path):  # noqa: F811
    path, commit = repo
    table = _table(tmp_path, [_row("example__calc-1", commit)])
    session = read_record(_run(), "exp/example__calc-1/example__calc-1.traj.json")
    events = _pipeline(tmp_path, path, instances=str(table)).session_events(session, "r1", None)
    drafts = [e for e in events if isinstance(e, Draft) and e.kind == "repair"]
    assert drafts, [e for e in events if isinstance(e, Skip)]
    source = drafts[0].bundle.config.metadata.repo2rlenv.source
    assert (source.repository, source.commit) == (URL, commit)
    assert source.instance_id == "example__calc-1"
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == CALC_BUGGY


def test_excluded_and_unknown_instances_are_skipped(repo, tmp_path):  # noqa: F811
    path, commit = repo
    table = _table(tmp_path, [_row("example__calc-1", commit)])
    session = read_record(_run(), "example__calc-1.traj.json")
    pipeline = _pipeline(tmp_path, path, instances=str(table), exclude_instances=[str(table)])
    [skip] = pipeline.session_events(session, "r1", None)
    assert isinstance(skip, Skip) and skip.reason == "instance.excluded"
    other = read_record(_run(), "example__calc-9.traj.json")
    [skip] = _pipeline(tmp_path, path, instances=str(table)).session_events(other, "r2", None)
    assert isinstance(skip, Skip) and skip.reason == "instance.not-in-table"


@pytest.mark.skipif(not SHARED.exists(), reason="shared SWE-bench tables absent (../shared)")
def test_real_swe_bench_tables_load():
    verified = load_instances(str(SHARED / "SWE-bench_Verified-test.parquet"))
    assert len(verified.instances) == 500 and not verified.refused
    astropy = verified.instances["astropy__astropy-12907"]
    assert astropy.repo == "astropy/astropy" and len(astropy.base_commit) == 40
    assert astropy.FAIL_TO_PASS and astropy.test_patch.startswith("diff --git")
    lite = load_instance_ids(str(SHARED / "swe-bench-lite-test.json"))
    assert "django__django-15781" in lite and len(lite) == 5


def test_yield_report_lists_each_record_with_its_tasks_or_reasons(repo, tmp_path):  # noqa: F811
    """`mine --json` answers "what became of this run?" per record, not only in totals."""
    from repo2rlenv.emit import emit_all

    path, commit = repo
    table = _table(tmp_path, [_row("example__calc-1", commit)])
    runs = tmp_path / "runs"
    (runs / "example__calc-1").mkdir(parents=True)
    (runs / "example__calc-1" / "example__calc-1.traj.json").write_text(json.dumps(_run()))
    (runs / "notes.txt").write_text("not a run\n")
    pipeline = _pipeline(tmp_path, path, dataset=str(runs), instances=str(table), jobs=1)
    report = emit_all(pipeline, tmp_path / "out").to_dict()
    records = {r["record_id"]: r for r in report["records"]}
    run = records["example__calc-1/example__calc-1.traj.json"]
    assert run["format"] == "mini-swe-agent-1" and run["tasks"]
    written = {p.parent.name for p in (tmp_path / "out").rglob("task.toml")}
    assert set(run["tasks"]) <= written
    assert records["notes.txt"]["reasons"] == ["format.unsupported-file"]
    assert records["notes.txt"]["tasks"] == []


def test_final_git_diff_of_a_shell_edit_is_not_a_dirty_start(repo, tmp_path):  # noqa: F811
    """mini-swe-agent edits with `cat > f` and shows `git diff` before submitting; that
    diff is the agent's work, not uncommitted changes the run started from."""
    path, commit = repo
    run = _run()
    diff = (
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
        " def add(a, b):\n-    return a - b\n+    return a + b\n"
    )
    run["messages"] += [
        {"role": "assistant", "content": "```bash\ncd /testbed && git diff\n```"},
        {"role": "user", "content": _observation(diff)},
        {"role": "assistant", "content": "```bash\ncd /testbed && cat calc.py\n```"},
        {"role": "user", "content": _observation(FIXED)},
    ]
    table = _table(tmp_path, [_row("example__calc-1", commit)])
    session = read_record(run, "example__calc-1.traj.json")
    events = _pipeline(tmp_path, path, instances=str(table)).session_events(session, "r1", None)
    assert not [e for e in events if isinstance(e, Skip) and e.reason.startswith("anchor.")]
    drafts = [e for e in events if isinstance(e, Draft) and e.kind == "repair"]
    files = {f.path: f.content.decode() for f in drafts[0].bundle.files}
    assert files["environment/workspace/calc.py"] == CALC_BUGGY


TABLES = Path(__file__).resolve().parents[1] / "data" / "swe" / "tables"


def test_swe_rebench_rows_keep_their_environment_recipe():
    """SWE-rebench's columns beyond SWE-bench's (`install_config` with `test_cmd` and
    `log_parser`, `docker_image`, `environment_setup_commit`) are read, typed, as the
    row gives them; the columns no step uses (`meta`, `requirements`...) are not."""
    row = load_instances(str(TABLES / "swe-rebench-rows.jsonl")).instances["example__calc-2"]
    assert row.docker_image == "swerebench/sweb.eval.x86_64.example_1776_calc-2"
    assert row.environment_setup_commit == "1" * 40
    config = row.install_config
    assert config.test_cmd.startswith("pytest --no-header -rA")
    assert config.log_parser == "parse_log_pytest"
    assert config.python == "3.9" and config.pip_packages == ["pytest"]
    assert config.pre_install == ["apt-get update", "apt-get install -y gcc"]
    assert config.reqs_path == ["requirements/test.txt"]
    assert row.PASS_TO_PASS == ("test_calc.py::test_double",)
    environment = row.environment()
    assert environment.install_config is config and environment.docker_image == row.docker_image


def test_swe_rebench_v2_rows_name_their_image_and_store_the_recipe_as_json():
    """V2 rows call the image `image_name`; a parquet export stores `install_config` as
    a JSON string; keys the model does not name (`base_image_name`) are kept."""
    row = load_instances(str(TABLES / "swe-rebench-v2-rows.jsonl")).instances["example__calc-3"]
    assert row.docker_image == "docker.io/swerebenchv2/example__calc-3:latest"
    assert row.install_config.install == ["pip install -e ."]
    assert row.install_config.test_cmd == "pytest -rA"
    assert row.install_config.model_extra["base_image_name"] == "python_3_12"


def test_swe_gym_rows_are_swe_bench_rows_without_a_recipe():
    row = load_instances(str(TABLES / "swe-gym-rows.jsonl")).instances["example__calc-4"]
    assert row.version == "4.1" and row.FAIL_TO_PASS == ("test_calc.py::test_add",)
    assert row.install_config is None and row.docker_image is None
    assert row.environment() is None


def _hub_double(monkeypatch, splits: list[str]) -> None:
    """`datasets` as the Hub answers for a dataset published without a `test` split."""
    import datasets

    rows = [json.loads(line) for line in (TABLES / "swe-gym-rows.jsonl").read_text().splitlines()]

    def load_dataset(source, split=None, **kwargs):
        if split not in splits:
            raise ValueError(f'Unknown split "{split}". Should be one of {splits}.')
        return rows

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    monkeypatch.setattr(datasets, "get_dataset_split_names", lambda source, **kw: splits)
    # the Hub's own check of the id (`repo2rlenv.source.check_hub_id`) answers: it exists
    monkeypatch.setattr("repo2rlenv.mining.instances.check_hub_id", lambda source: None)


def test_a_hub_table_without_a_test_split_is_read_from_its_only_split(monkeypatch):
    """SWE-Gym publishes its rows as `train`: the id is usable as it is."""
    _hub_double(monkeypatch, ["train"])
    table = load_instances("SWE-Gym/SWE-Gym")
    assert list(table.instances) == ["example__calc-4"]


def test_a_hub_table_with_several_splits_and_no_test_split_says_so(monkeypatch):
    _hub_double(monkeypatch, ["train", "dev"])
    with pytest.raises(InstanceError, match="several others"):
        load_instances("someone/tables")
