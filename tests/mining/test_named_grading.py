"""A benchmark row's test names, as SWE-bench's log parser wrote them from pytest's
`-rA` lines (cut at the first whitespace, non-ASCII parameters escaped), decide the
pytest verifier's reward: the verifier runs their files and matches the names in
its JUnit report (psf__requests-5414's `test_basic_auth_str_is_always_native[...-Basic`).
"""

from __future__ import annotations

import subprocess
import sys
import types
import xml.etree.ElementTree as ET

import pytest

from repo2rlenv.kinds.grading import GRADE_PY
from repo2rlenv.kinds.swe_names import files_to_run

pytestmark = pytest.mark.timeout(120)

TESTS = """import pytest


@pytest.mark.parametrize("user, auth", [
    ("test", "Basic dGVzdDp0ZXN0"),
    ("\\u0438\\u043c\\u044f".encode(), "Basic 0LjQvNGP"),
    ("stra\\u00dfe", "Basic c3RyYcOfZQ=="),
])
def test_auth(user, auth):
    assert auth.startswith("Basic")


def test_plain():
    assert True


def test_broken():
    assert False
"""


def _grade() -> types.SimpleNamespace:
    """`tests/grade.py`'s functions, without its settings file."""
    source = GRADE_PY.replace(
        'SETTINGS = json.loads(Path("/tests/grading.json").read_text())', "SETTINGS = {}"
    )
    space: dict[str, object] = {"__name__": "rlenv_grade"}
    exec(compile(source, "grade.py", "exec"), space)
    return types.SimpleNamespace(**space)


def _pytest(tmp_path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-c",
            "/dev/null",
            "--rootdir",
            str(tmp_path),
            *args,
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )


def _row_names(tmp_path) -> dict[str, str]:
    """What SWE-bench's `parse_log_pytest` makes of a `-rA` run: the second token of
    each status line, by status."""
    log = _pytest(tmp_path, "-rA", "tests/test_x.py").stdout
    names = {}
    for line in log.splitlines():
        for status in ("PASSED", "FAILED"):
            if line.startswith(status + " "):
                names[line.replace(" - ", " ").split()[1]] = status
    return names


def test_row_names_of_escaped_and_spaced_parameters_decide_the_reward(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(TESTS)
    names = _row_names(tmp_path)
    cut = [n for n in names if n.endswith("-Basic")]
    assert len(cut) == 3 and any("\\xd0\\xb8" in n for n in cut)  # escaped bytes
    assert any("\\xdf" in n for n in cut)  # escaped text
    assert _pytest(tmp_path, *names).returncode == 4  # pytest finds none of the cut names

    targets = files_to_run(list(names), ["tests/test_x.py"])
    assert targets == ["tests/test_x.py"]
    report = tmp_path / "junit.xml"
    _pytest(tmp_path, f"--junitxml={report}", *targets)
    cases = list(ET.parse(report).getroot().iter("testcase"))
    grade = _grade()
    passing = [n for n, s in names.items() if s == "PASSED"]
    assert grade.named_results(cases, passing) == (4, 4)
    assert grade.named_results(cases, list(names)) == (5, 4)  # test_broken is no pass


def test_a_name_the_runner_never_reports_is_printed_by_name(tmp_path, capsys):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text(TESTS)
    report = tmp_path / "junit.xml"
    _pytest(tmp_path, f"--junitxml={report}", "tests/test_x.py")
    cases = list(ET.parse(report).getroot().iter("testcase"))
    missing = "tests/test_x.py::test_auth[nobody-Basic"
    assert _grade().named_results(cases, [missing, "tests/test_x.py::test_plain"]) == (2, 1)
    assert f"not reported by the runner: {missing}" in capsys.readouterr().out


def test_a_repeated_parameter_id_matches_the_older_pytests_numbering():
    """sphinx-8265's row names `test_unparse[1234-1234_0]` and `[1234-1234_1]` (newer
    pytest: a `_` before the copy's number when the id ends in a digit); the bullseye
    verifier's pytest 7.2.1 reports `1234-12340` and `1234-12341`, so both were "not
    reported by the runner" and the reference failed. The older spelling is tried only
    when the exact name has no case, and only for an id ending in a digit."""
    grade = _grade()

    def case(name: str, failed: bool = False) -> ET.Element:
        element = ET.Element("testcase", classname="tests.test_pycode_ast", name=name)
        if failed:
            ET.SubElement(element, "failure")
        return element

    cases = [case("test_unparse[1234-12340]"), case("test_unparse[1234-12341]", failed=True)]
    names = [
        "tests/test_pycode_ast.py::test_unparse[1234-1234_0]",
        "tests/test_pycode_ast.py::test_unparse[1234-1234_1]",
    ]
    assert grade.named_results(cases, names) == (2, 1)  # found; the second one failed
    assert grade.older_duplicate_id("test_unparse[a_0]") is None  # `a` ends in no digit
    assert grade.older_duplicate_id("test_unparse[1_x]") is None
    assert grade.older_duplicate_id("test_plain") is None
