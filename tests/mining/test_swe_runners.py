"""Own-runner instances (Django's runtests.py, SymPy's bin/test): SWE-bench's command,
labels, log parsers and grading, from the pinned `swebench` package.

The log excerpts below are written in the runners' real output formats: Django's
`runtests.py --verbosity 2` under Python 3.11 (`name (module.Class.name) ... ok`, a
docstring's first line in place of the name, `FAIL:` / `ERROR:` headers), and SymPy's
`bin/test --verbose` (`name ok` / `name F`, failure headers `path.py:name`, the file's
`[OK]` / `[FAIL]` written on the line of its last test)."""

from __future__ import annotations

import json
import os
import sys
from importlib import metadata
from pathlib import Path

import git
import pytest

from repo2rlenv.emit import Draft, Skip
from repo2rlenv.formats import read_record
from repo2rlenv.kinds import instance_wheels, swe_runners, swebench_grade
from repo2rlenv.kinds.common import PYTEST_INSTALL, Reject
from tests.mining.test_instances import _pipeline, _row, _run, _table

try:
    metadata.distribution("swebench")
except metadata.PackageNotFoundError:
    pytest.skip(
        "swebench is not installed (pip install --no-deps swebench==4.1.0)",
        allow_module_level=True,
    )

DJANGO_PATCH = (
    "diff --git a/tests/xor_lookups/tests.py b/tests/xor_lookups/tests.py\n"
    "--- a/tests/xor_lookups/tests.py\n+++ b/tests/xor_lookups/tests.py\n@@ -1 +1 @@\n-a\n+b\n"
    "diff --git a/tests/fixtures_regress/fixtures/data.json "
    "b/tests/fixtures_regress/fixtures/data.json\n"
    "--- a/tests/fixtures_regress/fixtures/data.json\n"
    "+++ b/tests/fixtures_regress/fixtures/data.json\n@@ -1 +1 @@\n-[]\n+[1]\n"
    "diff --git a/tests/user_commands/management/commands/sub.py "
    "b/tests/user_commands/management/commands/sub.py\n"
    "new file mode 100644\n--- /dev/null\n+++ b/tests/user_commands/management/commands/sub.py\n"
    "@@ -0,0 +1 @@\n+x = 1\n"
)
SYMPY_PATCH = (
    "diff --git a/sympy/physics/hep/tests/test_gamma_matrices.py "
    "b/sympy/physics/hep/tests/test_gamma_matrices.py\n"
    "--- a/sympy/physics/hep/tests/test_gamma_matrices.py\n"
    "+++ b/sympy/physics/hep/tests/test_gamma_matrices.py\n@@ -1 +1 @@\n-a\n+b\n"
)
CHECKOUT = {"tests/runtests.py": "", "tests/test_sqlite.py": "", "bin/test": ""}

XOR = "xor_lookups.tests.XorLookupsTests"
DJANGO_LOG = f"""Testing against Django installed in '/workspace/django' with up to 1 processes
Importing application xor_lookups
Importing application rlenv_canary
Found 5 test(s).
Operations to perform:
  Synchronize unmigrated apps: auth, contenttypes, messages, rlenv_canary, xor_lookups
Running migrations:
  Applying admin.0001_initial... OK
System check identified no issues (0 silenced).
test_empty_in ({XOR}.test_empty_in) ... ok
test_filter_multiple ({XOR}.test_filter_multiple) ... FAIL
test_pk_q ({XOR}.test_pk_q)
XOR of primary keys keeps the rows of one side ... ok
test_stages ({XOR}.test_stages) ... skipped 'Database has feature(s) supports_logical_xor'
test_rlenv_canary_must_pass (rlenv_canary.tests.RlenvCanary.test_rlenv_canary_must_pass) ... ok
test_rlenv_canary_must_fail (rlenv_canary.tests.RlenvCanary.test_rlenv_canary_must_fail) ... FAIL

======================================================================
FAIL: test_filter_multiple ({XOR}.test_filter_multiple)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/workspace/tests/xor_lookups/tests.py", line 21, in test_filter_multiple
    self.assertCountEqual(
AssertionError: Element counts were not equal:

======================================================================
FAIL: test_rlenv_canary_must_fail (rlenv_canary.tests.RlenvCanary.test_rlenv_canary_must_fail)
----------------------------------------------------------------------
AssertionError: canary

----------------------------------------------------------------------
Ran 6 tests in 0.031s

FAILED (failures=2, skipped=1)
Destroying test database for alias 'default'...
"""
F2P = [f"test_filter_multiple ({XOR}.test_filter_multiple)"]
P2P = [f"test_empty_in ({XOR}.test_empty_in)", "XOR of primary keys keeps the rows of one side"]

SYMPY_LOG = """============================= test process starts ==============================
executable:         /usr/bin/python3  (3.11.2-final-0) [CPython]
architecture:       64-bit
cache:              no
ground types:       python
numpy:              None
random seed:        40563452
hash randomization: on (PYTHONHASHSEED=1791239006)

sympy/physics/hep/tests/test_gamma_matrices.py[4]
test_kahane_algorithm ok
test_kahane_simplify1 F
test_gamma_matrix_class ok
test_gamma_trace ok                                                         [FAIL]

sympy/rlenv_canary/test_rlenv_canary.py[2]
test_rlenv_canary_must_pass ok
test_rlenv_canary_must_fail F                                               [FAIL]


________________________________________________________________________________
_____ sympy/physics/hep/tests/test_gamma_matrices.py:test_kahane_simplify1 _____
Traceback (most recent call last):
  File "/workspace/sympy/physics/hep/tests/test_gamma_matrices.py", line 197, in test_kahane_s\
implify1
    assert r.equals(4*G(mu)*G(nu))
AssertionError
________________________________________________________________________________
_________ sympy/rlenv_canary/test_rlenv_canary.py:test_rlenv_canary_must_fail __________
AssertionError

============= tests finished: 4 passed, 2 failed, in 0.87 seconds ==============
DO *NOT* COMMIT!
"""


@pytest.fixture(scope="module")
def swebench() -> object:
    return swe_runners._package()


def test_labels_are_swebench_s_directives():
    # Django: tests/ dropped, dots for slashes, data files (.json) left out
    assert swe_runners.test_directives("django/django", DJANGO_PATCH) == [
        "xor_lookups.tests",
        "user_commands.management.commands.sub",
    ]
    # SymPy: the test files as they are
    assert swe_runners.test_directives("sympy/sympy", SYMPY_PATCH) == [
        "sympy/physics/hep/tests/test_gamma_matrices.py"
    ]


def test_commands_are_the_spec_s_with_the_canary_last():
    django = swe_runners.own_runner("django/django", "5.0", DJANGO_PATCH, CHECKOUT)
    assert django.argv == ("tests/runtests.py", "--verbosity", "2", "--settings=test_sqlite",
                           "--parallel", "1")  # fmt: skip
    assert django.env == {}
    sympy = swe_runners.own_runner("sympy/sympy", "1.12", SYMPY_PATCH, CHECKOUT)
    assert sympy.argv == ("bin/test", "-C", "--verbose")
    assert sympy.env == {"PYTHONWARNINGS": "ignore::UserWarning,ignore::SyntaxWarning"}
    files = swe_runners.runner_grading_files(
        sympy, fail_to_pass=["test_a"], pass_to_pass=[], start=CHECKOUT, protected={}, hidden={}
    )
    settings = json.loads(next(f.content for f in files if f.path == "tests/grading.json"))
    argv, env = swebench_grade.command(settings)
    assert argv == [
        sys.executable,  # the checkout's script by the image's interpreter, not its shebang
        "bin/test",
        "-C",
        "--verbose",
        "sympy/physics/hep/tests/test_gamma_matrices.py",
        "sympy/rlenv_canary/test_rlenv_canary.py",
    ]
    assert env["PYTHONWARNINGS"] == "ignore::UserWarning,ignore::SyntaxWarning"
    # the interpreter's own folder first (a published image's environment), then ours
    own = str(Path(sys.executable).parent)
    assert env["PATH"] in (swebench_grade.ENV["PATH"], f"{own}:{swebench_grade.ENV['PATH']}")


@pytest.mark.parametrize(
    ("version", "start", "says"),
    [
        ("0.1", CHECKOUT, "spec for version 0.1"),  # no such version in the package
        (None, CHECKOUT, "spec for version None"),
        ("5.0", {"bin/test": ""}, "tests/runtests.py is not a file of the checkout"),
    ],
)
def test_no_runner_without_the_spec_or_its_script(version, start, says):
    with pytest.raises(Reject, match=says) as caught:
        swe_runners.own_runner("django/django", version, DJANGO_PATCH, start)
    assert caught.value.reason == "instance.runner-unsupported"


def test_django_log_is_scored_by_swebench_s_parser_and_grading(swebench):
    status = swebench.parsers["django/django"](DJANGO_LOG, None)
    assert swebench_grade.canaries_intact(
        status, "test_rlenv_canary_must_pass", "test_rlenv_canary_must_fail"
    )
    # the fix is missing: the FAIL_TO_PASS test failed, and says so by name
    resolved, lines = swebench_grade.score(swebench, status, F2P, P2P)
    assert not resolved
    assert f"  FAILED: {F2P[0]}" in lines and "FAIL_TO_PASS: 0 of 1 passed" in lines
    assert "PASS_TO_PASS: 2 of 2 passed" in lines  # a docstring name too
    # with the fix: resolved
    fixed = DJANGO_LOG.replace("test_filter_multiple) ... FAIL", "test_filter_multiple) ... ok")
    fixed = fixed.replace(f"FAIL: {F2P[0]}", "")
    status = swebench.parsers["django/django"](fixed, None)
    assert swebench_grade.score(swebench, status, F2P, P2P)[0]
    # a name the runner never reports is a failure, named
    gone = "test_gone (a.B.test_gone)"
    resolved, lines = swebench_grade.score(swebench, status, F2P, [*P2P, gone])
    assert not resolved and "  not reported by the runner: test_gone (a.B.test_gone)" in lines
    # a skipped test is no pass (SWE-bench's report would count it in neither list)
    skipped = f"test_stages ({XOR}.test_stages)"
    assert status[skipped] == "SKIPPED"
    assert not swebench_grade.score(swebench, status, F2P, [*P2P, skipped])[0]


def test_settled_names_do_not_decide_and_the_failing_ones_are_printed_for_the_miner(swebench):
    """django-16145's `test_honor_umask` is never reported in the container and
    django-16315's `bulk_create` tests are skipped there, on the reference and the start
    alike: once the miner's oracle settles them (`environment_bound`), they stop
    deciding; the names that did not pass are printed on the line the miner reads back
    (`mining.environment_bound.failed_names`), a FAIL_TO_PASS name always among them."""
    from repo2rlenv.kinds.grading import FAILED_NAMES
    from repo2rlenv.mining.environment_bound import failed_names

    fixed = DJANGO_LOG.replace("test_filter_multiple) ... FAIL", "test_filter_multiple) ... ok")
    status = swebench.parsers["django/django"](fixed.replace(f"FAIL: {F2P[0]}", ""), None)
    gone, skipped = "test_gone (a.B.test_gone)", f"test_stages ({XOR}.test_stages)"
    runner = {"fail_to_pass": F2P, "pass_to_pass": [*P2P, gone, skipped]}
    resolved, lines = swebench_grade.decide(swebench, status, runner, [], FAILED_NAMES)
    assert not resolved and failed_names("\n".join(lines)) == [gone, skipped]
    resolved, lines = swebench_grade.decide(swebench, status, runner, [gone, skipped], FAILED_NAMES)
    assert resolved, lines
    assert f"environment-bound, not deciding: {gone}" in lines
    assert failed_names("\n".join(lines)) == [] and "PASS_TO_PASS: 2 of 2 passed" in lines
    # the fix missing: its FAIL_TO_PASS name decides even when listed as settled
    status = swebench.parsers["django/django"](DJANGO_LOG, None)
    resolved, lines = swebench_grade.decide(swebench, status, runner, [gone, *F2P], FAILED_NAMES)
    assert not resolved and failed_names("\n".join(lines)) == [*F2P, skipped]


MCF = "model_forms.test_modelchoicefield.ModelChoiceFieldTests"
# real names of SWE-bench Verified rows: django__django-14915 (Django 4.1, written on
# Python 3.9) and django__django-16454 (Django 5.0, written on Python 3.11)
ROW_39 = [f"test_choice_value_hash ({MCF})", f"test_basics ({MCF})"]
ROW_311 = [
    "test_subparser_error_formatting "
    "(user_commands.tests.CommandRunTests.test_subparser_error_formatting)"
]
LOG_311 = f"""test_choice_value_hash ({MCF}.test_choice_value_hash) ... ok
test_basics ({MCF}.test_basics) ... ok
test_subparser_error_formatting (user_commands.tests.CommandRunTests) ... ok
"""  # the last line as Python 3.9 prints it


def test_row_names_of_either_python_match_the_runner_s_results(swebench):
    status = swebench.parsers["django/django"](LOG_311, None)
    # a 3.9 row against 3.11 output, and a 3.11 row against 3.9 output
    resolved, lines = swebench_grade.score(swebench, status, ROW_39[:1], ROW_39[1:])
    assert resolved, lines
    assert swebench_grade.score(swebench, status, ROW_311, [])[0]
    failing = LOG_311.replace("test_choice_value_hash) ... ok", "test_choice_value_hash) ... FAIL")
    status = swebench.parsers["django/django"](failing, None)
    resolved, lines = swebench_grade.score(swebench, status, ROW_39[:1], ROW_39[1:])
    assert not resolved and f"  FAILED: {ROW_39[0]}" in lines


def test_the_canonical_form_keeps_distinct_tests_apart(swebench):
    # the same method of two classes: one class's result is never the other's
    status = swebench.parsers["django/django"](
        "test_a (app.tests.CaseB.test_a) ... ok\ntest_a (app.tests.CaseA.test_a) ... FAIL\n", None
    )
    assert not swebench_grade.score(swebench, status, ["test_a (app.tests.CaseA)"], [])[0]
    only_b = {"test_a (app.tests.CaseB.test_a)": "PASSED"}
    resolved, lines = swebench_grade.score(swebench, only_b, ["test_a (app.tests.CaseA)"], [])
    assert not resolved and "  not reported by the runner: test_a (app.tests.CaseA)" in lines
    # names that are not Python 3.11's unittest form stay as they are
    for name in [
        "test_x (app.test_x)",  # two parts: a module and its class, no method
        "test_x (app.tests.Case)",
        "test_x (app.tests.Case.test_y)",
        "makemigrations should recognize number-only migrations (0001.py).",
        "tests/test_a.py::test_b[1.5 (x.y.test_b)]",
        "test_kahane_simplify1",
    ]:
        assert swebench_grade.canonical_name(name) == name
    assert swebench_grade.canonical_name(f"test_basics ({MCF}.test_basics)") == ROW_39[1]
    # two row names of one canonical form, one reported result: neither takes the other's
    row = ["test_x (app.tests.Case)", "test_x (app.tests.Case.test_x)"]
    status = {"test_x (app.tests.Case.test_x)": "PASSED"}
    assert swebench_grade.matched_status(status, row) == {
        row[1]: "PASSED",
        row[0]: swebench_grade.AMBIGUOUS,
    }
    assert not swebench_grade.score(swebench, status, row, [])[0]


def test_sympy_log_is_scored_by_swebench_s_parser(swebench):
    status = swebench.parsers["sympy/sympy"](SYMPY_LOG, None)
    assert swebench_grade.canaries_intact(
        status, "test_rlenv_canary_must_pass", "test_rlenv_canary_must_fail"
    )
    resolved, lines = swebench_grade.score(
        swebench, status, ["test_kahane_simplify1"], ["test_kahane_algorithm"]
    )
    assert not resolved and "  FAILED: test_kahane_simplify1" in lines
    fixed = SYMPY_LOG.replace("test_kahane_simplify1 F", "test_kahane_simplify1 ok")
    fixed = fixed.replace("test_gamma_matrices.py:test_kahane_simplify1", "")
    status = swebench.parsers["sympy/sympy"](fixed, None)
    assert swebench_grade.score(
        swebench, status, ["test_kahane_simplify1"], ["test_kahane_algorithm"]
    )[0]


@pytest.mark.parametrize(
    ("log", "intact"),
    [
        ("test_rlenv_canary_must_pass ok\ntest_rlenv_canary_must_fail F\n", True),
        ("test_rlenv_canary_must_pass ok\ntest_rlenv_canary_must_fail ok\n", False),  # forged
        ("test_rlenv_canary_must_pass ok\n", False),  # missing
        ("test_rlenv_canary_must_pass F\ntest_rlenv_canary_must_fail F\n", False),
        ("test_rlenv_canary_must_pass E\ntest_rlenv_canary_must_fail E\n", False),
    ],
)
def test_canaries(swebench, log, intact):
    status = swebench.parsers["sympy/sympy"](log, None)
    assert (
        swebench_grade.canaries_intact(
            status, "test_rlenv_canary_must_pass", "test_rlenv_canary_must_fail"
        )
        is intact
    )


def test_the_task_s_copy_of_the_package_loads_and_a_planted_one_does_not(tmp_path, monkeypatch):
    for rel, data in swe_runners.vendored_files().items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    assert "swebench 4.1.0" in (tmp_path / "tests/vendor/SOURCE.txt").read_text()
    assert "MIT" in (tmp_path / "tests/vendor/LICENSE").read_text()
    # what an agent could plant on sys.path: a `swebench` whose parsers pass everything
    planted = tmp_path / "planted" / "swebench" / "harness" / "log_parsers"
    planted.mkdir(parents=True)
    for folder in (planted.parent.parent, planted.parent, planted):
        (folder / "__init__.py").write_text("")
    (planted / "python.py").write_text(
        "MAP_REPO_TO_PARSER_PY = {'django/django': lambda log, spec: {'x': 'PASSED'}}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "planted"))
    before = {k for k in sys.modules if k.startswith("swebench")}
    loaded = swebench_grade.load_swebench(tmp_path / "tests/vendor")
    assert {k for k in sys.modules if k.startswith("swebench")} == before
    status = loaded.parsers["django/django"](DJANGO_LOG, None)
    assert status[F2P[0]] == "FAILED" and "x" not in status
    with pytest.raises(ImportError):
        swebench_grade.load_swebench(tmp_path / "nowhere")


@pytest.fixture
def django_like(tmp_path) -> tuple[Path, str]:
    """A checkout with Django's runner files, whose `add` is broken."""
    path = tmp_path / "django"
    repository = git.Repo.init(path)
    files = {
        "calc.py": "def add(a, b):\n    return a - b\n",
        "tests/runtests.py": "print('the runner')\n",
        "tests/test_sqlite.py": "DATABASES = {}\n",
        "tests/requirements/py3.txt": "asgiref\n",
    }
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    repository.index.add(list(files))
    actor = git.Actor("t", "t@example.com")
    return path, repository.index.commit("start", author=actor, committer=actor).hexsha


def test_a_django_instance_gets_a_task_with_its_own_runner(django_like, tmp_path, monkeypatch):
    path, commit = django_like
    name = "test_add (calc_tests.tests.T.test_add)"
    test_patch = (
        "diff --git a/tests/calc_tests/tests.py b/tests/calc_tests/tests.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/calc_tests/tests.py\n@@ -0,0 +1,2 @@\n+from calc import add\n"
        "+assert add\n"
    )
    row = _row(
        "django__django-1",
        commit,
        repo="django/django",
        version="5.0",
        test_patch=test_patch,
        FAIL_TO_PASS=json.dumps([name]),
    )
    run = _run()
    run["messages"] = run["messages"][:2]
    run["info"]["submission"] = (
        "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n"
        " def add(a, b):\n-    return a - b\n+    return a + b\n"
    )
    session = read_record(run, "django__django-1.traj.json")
    pipeline = _pipeline(
        tmp_path,
        path,
        url="https://github.com/django/django",
        instances=str(_table(tmp_path, [row])),
        kinds=["instance-repair"],
    )
    events = pipeline.session_events(session, "r1", None)
    assert not [e.reason for e in events if isinstance(e, Skip)]
    [draft] = events
    assert isinstance(draft, Draft)
    files = {f.path: f.content for f in draft.bundle.files}
    assert b"/tests/grade_swebench.py" in files["tests/test.sh"]
    settings = json.loads(files["tests/grading.json"])
    assert settings["runner"]["labels"] == ["calc_tests.tests"]
    assert settings["runner"]["fail_to_pass"] == [name]
    assert settings["runner"]["argv"][0] == "tests/runtests.py"
    assert "tests/runtests.py" in settings["protected"]  # the runner is put back
    assert files["tests/protected/tests/runtests.py"] == b"print('the runner')\n"
    assert settings["hidden"] == ["tests/calc_tests/tests.py"]
    assert "tests/vendor/swebench/harness/log_parsers/python.py" in files
    assert files["tests/grade_swebench.py"] == Path(swebench_grade.__file__).read_bytes()
    assert PYTEST_INSTALL not in files["environment/Dockerfile"].decode()


VERIFIED = Path(
    os.environ.get(
        "RLENV_SWE_VERIFIED",
        Path(__file__).resolve().parents[2].parent
        / "shared/samples/swe/SWE-bench_Verified-test.parquet",
    )
)
"""SWE-bench Verified's test split as parquet (its Django rows); set RLENV_SWE_VERIFIED."""


@pytest.mark.skipif(not VERIFIED.exists(), reason=f"no SWE-bench Verified table at {VERIFIED}")
def test_every_verified_django_row_s_names_stay_apart_in_the_canonical_form():
    """Over all Django rows of Verified (Python 3.9's names up to 4.2, 3.11's in 5.0):
    no two names of one row meet in the canonical form, and each row's names, printed
    the other Python's way, are matched back one to one."""
    import pyarrow.parquet as pq

    rows = pq.read_table(VERIFIED, columns=["repo", "version", "FAIL_TO_PASS", "PASS_TO_PASS"])
    forms = {"3.9": 0, "3.11": 0}
    for row in rows.to_pylist():
        if row["repo"] != "django/django":
            continue
        names = [*json.loads(row["FAIL_TO_PASS"]), *json.loads(row["PASS_TO_PASS"])]
        canonical = [swebench_grade.canonical_name(n) for n in names]
        assert len(set(canonical)) == len(set(names))
        other = {}  # each name as the other Python prints it
        for name, form in zip(names, canonical, strict=True):
            method, _, owner = form.partition(" (")
            if name != form:
                forms["3.11"] += 1
                other[form] = name
            elif owner.endswith(")") and " " not in method and "." in owner:
                forms["3.9"] += 1
                other[f"{method} ({owner[:-1]}.{method})"] = name
            else:
                other[name] = name  # a docstring line: the same on both
        status = {printed: "PASSED" for printed in other}
        assert swebench_grade.matched_status(status, names) == {n: "PASSED" for n in names}
    assert forms["3.9"] > 10000 and forms["3.11"] > 500  # both forms were seen


def test_difficulty_counts_the_hidden_tests_not_the_verifier_s_swebench(tmp_path):
    from repo2rlenv.difficulty.heuristic import hidden_tests

    for rel, data in swe_runners.vendored_files().items():  # grading.py: def test_passed(
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    (tmp_path / swe_runners.GRADER).write_bytes(Path(swebench_grade.__file__).read_bytes())
    hidden = tmp_path / "tests/hidden/tests/xor_lookups/tests.py"
    hidden.parent.mkdir(parents=True)
    hidden.write_text("def test_a(self):\n    pass\n\n\ndef test_b(self):\n    pass\n")
    assert hidden_tests(tmp_path) == 2


def test_an_own_runner_environment_is_not_resolved_around_pytest():
    """Django 3.0's spec is Python 3.6, for which the verifier's pytest has no release:
    no pytest ever runs in an own-runner task, so its recipe does not install the
    verifier's pytest; where one is installed, only its own step is dated at its
    release, never the spec's environment."""
    from repo2rlenv.kinds.instance_deps import DependencyDate
    from repo2rlenv.kinds.swe_specs import SweSpec
    from repo2rlenv.kinds.verifier_pytest import PYTEST_PIN

    spec = SweSpec(repo="django/django", version="3.0", source="swebench 4.1.0", python="3.6")
    dated = DependencyDate(date="2019-03-01", basis="test")
    own = instance_wheels._recipe_environment(spec, {}, dated, "img:1", with_pytest=False)
    assert own.recipe is not None and not [s for s in own.recipe.after if "pytest" in s]
    # (raised to the image Python's release: older build tools do not run on it)
    assert "ARG PIP_UPLOADED_PRIOR_TO=2022-10-25" in own.recipe.shared
    verified = instance_wheels._recipe_environment(spec, {}, dated, "img:1", with_pytest=True)
    assert verified.recipe is not None and verified.recipe.after[-1].endswith(PYTEST_PIN)
    assert "ARG PIP_UPLOADED_PRIOR_TO=2022-10-25" in verified.recipe.shared
    assert verified.recipe.after[-2] == "ARG PIP_UPLOADED_PRIOR_TO=2024-12-02"


def test_the_verifier_runs_the_command_with_its_own_canary_folder(tmp_path, monkeypatch):
    """`run_tests` replaces whatever the agent left at the canary's folder (here a
    symlink to a folder of its own), writes the canary, and returns the runner's
    output; a runner that prints Django's format is read back by the parser."""
    workspace = tmp_path / "workspace"
    (workspace / "tests").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "tests.py").write_text("# the agent's canary\n")
    (workspace / "tests/rlenv_canary").symlink_to(elsewhere, target_is_directory=True)
    (workspace / "tests/runtests.py").write_text(
        "import pathlib, sys\n"
        "canary = pathlib.Path('tests/rlenv_canary/tests.py').read_text()\n"
        "ok = 'def test_rlenv_canary_must_fail' in canary and not pathlib.Path("
        "'tests/rlenv_canary').is_symlink()\n"
        "print('labels', sys.argv[1:])\n"
        "print('test_rlenv_canary_must_pass (rlenv_canary.tests.C.test_rlenv_canary_must_pass)"
        " ... ok')\n"
        "print('test_rlenv_canary_must_fail (rlenv_canary.tests.C.test_rlenv_canary_must_fail)"
        " ... ' + ('FAIL' if ok else 'ok'))\n"
    )
    monkeypatch.setattr(swebench_grade, "WORKSPACE", workspace)
    django = swe_runners.own_runner("django/django", "5.0", DJANGO_PATCH, CHECKOUT)
    files = swe_runners.runner_grading_files(
        django, fail_to_pass=["x"], pass_to_pass=[], start=CHECKOUT, protected={}, hidden={}
    )
    settings = json.loads(next(f.content for f in files if f.path == "tests/grading.json"))
    log = swebench_grade.run_tests(settings)
    assert "labels ['--verbosity', '2', '--settings=test_sqlite', '--parallel', '1', " in log
    assert (elsewhere / "tests.py").read_text() == "# the agent's canary\n"
    status = swe_runners._package().parsers["django/django"](log, None)
    assert swebench_grade.canaries_intact(
        status, "test_rlenv_canary_must_pass", "test_rlenv_canary_must_fail"
    )


def test_the_eval_commands_exports_are_the_test_run_s_environment():
    """Django 3.0's spec exports `LANG=en_US.UTF-8` (and LANGUAGE, LC_ALL) before its
    tests; the verifier's runner gets them over its own `C.UTF-8`."""
    django = swe_runners.own_runner("django/django", "3.0", DJANGO_PATCH, CHECKOUT)
    assert django.env == {"LANG": "en_US.UTF-8", "LANGUAGE": "en_US:en", "LC_ALL": "en_US.UTF-8"}
    files = swe_runners.runner_grading_files(
        django, fail_to_pass=["test_a"], pass_to_pass=[], start=CHECKOUT, protected={}, hidden={}
    )
    settings = json.loads(next(f.content for f in files if f.path == "tests/grading.json"))
    _, env = swebench_grade.command(settings)
    assert env["LANG"] == env["LC_ALL"] == "en_US.UTF-8"
    assert swebench_grade.ENV["LANG"] == "C.UTF-8"  # the default stays for other versions


def test_threads_loading_the_package_at_once_all_get_it():
    """`mine -j 2` loads the package from two threads; its loader swaps `sys.modules`
    entries, and two loads at once raised `KeyError` in one of them."""
    import threading

    swe_runners._load_package.cache_clear()
    start = threading.Barrier(6)
    got, errors = [], []

    def load():
        start.wait()
        try:
            got.append(swe_runners._package())
        except Exception as exc:  # the test reports any failure
            errors.append(exc)

    threads = [threading.Thread(target=load) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len({id(g) for g in got}) == 1


DESCRIBED_LOG = """\
test_F_reuse (expressions.tests.ExpressionsTests) ... ok
test_insensitive_patterns_escape (expressions.tests.ExpressionsTests)
Special characters (e.g. %, _ and \\\\) stored in database are ... FAIL
test_patterns_escape (expressions.tests.ExpressionsTests)
Special characters (e.g. %, _ and \\\\) stored in database are ... ok
"""


def test_a_test_printed_with_its_docstring_is_found_by_its_name(swebench):
    """Django 3.2's rows (Python 3.6) name `test_patterns_escape (...)`, whose docstring
    opens with a newline; the offline base's 3.9 prints the docstring's line beside the
    status, so the name was `not reported by the runner` (django-13590's reference
    scored 0 on 7 such PASS_TO_PASS names). Two tests sharing a docstring keep their own
    statuses."""
    parse = swebench.parsers["django/django"]
    status = parse(DESCRIBED_LOG, None)
    assert "test_patterns_escape (expressions.tests.ExpressionsTests)" not in status
    found = swebench_grade.described_results(DESCRIBED_LOG, parse)
    assert found == {
        "test_insensitive_patterns_escape (expressions.tests.ExpressionsTests)": "FAILED",
        "test_patterns_escape (expressions.tests.ExpressionsTests)": "PASSED",
    }
    resolved, lines = swebench_grade.score(
        swebench,
        {**found, **status},
        ["test_patterns_escape (expressions.tests.ExpressionsTests)"],
        ["test_F_reuse (expressions.tests.ExpressionsTests)"],
    )
    assert resolved, lines
