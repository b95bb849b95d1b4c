"""A checkout's requirements files for tests (moto lists `surer`, which its tests import
as `sure`, in `requirements-tests.txt` only): read inside the checkout, plain
requirement lines only, every other line skipped with its reason."""

from __future__ import annotations

import git
import pytest

from repo2rlenv.emit import Draft
from repo2rlenv.kinds import instance_wheels
from repo2rlenv.kinds.instance_deps import DependencyError
from repo2rlenv.kinds.requirement_files import (
    RequirementFiles,
    fetch_with_test_files,
    read_test_requirements,
    requirement_files,
    verifier_bounds,
)
from tests.anchors.test_anchors import CALC_BUGGY, TESTS

# the shape of moto's files at 7b4cd492 (written here, not copied)
MOTO_TESTS = "coverage\npytest\npytest-cov\npytest-xdist\nsurer\nfreezegun\n"
MOTO_DEV = (
    "-e .[all,server]\n-r requirements-tests.txt\n\nblack==22.3.0\nflake8==4.0.1\n"
    "typing-extensions<=4.5.0; python_version < '3.8'\n"
)


def _reasons(found: RequirementFiles) -> list[tuple[str, int, str]]:
    return [(s.path, s.line, s.reason) for s in found.skipped]


def test_test_files_are_read_and_dev_files_only_without_them():
    files = {"requirements-tests.txt": MOTO_TESTS, "requirements-dev.txt": MOTO_DEV}
    found = read_test_requirements(files)
    assert found.files == ["requirements-tests.txt"]
    assert found.requirements == [
        "coverage",
        "pytest",
        "pytest-cov",
        "pytest-xdist",
        "surer",
        "freezegun",
    ]
    assert found.skipped == []
    # without a test file, the dev file and what it includes
    files = {"requirements-dev.txt": MOTO_DEV, "requirements/tests.txt": "surer\n"}
    assert requirement_files(files) == ["requirements/tests.txt"]
    dev = read_test_requirements({"requirements-dev.txt": MOTO_DEV, "tests.txt": MOTO_TESTS})
    assert dev.files == ["requirements-dev.txt"]
    assert dev.requirements == ["black==22.3.0", "flake8==4.0.1"]
    assert _reasons(dev) == [
        ("requirements-dev.txt", 1, "requirements.editable"),
        ("requirements-dev.txt", 2, "requirements.include-missing"),
        ("requirements-dev.txt", 6, "requirements.marker-false"),
    ]


def test_includes_stay_inside_the_checkout_and_cycles_end():
    files = {
        "requirements/test.txt": "-r base.txt\n--requirement=../requirements-extra.txt\n"
        "-r ../../outside.txt\n-r /etc/passwd\n-r https://example.com/r.txt\nmock\n",
        "requirements/base.txt": "attrs>=20  # comment\n-r test.txt\n",
        "requirements-extra.txt": "hypothesis\n",
    }
    found = read_test_requirements(files)
    assert found.files == [
        "requirements/test.txt",
        "requirements/base.txt",
        "requirements-extra.txt",
    ]
    assert found.requirements == ["attrs>=20", "hypothesis", "mock"]
    assert _reasons(found) == [
        ("requirements/test.txt", 3, "requirements.include-outside"),
        ("requirements/test.txt", 4, "requirements.include-outside"),
        ("requirements/test.txt", 5, "requirements.include-outside"),
    ]


def test_only_plain_requirement_lines_are_kept():
    text = (
        "# tools for the tests\n"
        "pytest-cov \\\n    >=2.0\n"
        "requests[socks]>=2; python_version >= '3'\n"
        "-e git+https://github.com/o/p.git#egg=p\n"
        "--editable .\n"
        "git+https://github.com/o/p.git\n"
        "p @ https://example.com/p-1.0.tar.gz\n"
        "./vendor/pkg\n"
        "dist/p-1.0-py3-none-any.whl\n"
        "p-1.0.tar.gz\n"
        "--index-url https://mirror.example/simple\n"
        "-c constraints.txt\n"
        "six==1.16 --hash=sha256:abcd\n"
        "not a requirement !!\n"
    )
    found = read_test_requirements({"test-requirements.txt": text})
    assert found.requirements == ["pytest-cov>=2.0", "requests[socks]>=2"]
    assert [s.reason.removeprefix("requirements.") for s in found.skipped] == [
        "editable",
        "editable",
        "url",
        "url",
        "path",
        "path",
        "path",
        "option",
        "option",
        "option",
        "invalid",
    ]
    assert [s.line for s in found.skipped][:2] == [5, 6]  # numbered by the first line


def test_skipped_lines_are_written_beside_the_wheels():
    def fetch(names, prior_to=None, skip=frozenset()):
        return {"wheels.txt": b"uploaded-prior-to: none\n", "a.whl": b"x"}

    files = {"requirements-dev.txt": MOTO_DEV}
    wheels = fetch_with_test_files(
        fetch, [], files, base_image="img", skip=frozenset(), prior_to=None
    )
    listing = wheels["wheels.txt"].decode()
    assert "requirements files: requirements-dev.txt\n" in listing
    assert "skipped requirements-dev.txt:1 requirements.editable: -e .[all,server]" in listing
    assert (
        fetch_with_test_files(
            lambda names, **_: {}, [], files, base_image="img", skip=frozenset(), prior_to=None
        )
        == {}
    )  # no wheels, no listing


def test_file_pins_resolve_with_dependencies_and_a_conflict_drops_only_the_files():
    """astroid's requirements_test.txt pins linters and `types-pkg_resources==0.1.3`,
    which the index may lack: the task keeps what it had before the files were read."""
    asked: list[list[str]] = []

    def fetch(names, prior_to=None, skip=frozenset()):
        asked.append(list(names))
        if any(n.startswith("black") for n in names):
            raise DependencyError("No matching distribution found for black<=22.3.0,>=22.3.0")
        return {"wrapt-1.whl": b"x", "wheels.txt": b"note\n"}

    files = {"requirements_test.txt": "black==22.3.0\npytest\nastroid-own\n"}
    wheels = fetch_with_test_files(
        fetch,
        ["wrapt<2"],
        files,
        base_image="img",
        skip=frozenset({"pytest", "astroid-own"}),
        prior_to="2022-06-01",
    )
    # `==` is not the run-pin form; pytest and the checkout's own project never asked
    # no pytest plugin asked for: no verifier bounds (they would add pytest's own deps)
    assert asked[0] == ["wrapt<2", "black<=22.3.0,>=22.3.0"]
    assert asked[1] == ["wrapt<2"]
    assert b"requirements files not installed" in wheels["wheels.txt"]
    assert b"No matching distribution found for black" in wheels["wheels.txt"]
    # without file lines, pip's error is the task's own refusal, as before
    with pytest.raises(DependencyError):
        fetch_with_test_files(
            fetch, ["black==1"], {}, base_image="img", skip=frozenset(), prior_to=None
        )


def test_an_instance_image_gets_the_requirements_file(tmp_path, monkeypatch):
    """moto-6387 scored 0 with its own fix: `sure` (package `surer`) was in no image."""
    from tests.mining.test_instance_repair import _events

    path = tmp_path / "calc"
    repository = git.Repo.init(path)
    for rel, text in {
        "calc.py": CALC_BUGGY,
        "test_calc.py": TESTS,
        "requirements-tests.txt": MOTO_TESTS,
    }.items():
        (path / rel).write_text(text)
    repository.index.add(["calc.py", "test_calc.py", "requirements-tests.txt"])
    actor = git.Actor("t", "t@example.com")
    commit = repository.index.commit("start", author=actor, committer=actor).hexsha
    asked: list[list[str]] = []

    def fake_fetch(names, prior_to=None, skip=frozenset()):
        asked.append(list(names))
        return {"surer-2.0.0-py3-none-any.whl": b"zip", "wheels.txt": b"note\n"}

    monkeypatch.setattr(instance_wheels, "fetch_wheels", fake_fetch)
    [draft] = _events(tmp_path, path, commit)
    assert isinstance(draft, Draft)
    # pytest is the verifier's own: never a wheel, but what the plugins resolve with
    assert asked == [
        ["coverage", "pytest-cov", "pytest-xdist", "surer", "freezegun", "pytest<=8.3.4"]
    ]
    files = {f.path: f.content for f in draft.bundle.files}
    assert b"requirements files: requirements-tests.txt" in files["environment/wheels.txt"]


def test_plugins_resolve_with_the_verifiers_pytest():
    """Not `==` (fetch_wheels fetches `==` lines apart, without dependencies)."""
    from repo2rlenv.settings import OFFLINE_BASE_IMAGE

    assert verifier_bounds(OFFLINE_BASE_IMAGE) == ["pytest<=7.2.1", "pluggy<=1.0.0"]
    assert verifier_bounds("python:3.12") == ["pytest<=8.3.4"]
    assert not any("==" in line for line in verifier_bounds(OFFLINE_BASE_IMAGE))


def test_coverage_upload_tools_are_left_out_and_listed():
    """matplotlib 3.0's travis_all.txt lists `codecov`, which the index no longer
    serves (the image build stopped on it): upload tools are left out with their own
    reason, and only those (coverage itself, and pytest-cov, stay)."""
    text = "codecov\ncoverage\nCodeCov>=2.0\npython-coveralls\npytest-cov\ncoveralls==3.0\n"
    found = read_test_requirements({"requirements/testing/travis_all.txt": text})
    assert found.requirements == ["coverage", "pytest-cov"]
    assert [(s.line, s.reason) for s in found.skipped] == [
        (1, "requirements.coverage-upload"),
        (3, "requirements.coverage-upload"),
        (4, "requirements.coverage-upload"),
        (6, "requirements.coverage-upload"),
    ]
