"""Instance-backed repair tasks: start = checkout at base_commit, instruction = problem
statement, verifier = the instance's test patch (hidden), reference = the submission."""

from __future__ import annotations

import json
import subprocess

import pytest

from repo2rlenv.bundle.toml_io import dump_config, parse_config
from repo2rlenv.emit import Draft, Skip
from repo2rlenv.formats import read_record
from repo2rlenv.kinds.common import VERIFIER_MARGIN_S, verifier_timeout
from repo2rlenv.kinds.instance_repair import apply_patch
from repo2rlenv.replay.patches import PatchError
from schemas import BundleFile
from tests.anchors.test_anchors import CALC_BUGGY, repo  # noqa: F401 (fixture)
from tests.mining.test_instances import _pipeline, _row, _run, _table

SUBMISSION = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
    " def add(a, b):\n-    return a - b\n+    return a + b\n"
)
TEST_PATCH = (
    "diff --git a/test_hidden.py b/test_hidden.py\nnew file mode 100644\n--- /dev/null\n"
    "+++ b/test_hidden.py\n@@ -0,0 +1,5 @@\n+from calc import add\n+\n+\n"
    "+def test_add_is_a_sum():\n+    assert add(2, 3) == 5\n"
)
TESTS_EDITED = (
    "--- a/test_calc.py\n+++ b/test_calc.py\n@@ -5 +5 @@\n-    assert add(2, 3) == 5\n"
    "+    assert add(2, 3) == -1\n"
)


def _events(tmp_path, path, commit, *, submission=SUBMISSION, base_image="img:1", **row):
    fields = {
        "test_patch": TEST_PATCH,
        "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]',
        "PASS_TO_PASS": '["test_calc.py::test_double"]',
        "problem_statement": "add() subtracts its arguments in /testbed/calc.py",
        **row,
    }
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    run = _run()
    run["messages"] = run["messages"][:2]  # no test run at all, as most real runs
    run["info"]["submission"] = submission
    session = read_record(run, "example__calc-1.traj.json")
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    pipeline.options.base_image = base_image
    return pipeline.session_events(session, "r1", None)


def test_instance_repair_task(repo, tmp_path):  # noqa: F811
    path, commit = repo
    [draft] = _events(tmp_path, path, commit)
    assert isinstance(draft, Draft) and draft.kind == "repair"
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert files["environment/workspace/calc.py"] == CALC_BUGGY
    assert "environment/workspace/test_hidden.py" not in files  # the verifier's tests only
    assert "assert add(2, 3) == 5" in files["tests/hidden/test_hidden.py"]
    assert "a + b" in files["solution/solve.sh"]
    assert '"test_hidden.py::test_add_is_a_sum"' in files["tests/grading.json"]
    assert "/workspace/calc.py" in draft.bundle.instruction
    assert "/testbed" not in draft.bundle.instruction
    assert draft.bundle.config.metadata.repo2rlenv.source.instance_id == "example__calc-1"


def test_the_verifier_limit_covers_the_test_runs_own(repo, tmp_path):  # noqa: F811
    """seaborn-3187's 250 names took 140 s here with the gold patch: `test.sh` was killed
    at 120 s (`run.verifier-timeout`) while `grade.py` allowed pytest 600 s."""
    path, commit = repo
    [draft] = _events(tmp_path, path, commit)
    files = {f.path: f.content for f in draft.bundle.files}
    inner = json.loads(files["tests/grading.json"])["timeout"]
    outer = draft.bundle.config.verifier.timeout_sec
    assert outer >= inner + VERIFIER_MARGIN_S
    assert parse_config(dump_config(draft.bundle.config)).verifier.timeout_sec == outer


def test_the_verifier_limit_keeps_its_floor_without_a_readable_grading_file():
    def tests(content: bytes) -> list[BundleFile]:
        return [BundleFile(path="tests/grading.json", content=content)]

    assert verifier_timeout([], 120.0) == 120.0
    assert verifier_timeout(tests(b"not json"), 120.0) == 120.0
    assert verifier_timeout(tests(b'{"timeout": true}'), 120.0) == 120.0
    assert verifier_timeout(tests(b'{"timeout": 10}'), 120.0) == 120.0
    assert verifier_timeout(tests(b'{"timeout": 900}'), 120.0) == 900.0 + VERIFIER_MARGIN_S


@pytest.mark.parametrize(
    ("row", "submission", "reason"),
    [
        ({}, "", "instance.no-submission"),
        ({"test_patch": ""}, SUBMISSION, "instance.no-tests"),
        ({}, SUBMISSION.replace("a - b", "a * b"), "instance.patch-does-not-apply"),
        ({}, SUBMISSION.replace("calc.py", "../calc.py"), "instance.patch-does-not-apply"),
        ({}, TESTS_EDITED, "instance.submission-only-tests"),
        ({}, TEST_PATCH.replace("== 5", "== 6"), "instance.submission-only-tests"),
    ],
)
def test_instance_repair_refusals(repo, tmp_path, row, submission, reason):  # noqa: F811
    path, commit = repo
    events = _events(tmp_path, path, commit, submission=submission, **row)
    assert [e.reason for e in events if isinstance(e, Skip)] == [reason]


def test_test_file_hunks_are_dropped_from_the_reference(repo, tmp_path):  # noqa: F811
    """SWE-bench lays the test patch over the model's patch: a submission that fixes
    calc.py and also edits an existing test file and the file the test patch adds
    gives a task whose reference holds only the fix, the dropped files listed."""
    path, commit = repo
    own_version = TEST_PATCH.replace("assert add(2, 3) == 5", "assert add(2, 3) == 6")
    [draft] = _events(tmp_path, path, commit, submission=SUBMISSION + TESTS_EDITED + own_version)
    assert isinstance(draft, Draft)
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    solve = files["solution/solve.sh"]
    assert "a + b" in solve
    assert "test_calc.py" not in solve and "test_hidden.py" not in solve
    assert "== -1" not in solve and "== 6" not in solve
    # the hidden test is the instance's, not the run's version of it
    assert "assert add(2, 3) == 5" in files["tests/hidden/test_hidden.py"]
    swe = draft.bundle.config.metadata.repo2rlenv.swe
    assert swe.dropped_test_files == ["test_calc.py", "test_hidden.py"]
    # recorded in task.toml, and read back the same
    written = parse_config(dump_config(draft.bundle.config)).metadata.repo2rlenv.swe
    assert written.dropped_test_files == ["test_calc.py", "test_hidden.py"]


def test_a_submission_without_test_files_drops_nothing(repo, tmp_path):  # noqa: F811
    path, commit = repo
    [draft] = _events(tmp_path, path, commit)
    assert draft.bundle.config.metadata.repo2rlenv.swe.dropped_test_files == []


def test_the_rows_environment_recipe_is_in_the_provenance(repo, tmp_path):  # noqa: F811
    """A SWE-rebench row's recipe (install_config, docker_image, setup commit) reaches
    the task's provenance as the row gives it, and its install_config builds the image
    (a trusted recipe: the table is the user's choice; its image is absent here,
    `test_instance_images` has the image used)."""
    import git

    from tests.mining.test_instances import TABLES

    path, start = repo
    repository = git.Repo(path)
    repository.git.checkout(start)  # the requirements file on top of the start commit
    (path / "requirements").mkdir()
    (path / "requirements" / "test.txt").write_text("simplejson\n")
    repository.index.add(["requirements/test.txt"])
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("reqs", author=actor, committer=actor).hexsha
    row = json.loads((TABLES / "swe-rebench-rows.jsonl").read_text())
    recipe = {k: row[k] for k in ("install_config", "docker_image", "environment_setup_commit")}
    [draft] = _events(tmp_path, path, commit, **recipe)
    written = parse_config(dump_config(draft.bundle.config)).metadata.repo2rlenv.swe.instance
    assert written.docker_image == row["docker_image"]
    assert written.environment_setup_commit == row["environment_setup_commit"]
    assert written.install_config.test_cmd == row["install_config"]["test_cmd"]
    assert written.install_config.log_parser == "parse_log_pytest"
    assert written.install_config.pre_install == row["install_config"]["pre_install"]
    built = parse_config(dump_config(draft.bundle.config)).metadata.repo2rlenv.swe.recipe
    assert (built.source, built.spec_python) == ("the row's install_config", "3.9")
    files = {f.path: f.content for f in draft.bundle.files}
    assert "RUN bash /tmp/rlenv-recipe/setup.sh" in files["environment/Dockerfile"].decode()
    assert (
        files["environment/recipe/setup.sh"]
        .decode()
        .endswith("cd /workspace\napt-get update\napt-get install -y gcc\npip install -e .[dev]\n")
    )
    assert files["environment/recipe/requirements.txt"] == b"simplejson\n"


def test_patch_paths_stay_inside_the_repository():
    with pytest.raises(PatchError):
        apply_patch(
            {"a.py": "x\n"}, "--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n"
        )
    assert apply_patch({"a.py": "x\n"}, "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n") == {
        "a.py": "y\n"
    }


def test_a_patch_that_renames_a_file_moves_it():
    """astropy-7336's test patch renames `py3_test_quantity_annotations.py` to
    `test_quantity_annotations.py` and edits it (git's `rename from`/`rename to`): it was
    refused as `instance.patch-does-not-apply` (the new name is not in the checkout)."""
    moved_and_edited = (
        "diff --git a/old_test.py b/new_test.py\nsimilarity index 60%\n"
        "rename from old_test.py\nrename to new_test.py\n"
        "--- a/old_test.py\n+++ b/new_test.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n"
        "diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
    )
    files = {"old_test.py": "x = 1\ny = 2\n", "a.py": "a\n"}
    assert apply_patch(files, moved_and_edited) == {
        "old_test.py": None,
        "new_test.py": "x = 1\ny = 3\n",
        "a.py": None,
        "b.py": "a\n",
    }


def test_empty_files_git_adds_or_deletes_by_header_alone_are_patches():
    """sphinx-10673's test patch adds an empty `conf.py` test root: git writes only its
    header (`new file mode`, no `---`/`+++`), the file was lost from the hidden tests,
    and the reference failed ("config directory doesn't contain a conf.py file"). A
    header-only delete is a patch too; a new file with content is still one patch; a
    binary one (content not in the diff) is none."""
    diff = (
        "diff --git a/roots/t/conf.py b/roots/t/conf.py\nnew file mode 100644\n"
        "diff --git a/roots/t/index.rst b/roots/t/index.rst\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/roots/t/index.rst\n@@ -0,0 +1,2 @@\n+title\n+=====\n"
        "diff --git a/empty.txt b/empty.txt\ndeleted file mode 100644\n"
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n"
        "--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        "diff --git a/logo.png b/logo.png\nnew file mode 100644\n"
        "Binary files /dev/null and b/logo.png differ\n"
        "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x\n+y\n"
    )
    files = {"empty.txt": "", "old.py": "x\n", "a.py": "x\n"}
    assert apply_patch(files, diff) == {
        "roots/t/conf.py": "",
        "roots/t/index.rst": "title\n=====\n",
        "empty.txt": None,
        "old.py": None,
        "a.py": "y\n",
    }


@pytest.mark.docker
def test_instance_repair_is_verified_in_docker(repo, tmp_path, docker_ready):  # noqa: F811
    """The oracle proves the submission (reference 1, start 0) with the hidden tests."""
    from repo2rlenv.bundle import write_bundle
    from repo2rlenv.runtime import DockerRuntime
    from repo2rlenv.validate import ValidateOptions, validate_one
    from repo2rlenv.validate.runner import SilentProgress

    path, commit = repo
    [draft] = _events(tmp_path, path, commit, base_image=docker_ready)
    task = write_bundle(draft.bundle, tmp_path / "out").path
    report = validate_one(task, ValidateOptions(reruns=0), DockerRuntime(), None, SilentProgress())
    assert report.valid, [f.rule_id for f in report.findings]
    assert report.label.status == "verified"


def test_a_second_run_of_the_instance_in_another_format_adds_no_task(repo, tmp_path):  # noqa: F811
    import json

    from repo2rlenv.emit import emit_all

    path, commit = repo
    fields = {"test_patch": TEST_PATCH, "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]'}
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    mini = _run()
    mini["messages"] = mini["messages"][:2]
    mini["info"]["submission"] = SUBMISSION
    footer = "\n(Open file: n/a)\n(Current directory: /testbed)\nbash-$"
    swe_agent = {
        "info": {"exit_status": "submitted", "submission": SUBMISSION},
        "history": [
            {"role": "system", "content": "SETTING", "agent": "main"},
            {"role": "user", "content": "ISSUE: add subtracts" + footer, "agent": "main"},
        ],
    }
    runs = tmp_path / "runs"
    for folder, name, record in (
        ("a-mini", "example__calc-1.traj.json", mini),
        ("b-swe-agent", "example__calc-1.traj", swe_agent),
    ):
        (runs / folder).mkdir(parents=True)
        (runs / folder / name).write_text(json.dumps(record))
    pipeline = _pipeline(
        tmp_path, path, dataset=str(runs), instances=str(table), kinds=["instance-repair"], jobs=2
    )
    report = emit_all(pipeline, tmp_path / "out").to_dict()
    by_record = {r["record_id"]: r for r in report["records"]}
    assert len(by_record["a-mini/example__calc-1.traj.json"]["tasks"]) == 1
    assert by_record["b-swe-agent/example__calc-1.traj"]["reasons"] == ["novel.duplicate-instance"]
    assert report["emitted"] == 1


def test_files_the_run_created_later_are_not_part_of_the_start(repo, tmp_path):  # noqa: F811
    """A reproduction script the agent wrote is unknown at the start, not a blocker."""
    path, commit = repo
    fields = {"test_patch": TEST_PATCH, "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]'}
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    run = _run()
    backup = "```bash\ncd /testbed && cp calc.py calc.py.backup && git diff > patch.txt\n```"
    run["messages"] = [
        *run["messages"][:2],
        {"role": "assistant", "content": backup},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
    ]
    run["info"]["submission"] = SUBMISSION
    session = read_record(run, "example__calc-1.traj.json")
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    [draft] = pipeline.session_events(session, "r1", None)
    assert isinstance(draft, Draft), draft
    paths = {f.path for f in draft.bundle.files}
    assert "environment/workspace/calc.py" in paths


LARGER = (
    "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,3 @@\n"
    " def add(a, b):\n-    return a - b\n+    # the sum, not the difference\n"
    "+    return a + b\n"
)


def test_several_runs_of_an_instance_give_the_smallest_reference(repo, tmp_path):  # noqa: F811
    """The smaller submission wins even when it comes later in input order."""
    import json

    from repo2rlenv.emit import emit_all

    path, commit = repo
    fields = {"test_patch": TEST_PATCH, "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]'}
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    runs = tmp_path / "runs"
    for folder, submission in (("a-larger", LARGER), ("b-smaller", SUBMISSION), ("c-same", "")):
        run = _run()
        run["messages"] = run["messages"][:2]
        run["info"]["submission"] = submission or SUBMISSION
        (runs / folder).mkdir(parents=True)
        (runs / folder / "example__calc-1.traj.json").write_text(json.dumps(run))
    pipeline = _pipeline(
        tmp_path, path, dataset=str(runs), instances=str(table), kinds=["instance-repair"]
    )
    out = tmp_path / "out"
    report = emit_all(pipeline, out).to_dict()
    by_record = {r["record_id"]: r for r in report["records"]}
    assert len(by_record["b-smaller/example__calc-1.traj.json"]["tasks"]) == 1
    for loser in ("a-larger", "c-same"):  # larger, or as small but later in input order
        assert by_record[f"{loser}/example__calc-1.traj.json"]["reasons"] == [
            "novel.duplicate-instance"
        ]
    [solve] = list(out.glob("*/*/solution/solve.sh"))
    assert "# the sum" not in solve.read_text()


def test_runs_are_ranked_by_what_their_reference_keeps(repo, tmp_path):  # noqa: F811
    """A run that fixed calc.py in two lines and also rewrote a test file has the smaller
    reference (the test file is dropped) than a run whose fix takes three lines."""
    import json

    from repo2rlenv.emit import emit_all

    path, commit = repo
    fields = {"test_patch": TEST_PATCH, "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]'}
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    runs = tmp_path / "runs"
    for folder, submission in (("a-larger", LARGER), ("b-with-tests", SUBMISSION + TESTS_EDITED)):
        run = _run()
        run["messages"] = run["messages"][:2]
        run["info"]["submission"] = submission
        (runs / folder).mkdir(parents=True)
        (runs / folder / "example__calc-1.traj.json").write_text(json.dumps(run))
    pipeline = _pipeline(
        tmp_path, path, dataset=str(runs), instances=str(table), kinds=["instance-repair"]
    )
    report = emit_all(pipeline, tmp_path / "out").to_dict()
    by_record = {r["record_id"]: r for r in report["records"]}
    assert len(by_record["b-with-tests/example__calc-1.traj.json"]["tasks"]) == 1
    assert by_record["a-larger/example__calc-1.traj.json"]["reasons"] == [
        "novel.duplicate-instance"
    ]


def test_a_removed_sql_comment_is_a_changed_line_not_a_header():
    from repo2rlenv.kinds.swe_reference import reference_part_size

    sql = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1 @@\n--- a comment\n select 1\n"
    assert reference_part_size(sql) == (1, len(sql.encode()))
    assert reference_part_size(TESTS_EDITED + sql) == (1, len(sql.encode()))
    assert reference_part_size(TESTS_EDITED) == (0, 0)


def test_binary_test_data_of_the_checkout_is_in_the_image(tmp_path):
    """pydicom's tests open `.dcm` files of the checkout: replay reads text only, so the
    instance task must carry the commit's binary files too (else every test that opens
    one fails the oracle)."""
    import git

    from tests.anchors.test_anchors import TESTS

    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    blob = bytes(range(256)) * 4  # NUL bytes: binary
    (path / "data").mkdir()
    (path / "data" / "sample.dcm").write_bytes(blob)
    (path / "calc.py").write_text(CALC_BUGGY)
    (path / "test_calc.py").write_text(TESTS)
    repository.index.add(["calc.py", "test_calc.py", "data/sample.dcm"])
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("start", author=actor, committer=actor).hexsha
    [draft] = _events(tmp_path, path, commit)
    files = {f.path: f.content for f in draft.bundle.files}
    assert files["environment/workspace/data/sample.dcm"] == blob
    assert files["environment/workspace/calc.py"].decode() == CALC_BUGGY


@pytest.mark.parametrize(
    ("files", "compiled"),
    [
        ({"astropy/io/ascii/cparser.pyx": "cdef int x\n"}, ["astropy/io/ascii/cparser.pyx"]),
        (
            {"astropy/wcs/setup_package.py": "def get_extensions():\n    return []\n"},
            ["astropy/wcs/setup_package.py"],
        ),
        ({"setup.py": "from setuptools import Extension\nspa = Extension('spa', [])\n"}, []),
        ({"src/marshmallow/fields.py": "x = 1\n"}, []),
        ({"tests/roots/test-ext-autodoc/target/cython.pyx": "cdef int x\n"}, []),
        ({"sklearn/tree/tests/_helper.pyx": "cdef int x\n"}, ["sklearn/tree/tests/_helper.pyx"]),
    ],
)
def test_checkouts_with_compiled_extensions_are_named(files, compiled):
    from repo2rlenv.kinds.instance_repair import compiled_sources

    assert compiled_sources(files) == compiled


def test_a_run_on_a_checkout_that_needs_a_build_is_refused_with_its_reason(tmp_path):
    """astropy's tests import its compiled extensions: its runs are refused as
    instance.build-unsupported, not emitted to fail the oracle as unresolved."""
    import git

    from tests.anchors.test_anchors import TESTS

    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    (path / "calc.py").write_text(CALC_BUGGY)
    (path / "test_calc.py").write_text(TESTS)
    (path / "_speedups.pyx").write_text("cdef int add(int a, int b):\n    return a + b\n")
    repository.index.add(["calc.py", "test_calc.py", "_speedups.pyx"])
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("start", author=actor, committer=actor).hexsha
    events = _events(tmp_path, path, commit)
    assert [e.reason for e in events if isinstance(e, Skip)] == ["instance.build-unsupported"]


def test_a_compiled_checkout_with_a_spec_recipe_is_built_in_the_image(tmp_path):
    """Issue #26 point 3: a trusted recipe (here a row's install_config) installs the
    checkout inside the image build, with Debian's compilers, so compiled extensions
    are no refusal there; the oracle decides whether the build and the tests hold."""
    import git

    from tests.anchors.test_anchors import TESTS
    from tests.mining.test_instances import TABLES

    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    (path / "calc.py").write_text(CALC_BUGGY)
    (path / "test_calc.py").write_text(TESTS)
    (path / "_speedups.pyx").write_text("cdef int add(int a, int b):\n    return a + b\n")
    (path / "requirements").mkdir()
    (path / "requirements" / "test.txt").write_text("simplejson\n")
    repository.index.add(["calc.py", "test_calc.py", "_speedups.pyx", "requirements/test.txt"])
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("start", author=actor, committer=actor).hexsha
    row = json.loads((TABLES / "swe-rebench-rows.jsonl").read_text())
    [draft] = _events(tmp_path, path, commit, install_config=row["install_config"])
    assert isinstance(draft, Draft)
    files = {f.path: f.content for f in draft.bundle.files}
    assert "RUN bash /tmp/rlenv-recipe/setup.sh" in files["environment/Dockerfile"].decode()
    assert "build-essential" in files["environment/Dockerfile"].decode()


def _swe_gym_row() -> dict:
    """A SWE-Gym OpenHands row in its published shape: a numbered sample of the
    instance (`_3`), OpenAI tool calls of OpenHands' tools, the final diff in
    `test_result.git_patch`, and no repository or commit of its own."""
    edit = {
        "command": "str_replace",
        "path": "/workspace/example__calc__1.0/calc.py",
        "old_str": "return a - b",
        "new_str": "return a + b",
    }
    call = {"name": "str_replace_editor", "arguments": json.dumps(edit)}
    return {
        "instance_id": "example__calc-1_3",
        "resolved": True,
        "messages": [
            {"role": "system", "content": "You are OpenHands agent."},
            {
                "role": "user",
                "content": "<uploaded_files>\n/workspace/example__calc__1.0\n</uploaded_files>\n"
                "<pr_description>\nadd subtracts\n</pr_description>",
            },
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "toolu_01", "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": "toolu_01", "content": "The file has been edited."},
        ],
        "test_result": {"git_patch": SUBMISSION},
    }


def test_swe_gym_sample_joins_its_instance_row(repo, tmp_path):  # noqa: F811
    """The sample number and the git_patch of a SWE-Gym row: before, the run stayed out
    of the table (`instance.not-in-table`), then had no submission."""
    path, commit = repo
    fields = {"test_patch": TEST_PATCH, "FAIL_TO_PASS": '["test_hidden.py::test_add_is_a_sum"]'}
    table = _table(tmp_path, [_row("example__calc-1", commit, **fields)])
    session = read_record(_swe_gym_row(), "sampled.json#0")
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    [draft] = pipeline.session_events(session, "r1", None)
    assert isinstance(draft, Draft), draft
    assert draft.bundle.config.metadata.repo2rlenv.source.instance_id == "example__calc-1"
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert "a + b" in files["solution/solve.sh"]


def test_multi_swe_bench_image_name_anchors_the_repository(repo, tmp_path):  # noqa: F811
    """An OpenHands Multi-SWE-bench row names its image (`mswebench/example_m_calc`) as
    `repo`; the run is anchored on example/calc (here a local mirror), not on a
    repository that does not exist."""
    path, commit = repo
    row = {
        "instance_id": "example__calc-1",
        "instance": {
            "repo": "mswebench/example_m_calc",
            "instance_id": "example__calc-1",
            "base_commit": commit,
            "FAIL_TO_PASS": "[]",
            "PASS_TO_PASS": "[]",
        },
        "history": [
            {"id": 1, "source": "user", "action": "message", "args": {"content": "fix add"}},
            {"id": 2, "source": "agent", "action": "run", "args": {"command": "ls"}},
            {"id": 3, "cause": 2, "observation": "run", "content": "calc.py", "extras": {}},
        ],
        "test_result": {"git_patch": SUBMISSION},
    }
    session = read_record(row, "output.jsonl#0")
    pipeline = _pipeline(tmp_path, path, kinds=["instance-repair"])
    [skip] = pipeline.session_events(session, "r1", None)
    # anchored on the mirror: the only thing missing is the instance's table row
    assert isinstance(skip, Skip) and skip.reason == "instance.not-in-table", skip


def test_a_test_the_patch_only_renames_is_protected_not_hidden(repo, tmp_path):  # noqa: F811
    """sqlfluff-1733's test patch adds `std_L016_L36_combo_test.py` with the bytes of
    `std_L016_L36_combo.py` (a rename): the agent sees those bytes already, so they are no
    hidden test (the leak rule refused the task) but a protected copy the verifier
    restores under the new name."""
    path, commit = repo
    old = subprocess.run(
        ["git", "-C", str(path), "show", f"{commit}:test_calc.py"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = old.splitlines()
    moved = (
        "diff --git a/test_calc_moved_test.py b/test_calc_moved_test.py\nnew file mode 100644\n"
        f"--- /dev/null\n+++ b/test_calc_moved_test.py\n@@ -0,0 +1,{len(lines)} @@\n"
        + "".join(f"+{line}\n" for line in lines)
    )
    [draft] = _events(tmp_path, path, commit, test_patch=TEST_PATCH + moved)
    assert isinstance(draft, Draft), draft
    files = {f.path: f.content for f in draft.bundle.files}
    assert files["tests/protected/test_calc_moved_test.py"].decode() == old
    assert "tests/hidden/test_calc_moved_test.py" not in files
    assert "tests/hidden/test_hidden.py" in files  # the new test stays hidden


def _pre_install_events(tmp_path, path, commit, pre_install):
    """A run that read `calc.py` as a `pre_install` step had left it
    (the row's trusted install_config), as Sphinx's runs read the `tox.ini` SWE-bench's
    `sed` rewrote."""
    from tests.mining.test_instances import TABLES

    row = json.loads((TABLES / "swe-rebench-rows.jsonl").read_text())
    config = {**row["install_config"], "pre_install": pre_install, "packages": None}
    config["reqs_path"] = []
    edited = CALC_BUGGY + "# pinned by the benchmark\n"
    table = _table(
        tmp_path,
        [
            _row(
                "example__calc-1",
                commit,
                test_patch=TEST_PATCH,
                FAIL_TO_PASS='["test_hidden.py::test_add_is_a_sum"]',
                PASS_TO_PASS='["test_calc.py::test_double"]',
                problem_statement="add() subtracts its arguments",
                install_config=config,
            )
        ],
    )
    run = _run()
    run["messages"] = [
        *run["messages"][:2],
        {"role": "assistant", "content": "```bash\ncat /testbed/calc.py\n```"},
        {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{edited}</output>"},
    ]
    run["info"]["submission"] = SUBMISSION
    session = read_record(run, "example__calc-1.traj.json")
    pipeline = _pipeline(tmp_path, path, instances=str(table), kinds=["instance-repair"])
    return pipeline.session_events(session, "r1", None)


def test_a_file_the_recipes_pre_install_changes_is_no_read_mismatch(repo, tmp_path):  # noqa: F811
    path, commit = repo
    [skip] = _pre_install_events(tmp_path, path, commit, ["apt-get update"])
    assert isinstance(skip, Skip) and skip.reason == "anchor.read-mismatch"
    step = "sed -i 's/$/ # pinned by the benchmark/' ./calc.py && echo done"
    (tmp_path / "again").mkdir()
    [draft] = _pre_install_events(tmp_path / "again", path, commit, [step])
    assert isinstance(draft, Draft), draft
    files = {f.path: f.content.decode() for f in draft.bundle.files}
    assert files["environment/workspace/calc.py"] == CALC_BUGGY  # the recipe edits it again
    assert step in files["environment/recipe/setup.sh"]


def test_a_tox_ini_the_pre_install_rewrites_is_left_as_the_image_has_it():
    from repo2rlenv.kinds.instance_repair import _verifier_files
    from repo2rlenv.kinds.swe_specs import SweSpec

    spec = SweSpec(
        repo="example/calc",
        version="1.0",
        source="test",
        pre_install=("sed -i 's/pytest/pytest -rA/' tox.ini", "sed -i 's/x/y/' conftest.py"),
    )

    class Row:
        FAIL_TO_PASS = ("test_calc.py::test_add",)
        PASS_TO_PASS = ()
        test_patch = ""

    start = {"tox.ini": "[tox]\n", "conftest.py": "", "setup.cfg": "[metadata]\n"}
    files = {f.path: f.content for f in _verifier_files(Row, start, {}, None, spec)}
    settings = json.loads(files["tests/grading.json"])
    assert settings["kept"] == ["tox.ini"]  # neither deleted nor put back by grade.py
    assert settings["protected"] == ["conftest.py", "setup.cfg"]
    assert "tests/protected/tox.ini" not in files


def test_pytest_is_tested_by_its_own_checkout():
    """SWE-bench runs pytest's tests under the checkout the spec installed: the
    verifier's pinned pytest must not be installed over it (every real pytest run was
    refused: `cannot import name 'Testdir'`). Other repositories keep the pin."""
    from repo2rlenv.kinds.instance_repair import _tests_itself
    from repo2rlenv.mining.instances import Instance
    from tests.mining.test_instances import TABLES

    full = json.loads((TABLES / "swe-rebench-rows.jsonl").read_text())
    row = {k: v for k, v in full.items() if k in Instance.model_fields}
    own = Instance.model_validate(row | {"repo": "pytest-dev/pytest"})
    assert _tests_itself(own) is True
    assert _tests_itself(Instance.model_validate(row)) is False  # example/calc
    # without a recipe nothing installs the checkout: the verifier's pytest stays
    bare = Instance.model_validate({**row, "repo": "pytest-dev/pytest", "install_config": None})
    assert _tests_itself(bare) is False  # no swebench spec has version 0.1
