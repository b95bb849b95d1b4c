"""Decontamination rules, each on a small table that shows it firing and not firing,
the drop flag, the held-out split and the tables a run cannot read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repo2rlenv.bundle import read_task_dir, write_bundle
from repo2rlenv.bundle.standard import environment_files, grading_files, standard_config
from repo2rlenv.decontam import tables
from repo2rlenv.decontam.facts import TaskFacts, of_bundle, repo_key
from repo2rlenv.decontam.index import TEXT_THRESHOLD, shingles
from repo2rlenv.decontam.report import Decontaminator
from repo2rlenv.decontam.tables import TableError, load_benchmarks
from repo2rlenv.emit import Draft, Skip
from repo2rlenv.kinds.common import reference_script
from schemas import BundleFile, SourceRef, TaskBundle

pytestmark = pytest.mark.timeout(120)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
STATEMENT = (
    "The serializer drops the timezone of aware datetimes when the field is declared with "
    "a custom format string. Loading the dumped value back gives a naive datetime, so a "
    "round trip of an aware value is not equal to the original value. Expected: the offset "
    "is kept in the output, and loading the output gives the same aware datetime back. "
    "This happens with every format that does not end in a timezone directive."
)
PATCH = (
    "diff --git a/src/lib/fields.py b/src/lib/fields.py\n--- a/src/lib/fields.py\n"
    "+++ b/src/lib/fields.py\n@@ -1 +1 @@\n-a\n+b\n"
)


def _table(tmp_path: Path, **row: object) -> Path:
    base = {
        "instance_id": "owner__lib-7", "repo": "Owner/Lib", "base_commit": COMMIT,
        "problem_statement": STATEMENT, "patch": PATCH, "test_patch": "",
    }  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(base | row) + "\n")
    return path


def _checker(*names: Path | str, drop: bool = False) -> Decontaminator:
    return Decontaminator.load([str(n) for n in names], drop=drop)


def _bundle(
    task_id: str,
    instruction: str,
    *,
    kind: str = "repair",
    repository: str | None = None,
    commit: str | None = None,
    changes: dict[str, str | None] | None = None,
    workspace: dict[str, str | bytes] | None = None,
) -> TaskBundle:
    source = SourceRef(
        dataset="handmade", record_id=task_id, format="handmade",
        repository=repository, commit=commit,
    )  # fmt: skip
    files = [
        *environment_files("python:3.12-slim", workspace or {"src/lib/fields.py": "a\n"}),
        *grading_files("print('ok')\n", protected={}),
        BundleFile(
            path="solution/solve.sh",
            content=reference_script(changes or {"src/lib/fields.py": "b\n"}).encode(),
            executable=True,
        ),
    ]
    config = standard_config(task_id, kind=kind, source=source, generator="test")  # type: ignore[arg-type]
    return TaskBundle(task_id=task_id, config=config, instruction=instruction, files=files)


def _rules(checker: Decontaminator, facts: TaskFacts) -> set[str]:
    return {m.rule for m in checker.check(facts).matches}


def test_repository_is_compared_as_owner_name():
    assert repo_key("https://github.com/Owner/Lib.git") == "owner/lib"
    assert repo_key("git@github.com:Owner/Lib") == "owner/lib" == repo_key("Owner/Lib/")


def test_same_repository_commit_and_files(tmp_path):
    checker = _checker(_table(tmp_path))
    url = "https://github.com/owner/lib"
    same = of_bundle(_bundle("t1", "Make it faster.", repository=url, commit=COMMIT[:10]))
    assert same.files == {"src/lib/fields.py"}
    assert _rules(checker, same) == {"decontam.repo-commit-files"}
    other_commit = of_bundle(_bundle("t2", "Make it faster.", repository=url, commit="f" * 40))
    other_files = of_bundle(
        _bundle("t3", "x", repository=url, commit=COMMIT, changes={"README.md": "new\n"})
    )
    other_repo = of_bundle(_bundle("t4", "x", repository="https://github.com/a/b", commit=COMMIT))
    for facts in (other_commit, other_files, other_repo):
        assert not checker.check(facts).contaminated, facts.task_id


def _rows(tmp_path: Path, *rows: dict[str, object]) -> Path:
    path = tmp_path / "window.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_commit_window_dates_the_task_from_the_tables(tmp_path):
    """The task starts at instance A's commit (dated by A's created_at in a first
    table); instance B of the same repository, opened 5 days later at another commit and
    touching the same file, is a window match; C (20 days later) and D (same week,
    another file) are not."""
    row = {"repo": "Owner/Lib", "problem_statement": "", "test_patch": ""}
    other = PATCH.replace("fields.py", "other.py")
    dating = _rows(tmp_path, row | {
        "instance_id": "owner__lib-1", "base_commit": COMMIT, "patch": other,
        "created_at": "2023-05-01T10:00:00Z",
    })  # fmt: skip
    (tmp_path / "bench").mkdir()
    bench = _rows(tmp_path / "bench",
        row | {"instance_id": "owner__lib-2", "base_commit": "a" * 40, "patch": PATCH,
               "created_at": "2023-05-06T09:00:00Z"},
        row | {"instance_id": "owner__lib-3", "base_commit": "b" * 40, "patch": PATCH,
               "created_at": "2023-05-21T09:00:00Z"},
        row | {"instance_id": "owner__lib-4", "base_commit": "c" * 40, "patch": other,
               "created_at": "2023-05-02T09:00:00Z"},
    )  # fmt: skip
    task = of_bundle(_bundle("t1", "x", repository="https://github.com/owner/lib", commit=COMMIT))
    found = _checker(dating, bench).check(task).matches
    rule = "decontam.repo-commit-window"
    window = [(m.benchmark, m.instance_id) for m in found if m.rule == rule]
    assert window == [(str(bench), "owner__lib-2")]
    # lib-1 (the task's own commit, another file) is neither: the exact rule needs a
    # shared file, and the window leaves the same commit to the exact rule
    assert {m.instance_id for m in found if m.rule == "decontam.repo-commit-files"} == set()
    # no table dates the commit: no window
    undated = _checker(bench).check(task).matches
    assert not [m for m in undated if m.rule == rule]


def test_near_duplicate_statement_is_caught_and_a_fresh_one_is_not(tmp_path):
    checker = _checker(_table(tmp_path))
    # reworded in places, re-cased, and wrapped in a harness's own instructions
    edited = STATEMENT.replace("drops", "loses").replace("Expected:", "What should happen:")
    wrapped = (
        "<pr_description>\nConsider the following PR description:\n"
        f"{edited.upper()}\n</pr_description>\n\n<instructions>\n"
        + "Work in the repository, run the tests, and submit your change when done. " * 30
        + "\n</instructions>\n"
    )
    [hit] = checker.check(TaskFacts("t1", instruction=wrapped)).matches
    assert hit.rule == "decontam.near-duplicate-text" and hit.instance_id == "owner__lib-7"
    assert hit.score is not None and hit.score >= TEXT_THRESHOLD
    fresh = (
        "Add a command that lists the cached wheels with their sizes, sorted by size, and "
        "a flag that removes the wheels older than a given number of days from the cache."
    )
    assert not checker.check(TaskFacts("t2", instruction=fresh)).contaminated
    # half of the statement is not a near duplicate
    words = STATEMENT.split()
    half = " ".join(words[: len(words) // 2]) + " " + fresh + " " + fresh
    assert len(shingles(half)) > 20
    assert not checker.check(TaskFacts("t3", instruction=half)).contaminated
    # an excerpt (a third of the statement) is all the statement's words, but not a copy
    excerpt = " ".join(words[: len(words) // 3])
    assert len(shingles(excerpt)) >= 20
    assert not checker.check(TaskFacts("t4", instruction=excerpt)).contaminated


def test_notebook_data_file_hash(tmp_path):
    data = b"city,population\nOslo,709000\nBergen,291000\n"
    bench = tmp_path / "bench"
    write_bundle(
        _bundle("nb1", "How many people live in Oslo?", kind="qa",
                workspace={"data/cities.csv": data}),
        bench,
    )  # fmt: skip
    checker = _checker(bench)
    same = _bundle("q1", "Which city is second?", kind="qa", workspace={"in/c.csv": data})
    other = _bundle("q2", "Which city is second?", kind="qa", workspace={"in/c.csv": data + b"x"})
    assert _rules(checker, of_bundle(same)) == {"decontam.data-hash"}
    assert not checker.check(of_bundle(other)).contaminated


def test_heldout_split_of_a_previous_run(tmp_path):
    from train.data.split import SPLIT_FORMAT_VERSION

    assert tables.SPLIT_FORMAT_VERSION == SPLIT_FORMAT_VERSION
    out = tmp_path / "tasks"
    written = write_bundle(_bundle("held", "Do the held-out thing."), out).path
    digest = read_task_dir(written).content_hash
    split = tmp_path / "split.json"
    split.write_text(json.dumps({
        "version": SPLIT_FORMAT_VERSION, "train": ["kept"], "heldout": ["held"],
        "tasks": {"held": {"side": "heldout", "content_hash": digest}},
    }))  # fmt: skip
    checker = _checker(split)
    # the same task mined again (a draft: its hash is the one its folder will have)
    [hit] = checker.check(of_bundle(_bundle("held", "Do the held-out thing."))).matches
    assert (hit.rule, hit.instance_id) == ("decontam.heldout-task", "held")
    assert "content hash" in hit.detail
    assert not checker.check(of_bundle(_bundle("new", "Something else."))).contaminated
    split.write_text(json.dumps({"version": 99, "heldout": []}))
    with pytest.raises(TableError, match=r"split\.version"):
        _checker(split)


def test_same_instance_id(tmp_path):
    checker = _checker(_table(tmp_path))
    assert _rules(checker, TaskFacts("t", instance_id="owner__lib-7")) == {"decontam.same-instance"}
    assert not checker.check(TaskFacts("t", instance_id="owner__lib-8")).contaminated


def test_drop_refuses_with_the_rule_and_marking_keeps_the_task(tmp_path):
    table = _table(tmp_path)
    bundle = _bundle("t1", STATEMENT)
    marked = _checker(table).apply(Draft(bundle.model_copy(deep=True)))
    assert isinstance(marked, Draft)
    block = marked.bundle.config.metadata.repo2rlenv.decontamination
    assert block.contaminated and block.checked_against == [str(table)]
    dropper = _checker(table, drop=True)
    dropped = dropper.apply(Draft(bundle.model_copy(deep=True)))
    assert isinstance(dropped, Skip) and dropped.reason == "decontam.near-duplicate-text"
    assert dropper.counts.to_dict()["dropped"] == 1
    fresh = dropper.apply(Draft(_bundle("t2", "Add a flag that prints the version.")))
    assert isinstance(fresh, Draft)
    assert not fresh.bundle.config.metadata.repo2rlenv.decontamination.contaminated


def test_the_label_does_not_change_the_task_identity(tmp_path):
    bundle = _bundle("t1", STATEMENT)
    plain = read_task_dir(write_bundle(bundle, tmp_path / "a").path).content_hash
    marked = _checker(_table(tmp_path)).apply(Draft(bundle.model_copy(deep=True)))
    labelled = read_task_dir(write_bundle(marked.bundle, tmp_path / "b").path)
    assert labelled.config.metadata.repo2rlenv.decontamination.contaminated
    assert labelled.content_hash == plain


def test_a_table_asked_for_is_an_error_and_the_default_list_reports_what_it_skipped(
    tmp_path, monkeypatch
):
    with pytest.raises(TableError, match=r"^decontam\.table-unavailable: .*missing"):
        load_benchmarks([str(tmp_path / "missing.jsonl")])
    unreadable = {}

    def refuse(name: str) -> tables.Table:
        raise TableError(f"decontam.table-unavailable: {name}: hub.unreachable")

    monkeypatch.setattr(tables, "load_table", refuse)
    found = load_benchmarks(["default"])
    unreadable = found.unavailable
    assert not found.tables and sorted(unreadable) == sorted(tables.NAMED)
    with pytest.raises(TableError):
        load_benchmarks(["swe-bench-verified"])
    checker = Decontaminator(found)
    assert any("not checked: swe-bench-verified" in line for line in checker.counts.lines())
