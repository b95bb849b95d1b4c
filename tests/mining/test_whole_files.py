"""The pytest verifier of an instance runs its test files whole, as SWE-bench's harness
does, and the row's names decide: a test the row names may need what an earlier test of
its file, not named, did first (sphinx-8721: a shared Sphinx build)."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from repo2rlenv.kinds.instance_repair import _verifier_files
from repo2rlenv.kinds.swe_names import files_to_run
from tests.mining.test_named_grading import _grade

pytestmark = pytest.mark.timeout(120)

SHARED = """BUILT = []


def test_build():
    BUILT.append("html")


def test_reads_the_build():
    assert BUILT == ["html"]
"""

TEST_PATCH = """diff --git a/tests/test_b.py b/tests/test_b.py
--- a/tests/test_b.py
+++ b/tests/test_b.py
@@ -1 +1,2 @@
 def test_one(): pass
+def test_two(): pass
diff --git a/tests/test_a.py b/tests/test_a.py
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1 +1,2 @@
 def test_one(): pass
+def test_two(): pass
"""


def test_files_follow_the_test_patch_then_the_row():
    names = [
        "tests/test_a.py::test_two",
        "tests/other.py::TestX::test_y[1-2]",
        "tests/test_b.py::test_one",
        "tests/test_a.py::test_one",
    ]
    assert files_to_run(names, ["tests/test_b.py", "tests/test_a.py"]) == [
        "tests/test_b.py",
        "tests/test_a.py",
        "tests/other.py",
    ]


def test_the_verifier_asks_pytest_for_the_files_and_grades_the_names():
    instance = SimpleNamespace(
        repo="o/r",
        version="1.0",
        FAIL_TO_PASS=("tests/test_a.py::test_two",),
        PASS_TO_PASS=("tests/test_b.py::test_one", "tests/test_b.py::test_two"),
        test_patch=TEST_PATCH,
    )
    start = {"tests/test_a.py": "def test_one(): pass\n", "tests/test_b.py": "x = 1\n"}
    files = _verifier_files(instance, start, {}, None)
    grading = json.loads(next(f.content for f in files if f.path.endswith("grading.json")))
    assert grading["targets"] == ["tests/test_b.py", "tests/test_a.py"]
    assert grading["names"] == [*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]


def test_a_named_test_that_needs_an_unnamed_one_passes_on_the_whole_file(tmp_path):
    (tmp_path / "test_s.py").write_text(SHARED)
    names = ["test_s.py::test_reads_the_build"]
    grade = _grade()

    def run(*targets: str) -> tuple[int, int]:
        report = tmp_path / "junit.xml"
        command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-c", "/dev/null"]
        command += ["--rootdir", str(tmp_path), f"--junitxml={report}", *targets]
        subprocess.run(
            command,
            cwd=tmp_path,
            capture_output=True,
            timeout=100,
            check=False,
        )
        return grade.named_results(list(ET.parse(report).getroot().iter("testcase")), names)

    assert run(*names) == (1, 0)  # the subset: the build it reads never ran
    assert run(*files_to_run(names, [])) == (1, 1)  # the file, as SWE-bench runs it
